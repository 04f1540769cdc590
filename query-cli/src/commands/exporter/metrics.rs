//! The metrics the exporter serves, in Prometheus's naming: a `gsq_` prefix, units in the name
//! (`_seconds`), `_total` on counters. The text comes from prometheus-client.
//!
//! - [`record_result`]: a query's result as metrics, under the labels of its target (none for
//!   `/probe`, where Prometheus adds the instance; protocol and target for a polled list).
//! - [`ExporterMetrics`]: the exporter's own counters.

use std::sync::atomic::AtomicU64;
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use query_net::{Protocol, QueryError, ServerStatus};

use crate::exit::classify;

/// Label pairs; a target's own labels come first.
pub type Labels = Vec<(&'static str, String)>;

/// A gauge of float values.
type FloatGauge = Gauge<f64, AtomicU64>;

/// The longest label value, in characters: server names and maps are free text chosen by
/// whoever runs the server, and a long one must not bloat every series.
pub const MAX_LABEL_CHARS: usize = 64;

/// `text` cut to [`MAX_LABEL_CHARS`] characters, control characters made spaces, and escaped
/// for the exposition format (prometheus-client writes label values as they are, and a `"` in
/// a server's name would otherwise end the value).
pub fn label_value(text: &str) -> String {
    let mut value = String::with_capacity(text.len().min(MAX_LABEL_CHARS * 2));
    for c in text.chars().take(MAX_LABEL_CHARS) {
        match c {
            '\\' => value.push_str("\\\\"),
            '"' => value.push_str("\\\""),
            c if c.is_control() => value.push(' '),
            c => value.push(c),
        }
    }
    value
}

/// The families a query's result is recorded in.
#[derive(Debug, Default)]
struct StatusFamilies {
    up: Family<Labels, FloatGauge>,
    duration: Family<Labels, FloatGauge>,
    ping: Family<Labels, FloatGauge>,
    players: Family<Labels, FloatGauge>,
    max_players: Family<Labels, FloatGauge>,
    bots: Family<Labels, FloatGauge>,
    info: Family<Labels, FloatGauge>,
    password: Family<Labels, FloatGauge>,
    complete: Family<Labels, FloatGauge>,
    rules: Family<Labels, FloatGauge>,
    team_score: Family<Labels, FloatGauge>,
    sqp_metric: Family<Labels, FloatGauge>,
}

impl StatusFamilies {
    fn register(registry: &mut Registry) -> Self {
        let families = StatusFamilies::default();
        let mut add = |name: &str, help: &str, family: &Family<Labels, FloatGauge>| {
            registry.register(name, help, family.clone());
        };
        add(
            "gsq_up",
            "1 if the server answered the query, else 0",
            &families.up,
        );
        add(
            "gsq_probe_duration_seconds",
            "How long the query took, answered or not",
            &families.duration,
        );
        add(
            "gsq_ping_seconds",
            "Round-trip time of the query's fastest exchange",
            &families.ping,
        );
        add(
            "gsq_players",
            "Players the server reports",
            &families.players,
        );
        add("gsq_max_players", "Player slots", &families.max_players);
        add(
            "gsq_bots",
            "Bots among the players, where the protocol says",
            &families.bots,
        );
        add(
            "gsq_server_info",
            "Always 1; the labels carry the server's name, map, game type and version",
            &families.info,
        );
        add(
            "gsq_password_protected",
            "1 if joining needs a password, where the protocol says",
            &families.password,
        );
        add(
            "gsq_status_complete",
            "1 if every part of the reply arrived and the player list is whole",
            &families.complete,
        );
        add(
            "gsq_rules",
            "Server rules (key/values) reported",
            &families.rules,
        );
        add(
            "gsq_team_score",
            "Score of each team, where the protocol has teams",
            &families.team_score,
        );
        add(
            "gsq_sqp_metric",
            "SQP Metrics chunk values, by index",
            &families.sqp_metric,
        );
        families
    }
}

/// One query's outcome, ready to be recorded.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The status, or why there is none.
    pub result: Result<ServerStatus, String>,
    /// How long the query took, where it was timed alone (a probe; not a query of a polled
    /// list, which shares its sockets and time with the others).
    pub duration: Option<Duration>,
}

/// Registers the status families in `registry` and records `outcomes`, each under its labels.
pub fn record_results<'a>(
    registry: &mut Registry,
    outcomes: impl IntoIterator<Item = (Labels, &'a Outcome)>,
) {
    let families = StatusFamilies::register(registry);
    for (labels, outcome) in outcomes {
        record_result(&families, &labels, outcome);
    }
}

