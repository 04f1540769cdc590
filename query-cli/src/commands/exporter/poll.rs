//! The exporter's background polling of a target list.
//!
//! Rounds run one after another through query-net's bulk engine: a round queries every target
//! once, and the next starts `--interval` after it ended, so no target ever has two queries in
//! flight, however slow it is. Each result replaces that target's latest as soon as it
//! arrives; `/metrics` shows the latest of every target.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use query_games::plan::{Choice, Ports};
use query_net::bulk::BulkConfig;
use query_net::QueryError;

use super::metrics::{Outcome, Verdict};
use super::App;
use crate::address::HostPort;
use crate::exit::{Failure, Outcome as CommandOutcome};
use crate::target::{at, bulk_first, minecraft_srv, summarize, Answer, BulkTarget};
use crate::target_line::{self, BadLine};

/// A line of the target list.
#[derive(Debug, Clone)]
pub struct Target {
    choice: Choice,
    /// As written, the `target` label of its metrics.
    text: String,
    address: HostPort,
}

/// A target's latest result.
#[derive(Debug, Clone)]
pub struct Latest {
    /// The target's protocol, game or `auto` as the list names it; the protocol that
    /// answered once one did.
    pub protocol: String,
    /// The game that answered, if one is named.
    pub game: Option<&'static str>,
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
                protocol: t.choice.to_string(),
                game: t.choice.game().map(|g| g.id.as_str()),
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
                choice: parsed.choice,
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
    let mut planned: Vec<BulkTarget<usize>> = Vec::with_capacity(targets.len());
    let mut unresolved: Vec<(usize, QueryError)> = Vec::new();
    for (index, target) in targets.iter().enumerate() {
        let served_at = minecraft_srv(target.choice, &target.address, None).await;
        let ports = Ports {
            given: served_at.port(),
            query: None,
        };
        let attempts = match target.choice.attempts(ports) {
            Ok(attempts) => attempts,
            Err(e) => {
                unresolved.push((index, QueryError::protocol(e.to_string())));
                continue;
            }
        };
        let first = attempts.first().map_or(0, |a| a.port);
        match served_at.resolve(first).await {
            Ok(address) => planned.push(BulkTarget {
                tag: index,
                choice: target.choice,
                host: target.address.host(),
                attempts: at(address.ip(), attempts),
            }),
            Err(e) => unresolved.push((index, e)),
        }
    }
    for (index, error) in unresolved {
        store(app, targets, index, Err(error));
    }
    let config = BulkConfig {
        concurrency: 256,
        ..BulkConfig::default()
    };
    let results = bulk_first(
        futures_util::stream::iter(planned),
        app.options.clone(),
        app.memory.clone(),
        config,
    );
    let mut results = Box::pin(results);
    while let Some((index, result)) = results.next().await {
        let result = result.map_err(|mut failures| match failures.len() {
            1 => failures.remove(0).error,
            _ => QueryError::protocol(summarize(&failures).1),
        });
        store(app, targets, index, result);
    }
}

/// Counts a target's result and makes it its latest.
fn store(app: &App, targets: &[Target], index: usize, result: Result<Answer, QueryError>) {
    let (protocol, game) = match &result {
        Ok(answer) => (answer.status.protocol.to_string(), answer.game),
        Err(_) => (
            targets[index].choice.to_string(),
            targets[index].choice.game().map(|g| g.id.as_str()),
        ),
    };
    let result = result.map(|answer| answer.status);
    app.metrics
        .count(&protocol, Verdict::of(&result), result.as_ref().err(), true);
    let outcome = Outcome {
        result: result.map_err(|e| e.to_string()),
        duration: None,
    };
    if let Ok(mut latest) = app.polled.lock() {
        let latest = &mut latest[index];
        latest.outcome = Some(outcome);
        latest.protocol = protocol;
        latest.game = game;
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
        assert_eq!(
            targets[1].choice,
            Choice::Protocol(query_net::Protocol::Samp)
        );
        assert_eq!(targets[1].text, "example.org");
        let (targets, bad) = parse_targets("sqp 127.0.0.1\nquake9 x\n127.0.0.1:1\nsamp h\n");
        assert_eq!(targets.len(), 2, "the good lines around bad ones are kept");
        assert_eq!(bad.len(), 2);
        assert_eq!(bad[0].0, 2);
        assert!(bad[0].1.failure.to_string().contains("quake9"));
        assert_eq!(bad[1].0, 3);
        let (targets, bad) = parse_targets("auto 127.0.0.1\nrust 127.0.0.1:28015\n");
        assert!(bad.is_empty());
        assert_eq!(targets[0].choice, Choice::Auto);
        assert_eq!(targets[1].choice.game().unwrap().id, "rust");
    }
}
