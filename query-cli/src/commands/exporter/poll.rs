//! The exporter's background polling of a target list.
//!
//! Rounds run one after another through query-net's bulk engine: a round queries every target
//! once, and the next starts `--interval` after it ended, so no target ever has two queries in
//! flight, however slow it is. Each result replaces that target's latest as soon as it
//! arrives; `/metrics` shows the latest of every target.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use query_net::bulk::{bulk, BulkConfig};
use query_net::{engines, Protocol, QueryError};

use super::metrics::{Outcome, Verdict};
use super::App;
use crate::address::HostPort;
use crate::exit::{Failure, Outcome as CommandOutcome};
use crate::target_line::{self, BadLine};

/// A line of the target list.
#[derive(Debug, Clone)]
pub struct Target {
    protocol: Protocol,
    /// As written, the `target` label of its metrics.
    text: String,
    address: HostPort,
}

/// A target's latest result.
#[derive(Debug, Clone)]
pub struct Latest {
    /// The target's protocol.
    pub protocol: Protocol,
    /// The target as written in the list.
    pub target: String,
    /// The latest result; `None` until the first query of it ends.
    pub outcome: Option<Outcome>,
}

impl Latest {
    /// No result yet for each of `targets`.
    pub fn for_targets(targets: &[Target]) -> Vec<Latest> {
        targets
            .iter()
            .map(|t| Latest {
                protocol: t.protocol,
                target: t.text.clone(),
                outcome: None,
            })
            .collect()
    }
}

/// Reads a target list in `gsq bulk`'s format and with its tolerance: `<protocol>
/// <host[:port]>` per line, blank lines and `#` comments skipped; a line that does not parse
/// is logged with its number and reason, and skipped (the count is returned, for the
/// `gsq_exporter_skipped_target_lines` metric), so one typo does not take every other
/// server off the graphs. Only a file that cannot be read stops the exporter.
pub fn read_targets(path: &Path) -> CommandOutcome<(Vec<Target>, usize)> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Failure::usage(format!("cannot read {}: {e}", path.display())).hint("check the file name")
    })?;
    let (targets, bad) = parse_targets(&text);
    for (line, bad) in &bad {
        tracing::warn!(
            "{}:{line}: skipped {:?}: {}",
            path.display(),
            bad.target,
            bad.failure
        );
    }
    Ok((targets, bad.len()))
}

/// The targets of a list, and its bad lines with their numbers.
fn parse_targets(text: &str) -> (Vec<Target>, Vec<(usize, BadLine)>) {
    let mut targets = Vec::new();
    let mut bad = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if !target_line::is_target_line(line) {
            continue;
        }
        match target_line::parse(line, None) {
            Ok(parsed) => targets.push(Target {
                protocol: parsed.protocol,
                text: parsed.target,
                address: parsed.address,
            }),
            Err(why) => bad.push((index + 1, why)),
        }
    }
    (targets, bad)
}

/// Polls `targets` forever, a round at a time, `interval` apart.
pub async fn run(targets: Vec<Target>, interval: Duration, app: Arc<App>) {
    loop {
        round(&targets, &app).await;
        app.metrics.round_done();
        tokio::time::sleep(interval).await;
    }
}

/// Queries every target once; each result is stored as it arrives.
async fn round(targets: &[Target], app: &Arc<App>) {
    // Names are looked up every round: a server that moves is followed.
    let mut resolved: Vec<(usize, Result<SocketAddr, QueryError>)> = Vec::new();
    for (index, target) in targets.iter().enumerate() {
        let address = target.address.resolve(target.protocol.default_port()).await;
        resolved.push((index, address));
    }
    let options = app.options.clone();
    let protocols: Vec<Protocol> = targets.iter().map(|t| t.protocol).collect();
    let memory = app.memory.clone();
    let mut results = bulk(
        futures_util::stream::iter(resolved),
        move |(index, address): &(usize, Result<SocketAddr, QueryError>)| match address {
            Ok(address) => engines::new_session_learning(
                protocols[*index],
                *address,
                &options,
                &memory.of(*address),
            ),
            Err(e) => Err(QueryError::protocol(e.to_string())),
        },
        BulkConfig {
            concurrency: 256,
            ..BulkConfig::default()
        },
    );
    while let Some(done) = results.next().await {
        let (index, _) = done.target;
        let protocol = targets[index].protocol;
        app.metrics.count(
            protocol,
            Verdict::of(&done.result),
            done.result.as_ref().err(),
            true,
        );
        let outcome = Outcome {
            result: done.result.map_err(|e| e.to_string()),
            duration: None,
        };
        if let Ok(mut latest) = app.polled.lock() {
            latest[index].outcome = Some(outcome);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_bulk_format_and_a_bad_line_is_skipped_with_its_number() {
        let (targets, bad) = parse_targets("# servers\n\nsqp 127.0.0.1:7779\n samp example.org\n");
        assert_eq!(targets.len(), 2);
        assert!(bad.is_empty());
        assert_eq!(targets[1].protocol, Protocol::Samp);
        assert_eq!(targets[1].text, "example.org");
        let (targets, bad) = parse_targets("sqp 127.0.0.1\nquake9 x\n127.0.0.1:1\nsamp h\n");
        assert_eq!(targets.len(), 2, "the good lines around bad ones are kept");
        assert_eq!(bad.len(), 2);
        assert_eq!(bad[0].0, 2);
        assert!(bad[0].1.failure.to_string().contains("quake9"));
        assert_eq!(bad[1].0, 3);
    }
}