fn record_result(f: &StatusFamilies, labels: &Labels, outcome: &Outcome) {
    let with = |extra: &[(&'static str, String)]| {
        let mut all = labels.clone();
        all.extend_from_slice(extra);
        all
    };
    let set = |family: &Family<Labels, FloatGauge>, labels: &Labels, value: f64| {
        family.get_or_create(labels).set(value);
    };
    if let Some(duration) = outcome.duration {
        set(&f.duration, labels, duration.as_secs_f64());
    }
    let status = match &outcome.result {
        Ok(status) => status,
        Err(_) => {
            set(&f.up, labels, 0.0);
            return;
        }
    };
    set(&f.up, labels, 1.0);
    set(&f.ping, labels, status.ping_ms / 1000.0);
    set(&f.players, labels, f64::from(status.num_players));
    set(&f.max_players, labels, f64::from(status.max_players));
    set(&f.complete, labels, if status.complete { 1.0 } else { 0.0 });
    set(&f.rules, labels, status.rules.len() as f64);
    if let Some(password) = status.password {
        set(&f.password, labels, if password { 1.0 } else { 0.0 });
    }
    if let Some(bots) = bots(status) {
        set(&f.bots, labels, bots);
    }
    let info = with(&[
        ("name", label_value(&status.name)),
        ("map", label_value(status.map.as_deref().unwrap_or(""))),
        (
            "game_type",
            label_value(status.game_type.as_deref().unwrap_or("")),
        ),
        (
            "version",
            label_value(status.version.as_deref().unwrap_or("")),
        ),
    ]);
    set(&f.info, &info, 1.0);
    for team in &status.teams {
        if let Some(score) = team.score {
            set(
                &f.team_score,
                &with(&[("team", label_value(&team.name))]),
                score as f64,
            );
        }
    }
    if status.protocol == Protocol::Sqp {
        let values = status.raw["metrics"]["values"].as_array();
        for (index, value) in values.into_iter().flatten().enumerate() {
            if let Some(value) = value.as_f64() {
                set(&f.sqp_metric, &with(&[("index", index.to_string())]), value);
            }
        }
    }
}

/// The bot count of a status, where the protocol reports one in `raw` or in the rules.
fn bots(status: &ServerStatus) -> Option<f64> {
    ["bots", "numbots", "num_bots"].iter().find_map(|key| {
        status.raw[*key]
            .as_f64()
            .or_else(|| status.rules.get(*key).and_then(|v| v.trim().parse().ok()))
    })
}

/// What a probe or poll came to, for the exporter's own counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The server answered.
    Success,
    /// No answer by the deadline.
    Timeout,
    /// Anything else: a malformed reply, a network or resolver error.
    Error,
}

impl Verdict {
    /// The verdict of a query's result.
    pub fn of(result: &Result<ServerStatus, QueryError>) -> Self {
        match result {
            Ok(_) => Verdict::Success,
            Err(QueryError::Timeout { .. }) => Verdict::Timeout,
            Err(_) => Verdict::Error,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Verdict::Success => "success",
            Verdict::Timeout => "timeout",
            Verdict::Error => "error",
        }
    }
}

/// The exporter's own metrics, on `/metrics`.
#[derive(Debug, Default)]
pub struct ExporterMetrics {
    probes: Family<Labels, Counter>,
    polls: Family<Labels, Counter>,
    errors: Family<Labels, Counter>,
    refused: Family<Labels, Counter>,
    in_flight: Gauge,
    poll_rounds: Counter,
}

impl ExporterMetrics {
    /// The metrics, registered in `registry`.
    pub fn register(registry: &mut Registry) -> Self {
        let metrics = ExporterMetrics::default();
        registry.register(
            "gsq_exporter_probes",
            "Probes served on /probe, by protocol and outcome (success, timeout, error)",
            metrics.probes.clone(),
        );
        registry.register(
            "gsq_exporter_polls",
            "Queries of the polled target list, by protocol and outcome",
            metrics.polls.clone(),
        );
        registry.register(
            "gsq_exporter_errors",
            "Failed queries, probes and polls alike, by kind of error",
            metrics.errors.clone(),
        );
        registry.register(
            "gsq_exporter_refused_probes",
            "Probes answered 400, 403 or 503 without a query, by reason",
            metrics.refused.clone(),
        );
        registry.register(
            "gsq_exporter_probes_in_flight",
            "Probes being answered now",
            metrics.in_flight.clone(),
        );
        registry.register(
            "gsq_exporter_poll_rounds",
            "Completed polls of the whole target list",
            metrics.poll_rounds.clone(),
        );
        metrics
    }

