//! The benchmarks' real replies: a capture file of the test vectors, split into its datagrams.

use std::path::PathBuf;

/// Between two datagrams in a capture file; not part of the wire data.
const SEPARATOR: &[u8] = b"\n||\n";

/// A capture's path and datagrams, `name` relative to the vectors folder (`$QUERY_VECTORS`,
/// or `../shared/vectors` beside the workspace); `None` without it, which `benchmark` (what
/// skips its work) says on stderr.
pub fn datagrams(name: &str, benchmark: &str) -> Option<(PathBuf, Vec<Vec<u8>>)> {
    let dir = std::env::var_os("QUERY_VECTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/vectors"));
    let path = dir.join(name);
    let data = match std::fs::read(&path) {
        Ok(data) => data,
        Err(e) => {
            eprintln!(
                "skipping {benchmark}: cannot read {} ({e}); set QUERY_VECTORS to the test \
                 vectors folder",
                path.display()
            );
            return None;
        }
    };
    let mut rest = &data[..];
    let mut datagrams = Vec::new();
    while let Some(at) = rest.windows(SEPARATOR.len()).position(|w| w == SEPARATOR) {
        datagrams.push(rest[..at].to_vec());
        rest = &rest[at + SEPARATOR.len()..];
    }
    datagrams.push(rest.to_vec());
    Some((path, datagrams))
}
