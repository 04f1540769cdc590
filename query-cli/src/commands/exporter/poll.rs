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
use crate::target::{at, bulk_first, summarize, Answer, BulkTarget};

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

/// Reads a target list in `gsq bulk`'s format: `<protocol> <host[:port]>` per line, blank
/// lines and `#` comments skipped. A line that does not parse is an error naming it: the list
/// is configuration, and a typo must not silently drop a server from the graphs.
pub fn read_targets(path: &Path) -> CommandOutcome<Vec<Target>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Failure::usage(format!("cannot read {}: {e}", path.display())).hint("check the file name")
    })?;
    parse_targets(&text).map_err(|(line, why)| {
        Failure::usage(format!("{}:{line}: {why}", path.display()))
            .hint("write '<protocol> <host[:port]>' per line, as gsq bulk reads them")
    })
}

fn parse_targets(text: &str) -> Result<Vec<Target>, (usize, String)> {
    let mut targets = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fail = |why: String| (index + 1, why);
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [choice, address] = fields.as_slice() else {
            return Err(fail(format!(
                "expected '<game|protocol|auto> <host[:port]>', got '{line}'"
            )));
        };
        let choice: Choice = choice.parse().map_err(|e| fail(format!("{e}")))?;
        let parsed: HostPort = address
            .parse()
            .map_err(|e: crate::address::BadAddress| fail(e.reason().to_owned()))?;
        targets.push(Target {
            choice,
            text: (*address).to_owned(),
            address: parsed,
        });
    }
    Ok(targets)
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
        let ports = Ports {
            given: target.address.port(),
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
        match target.address.resolve(first).await {
            Ok(address) => planned.push(BulkTarget {
                tag: index,
                choice: target.choice,
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
    fn the_list_is_bulk_format_and_a_bad_line_is_named() {
        let targets =
            parse_targets("# servers\n\nsqp 127.0.0.1:7779\n samp example.org\n").unwrap();
        assert_eq!(targets.len(), 2);
        assert_eq!(
            targets[1].choice,
            Choice::Protocol(query_net::Protocol::Samp)
        );
        assert_eq!(targets[1].text, "example.org");
        let (line, why) = parse_targets("sqp 127.0.0.1\nquake9 x\n").unwrap_err();
        assert_eq!(line, 2);
        assert!(why.contains("quake9"), "{why}");
        let (line, _) = parse_targets("127.0.0.1:1\n").unwrap_err();
        assert_eq!(line, 1);
        let targets = parse_targets("auto 127.0.0.1\nrust 127.0.0.1:28015\n").unwrap();
        assert_eq!(targets[0].choice, Choice::Auto);
        assert_eq!(targets[1].choice.game().unwrap().id, "rust");
    }
}