    /// Counts a finished probe (`polled` false) or poll, by `protocol`: the one that answered,
    /// else what was asked for (a game id, `auto`).
    pub fn count(
        &self,
        protocol: &str,
        verdict: Verdict,
        error: Option<&QueryError>,
        polled: bool,
    ) {
        let family = if polled { &self.polls } else { &self.probes };
        family
            .get_or_create(&vec![
                ("protocol", protocol.to_owned()),
                ("outcome", verdict.label().to_owned()),
            ])
            .inc();
        if let Some(error) = error {
            let kind = classify(error).0.name();
            self.errors
                .get_or_create(&vec![("kind", kind.to_owned())])
                .inc();
        }
    }

    /// Counts a probe refused before any query, for `reason` (`bad_request`, `forbidden`, `busy`).
    pub fn refuse(&self, reason: &'static str) {
        self.refused
            .get_or_create(&vec![("reason", reason.to_owned())])
            .inc();
    }

    /// Counts a completed round of polling.
    pub fn round_done(&self) {
        self.poll_rounds.inc();
    }

    /// The in-flight gauge, raised for as long as the guard lives.
    pub fn in_flight(&self) -> InFlight<'_> {
        self.in_flight.inc();
        InFlight(&self.in_flight)
    }
}

/// Lowers the in-flight gauge when dropped.
#[derive(Debug)]
pub struct InFlight<'a>(&'a Gauge);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_client::encoding::text::encode;
    use query_net::Team;

    fn status() -> ServerStatus {
        ServerStatus {
            protocol: Protocol::GameSpy1,
            address: "127.0.0.1:7778".parse().unwrap(),
            name: format!("Café \"Zoë\"\n{}", "x".repeat(200)),
            map: Some("dust".into()),
            game_type: None,
            version: Some("1.0".into()),
            num_players: 3,
            max_players: 16,
            password: Some(false),
            players: Vec::new(),
            teams: vec![Team {
                name: "Red".into(),
                score: Some(12),
                ..Team::default()
            }],
            rules: [("numbots".to_owned(), "2".to_owned())]
                .into_iter()
                .collect(),
            ping_ms: 12.5,
            complete: true,
            raw: serde_json::Value::Null,
        }
    }

    #[test]
    fn a_status_becomes_metrics_with_bounded_escaped_labels() {
        let mut registry = Registry::default();
        let outcome = Outcome {
            result: Ok(status()),
            duration: Some(Duration::from_millis(20)),
        };
        record_results(
            &mut registry,
            [(vec![("target", "a:1".to_owned())], &outcome)],
        );
        let mut text = String::new();
        encode(&mut text, &registry).unwrap();
        assert!(text.contains("gsq_up{target=\"a:1\"} 1.0"), "{text}");
        assert!(text.contains("gsq_players{target=\"a:1\"} 3.0"), "{text}");
        assert!(
            text.contains("gsq_ping_seconds{target=\"a:1\"} 0.0125"),
            "{text}"
        );
        assert!(text.contains("gsq_bots{target=\"a:1\"} 2.0"), "{text}");
        assert!(
            text.contains("gsq_team_score{target=\"a:1\",team=\"Red\"} 12.0"),
            "{text}"
        );
        assert!(
            text.contains("gsq_password_protected{target=\"a:1\"} 0.0"),
            "{text}"
        );
        let info = text
            .lines()
            .find(|l| l.starts_with("gsq_server_info{"))
            .unwrap();
        assert!(info.contains(r#"name="Café \"Zoë\" xxx"#), "{info}");
        assert_eq!(label_value("a\\b"), r"a\\b");
        assert!(info.len() < 200, "label values are bounded: {info}");
    }

    #[test]
    fn a_failed_query_is_up_0_with_its_duration_only() {
        let mut registry = Registry::default();
        let outcome = Outcome {
            result: Err("no reply".into()),
            duration: Some(Duration::from_secs(1)),
        };
        record_results(&mut registry, [(Labels::new(), &outcome)]);
        let mut text = String::new();
        encode(&mut text, &registry).unwrap();
        assert!(text.contains("gsq_up{} 0.0"), "{text}");
        assert!(text.contains("gsq_probe_duration_seconds{} 1.0"), "{text}");
        assert!(!text.contains("gsq_players{"), "{text}");
    }
}
