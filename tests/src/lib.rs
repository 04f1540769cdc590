//! Shared helpers for the workspace tests: where the test vectors live and how to read them.

use std::path::{Path, PathBuf};

/// The README's Rust examples, compiled and run as doctests so they cannot rot.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The workspace root (the parent of this crate's folder).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits inside the workspace")
        .to_path_buf()
}

/// The folder of external test vectors: `$QUERY_VECTORS`, or `../shared/vectors` beside the
/// workspace.
///
/// When it is absent, tests that need it print why and skip by getting `None`; under `CI=true`
/// its absence fails the run instead, so CI never passes by skipping.
pub fn vectors_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("QUERY_VECTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("../shared/vectors"));
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "test vectors not found at {} (set QUERY_VECTORS); CI=true requires them",
            dir.display()
        );
    }
    eprintln!(
        "skipping: test vectors not found at {} (set QUERY_VECTORS to run this test)",
        dir.display()
    );
    None
}

/// Parses lowercase hex bytes separated by white space, the format of the `.hex` vectors.
pub fn parse_hex(text: &str) -> Vec<u8> {
    text.split_whitespace()
        .map(|pair| {
            u8::from_str_radix(pair, 16).unwrap_or_else(|_| panic!("bad hex byte {pair:?}"))
        })
        .collect()
}

/// Reads a `.hex` file.
pub fn read_hex(path: impl AsRef<Path>) -> Vec<u8> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    parse_hex(&text)
}

/// Reads a `.hex` fixture from `specs/fixtures/`, e.g. `fixture_hex("sqp/sqp_query_request.hex")`.
pub fn fixture_hex(relative: &str) -> Vec<u8> {
    read_hex(workspace_root().join("specs/fixtures").join(relative))
}

/// The separator between datagrams in the capture files; not part of the wire data.
pub const CAPTURE_SEPARATOR: &[u8] = b"\n||\n";

/// Reads a capture from `captures/` in the vectors folder and splits it into its datagrams;
/// `None` when the vectors folder is absent (see [`vectors_dir`]).
pub fn read_capture(name: &str) -> Option<Vec<Vec<u8>>> {
    let path = vectors_dir()?.join("captures").join(name);
    let data =
        std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    Some(split_datagrams(&data))
}

/// Splits a capture file's bytes at [`CAPTURE_SEPARATOR`]; an empty file holds no datagrams.
pub fn split_datagrams(data: &[u8]) -> Vec<Vec<u8>> {
    if data.is_empty() {
        return Vec::new();
    }
    let mut parts = Vec::new();
    let mut rest = data;
    while let Some(at) = rest
        .windows(CAPTURE_SEPARATOR.len())
        .position(|w| w == CAPTURE_SEPARATOR)
    {
        parts.push(rest[..at].to_vec());
        rest = &rest[at + CAPTURE_SEPARATOR.len()..];
    }
    parts.push(rest.to_vec());
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_the_separator_only() {
        let parts = split_datagrams(b"ab\n||\ncd\n|x\n||\ne");
        assert_eq!(parts, [b"ab".to_vec(), b"cd\n|x".to_vec(), b"e".to_vec()]);
        assert!(split_datagrams(b"").is_empty());
    }

    #[test]
    fn hex_parses_whitespace_separated_pairs() {
        assert_eq!(parse_hex("00 ff\n1a"), [0x00, 0xff, 0x1a]);
    }
}
