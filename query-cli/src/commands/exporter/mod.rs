//! `gsq exporter`: Prometheus metrics of game servers.
//!
//! Two ways, as Prometheus exporters do it:
//! - `/probe?protocol=P&target=HOST[:PORT]`, the multi-target pattern of the blackbox exporter:
//!   each scrape queries one server now and returns its metrics, with the target list in
//!   Prometheus's own configuration.
//! - `/metrics`: the exporter's own counters and, with `--targets`, the latest result of every
//!   target of a list polled in the background ([`poll`]).
//!
//! Safe to expose: probes are bounded in number and in time (a scrape never waits past its
//! timeout header), bad parameters get a 400 with one line saying why, and `--allow` limits
//! which addresses a probe may query.

mod metrics;
mod poll;

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use ipnet::IpNet;
use prometheus_client::encoding::text::encode_registry;
use prometheus_client::registry::Registry;
use query_games::plan::{game_named, Choice, Ports};
use query_net::learned::ServerMemory;
use query_net::{Options, QueryError};
use tokio::sync::Semaphore;

use crate::address::HostPort;
use crate::cli::ExporterArgs;
use crate::exit::{Category, Failure, Outcome};
use crate::target::{first_answer, summarize, Answer};
use metrics::{record_results, ExporterMetrics, Labels, Outcome as QueryOutcome, Verdict};

/// The content type of the text prometheus-client writes.
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// What a probe takes off the scrape's timeout, to answer before Prometheus gives up.
const TIMEOUT_OFFSET: Duration = Duration::from_millis(500);

/// Shared by every request.
#[derive(Debug)]
struct App {
    options: Options,
    allow: Vec<IpNet>,
    probe_timeout: Duration,
    slots: Semaphore,
    own: Registry,
    metrics: ExporterMetrics,
    /// The polled targets' latest results, in list order.
    polled: Arc<Mutex<Vec<poll::Latest>>>,
    /// What queries learned about each target (polled or probed), for its next query.
    memory: ServerMemory,
}

/// Runs `gsq exporter` until interrupted.
pub async fn run(args: ExporterArgs) -> Outcome {
    let options = args.client.options()?;
    let (targets, skipped) = match &args.targets {
        Some(path) => poll::read_targets(path)?,
        None => (Vec::new(), 0),
    };
    let mut own = Registry::default();
    let metrics = ExporterMetrics::register(&mut own);
    metrics.skipped_lines(skipped);
    let polled = Arc::new(Mutex::new(poll::Latest::for_targets(&targets)));
    let app = Arc::new(App {
        options,
        allow: args.allow,
        probe_timeout: args.probe_timeout,
        slots: Semaphore::new(args.max_probes as usize),
        own,
        metrics,
        polled: Arc::clone(&polled),
        memory: ServerMemory::new(),
    });
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|e| {
            Failure::new(
                Category::Network,
                format!("cannot listen on {}: {e}", args.listen),
            )
        })?;
    let bound = listener.local_addr().map_err(|e| {
        Failure::new(
            Category::Network,
            format!("cannot read the bound address: {e}"),
        )
    })?;
    // The bound address on stdout, as `gsq serve` does, so port 0 works in scripts.
    crate::output::print_line(&format!("exporter http://{bound}"))?;
    tracing::info!("exporter listening on http://{bound}");

    if !targets.is_empty() {
        let app = Arc::clone(&app);
        let interval = args.interval;
        tokio::spawn(async move { poll::run(targets, interval, app).await });
    }
    let router = Router::new()
        .route("/probe", get(probe))
        .route("/metrics", get(own_metrics))
        .route("/", get(index))
        .with_state(app);
    axum::serve(listener, router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| Failure::new(Category::Network, format!("the HTTP server failed: {e}")))
}

async fn index() -> &'static str {
    "gsq exporter: /probe?protocol=P&target=HOST[:PORT], /metrics\n"
}

/// A refusal: the status and one line saying why.
fn refuse(status: StatusCode, reason: impl Into<String>) -> Response {
    (status, format!("{}\n", reason.into())).into_response()
}

fn metrics_text(text: String) -> Response {
    ([(header::CONTENT_TYPE, OPENMETRICS)], text).into_response()
}

/// How long a probe may take: the scrape's timeout less an offset (but at least half of it),
/// or `--probe-timeout` when the scrape says nothing; never more than `--probe-timeout`.
fn probe_deadline(headers: &HeaderMap, probe_timeout: Duration) -> Duration {
    let scrape = headers
        .get("x-prometheus-scrape-timeout-seconds")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map(Duration::from_secs_f64);
    match scrape {
        Some(scrape) => scrape
            .saturating_sub(TIMEOUT_OFFSET)
            .max(scrape / 2)
            .min(probe_timeout),
        None => probe_timeout,
    }
}

/// What a probe asks for: a game, protocol or `auto`, its target, and an exact query port.
#[derive(Debug)]
struct ProbeParams {
    choice: Choice,
    target: HostPort,
    query_port: Option<u16>,
}

/// The game (`game=`, or a game id in `protocol=`), protocol or `auto` of a probe, its target
/// and `query_port`, or the reason they are unusable.
fn probe_params(params: &HashMap<String, String>) -> Result<ProbeParams, String> {
    let named = match (params.get("protocol"), params.get("game")) {
        (Some(_), Some(_)) => return Err("give 'protocol' or 'game', not both".to_owned()),
        (Some(name), None) | (None, Some(name)) => name,
        (None, None) => return Err(
            "missing parameter 'protocol' (a protocol, or auto) or 'game' (an id of 'gsq games')"
                .to_owned(),
        ),
    };
    let choice = if params.contains_key("game") {
        match game_named(named) {
            Ok(game) => Choice::Game(game),
            Err(e) if e.waiting.is_some() => return Err(e.to_string()),
            Err(_) => {
                return Err(format!(
                    "'{named}' is not a game id ('gsq games' lists them); a protocol goes in protocol={named}"
                ))
            }
        }
    } else {
        named.parse().map_err(|e| format!("{e}"))?
    };
    let target = params
        .get("target")
        .ok_or("missing parameter 'target' (HOST or HOST:PORT)")?;
    let target: HostPort = target.parse().map_err(|e: crate::address::BadAddress| {
        format!("bad target '{target}': {}", e.reason())
    })?;
    let query_port = params
        .get("query_port")
        .map(|p| {
            p.parse::<u16>()
                .ok()
                .filter(|p| *p != 0)
                .ok_or_else(|| format!("bad query_port '{p}': expected 1-65535"))
        })
        .transpose()?;
    Ok(ProbeParams {
        choice,
        target,
        query_port,
    })
}

fn allowed(allow: &[IpNet], ip: IpAddr) -> bool {
    allow.is_empty() || allow.iter().any(|net| net.contains(&ip))
}

async fn probe(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    let started = Instant::now();
    let deadline = probe_deadline(&headers, app.probe_timeout);
    let ProbeParams {
        choice,
        target,
        query_port,
    } = match probe_params(&params) {
        Ok(parsed) => parsed,
        Err(reason) => {
            app.metrics.refuse("bad_request");
            return refuse(StatusCode::BAD_REQUEST, reason);
        }
    };
    let ports = Ports {
        given: target.port(),
        query: query_port,
    };
    let attempts = match choice.attempts(ports) {
        Ok(attempts) if !attempts.is_empty() => attempts,
        Ok(_) => return refuse(StatusCode::BAD_REQUEST, "nothing to query"),
        Err(e) => {
            app.metrics.refuse("bad_request");
            return refuse(StatusCode::BAD_REQUEST, e.to_string());
        }
    };
    let label = choice.to_string();
    let lookup = target.resolve(attempts[0].port);
    let address = match tokio::time::timeout(deadline, lookup).await {
        Ok(Ok(address)) => address,
        Ok(Err(error)) => return answer(&app, &label, Err(error), started),
        Err(_) => return answer(&app, &label, Err(timed_out(deadline)), started),
    };
    if !allowed(&app.allow, address.ip()) {
        app.metrics.refuse("forbidden");
        return refuse(
            StatusCode::FORBIDDEN,
            format!(
                "target {target} ({}) is not in the exporter's --allow list",
                address.ip()
            ),
        );
    }
    let remaining = deadline.saturating_sub(started.elapsed());
    let Ok(Ok(_slot)) = tokio::time::timeout(remaining, app.slots.acquire()).await else {
        app.metrics.refuse("busy");
        return refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many probes in flight; raise --max-probes or scrape less often",
        );
    };
    let _in_flight = app.metrics.in_flight();
    let remaining = deadline.saturating_sub(started.elapsed());
    let host = target.host();
    let query = first_answer(
        choice,
        &host,
        address.ip(),
        &attempts,
        &app.options,
        &app.memory,
    );
    let result = match tokio::time::timeout(remaining, query).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(mut failures)) if failures.len() == 1 => Err(failures.remove(0).error),
        Ok(Err(failures)) => Err(QueryError::protocol(summarize(&failures).1)),
        Err(_) => Err(timed_out(deadline)),
    };
    answer(&app, &label, result, started)
}

/// The error of a probe that ran out of time.
fn timed_out(deadline: Duration) -> QueryError {
    QueryError::Timeout {
        waiting_for: "query before the scrape's deadline",
        attempts: 1,
        after: deadline,
    }
}

/// The probe's metrics, counted in the exporter's own.
fn answer(
    app: &App,
    asked: &str,
    result: Result<Answer, QueryError>,
    started: Instant,
) -> Response {
    // By the protocol that answered; by what was asked (a game, auto) when none did.
    let label = match &result {
        Ok(answer) => answer.status.protocol.to_string(),
        Err(_) => asked.to_owned(),
    };
    let game = result.as_ref().ok().and_then(|a| a.game);
    let result = result.map(|answer| answer.status);
    app.metrics
        .count(&label, Verdict::of(&result), result.as_ref().err(), false);
    let outcome = QueryOutcome {
        result: result.map_err(|e| e.to_string()),
        duration: Some(started.elapsed()),
    };
    let mut registry = Registry::default();
    let labels: Labels = game
        .map(|game| vec![("game", game.to_owned())])
        .unwrap_or_default();
    record_results(&mut registry, [(labels, &outcome)]);
    let mut text = String::new();
    match prometheus_client::encoding::text::encode(&mut text, &registry) {
        Ok(()) => metrics_text(text),
        Err(e) => refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot encode metrics: {e}"),
        ),
    }
}

/// `/metrics`: the exporter's own metrics, then the polled targets' latest results.
async fn own_metrics(State(app): State<Arc<App>>) -> Response {
    let latest = app.polled.lock().map(|l| l.clone()).unwrap_or_default();
    let mut targets = Registry::default();
    record_results(
        &mut targets,
        latest.iter().filter_map(|l| {
            l.outcome.as_ref().map(|outcome| {
                let mut labels = vec![
                    ("protocol", l.protocol.clone()),
                    ("target", l.target.clone()),
                ];
                if let Some(game) = l.game {
                    labels.push(("game", game.to_owned()));
                }
                (labels, outcome)
            })
        }),
    );
    let mut text = String::new();
    let encoded = encode_registry(&mut text, &app.own)
        .and_then(|()| encode_registry(&mut text, &targets))
        .and_then(|()| prometheus_client::encoding::text::encode_eof(&mut text));
    match encoded {
        Ok(()) => metrics_text(text),
        Err(e) => refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot encode metrics: {e}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn the_deadline_follows_the_scrape_timeout() {
        let mut headers = HeaderMap::new();
        let cap = Duration::from_secs(10);
        assert_eq!(probe_deadline(&headers, cap), cap);
        headers.insert(
            "X-Prometheus-Scrape-Timeout-Seconds",
            HeaderValue::from_static("5"),
        );
        assert_eq!(probe_deadline(&headers, cap), Duration::from_millis(4500));
        headers.insert(
            "X-Prometheus-Scrape-Timeout-Seconds",
            HeaderValue::from_static("0.6"),
        );
        assert_eq!(probe_deadline(&headers, cap), Duration::from_millis(300));
        headers.insert(
            "X-Prometheus-Scrape-Timeout-Seconds",
            HeaderValue::from_static("60"),
        );
        assert_eq!(probe_deadline(&headers, cap), cap);
        headers.insert(
            "X-Prometheus-Scrape-Timeout-Seconds",
            HeaderValue::from_static("nan"),
        );
        assert_eq!(probe_deadline(&headers, cap), cap);
    }

    #[test]
    fn parameters_are_checked_with_a_reason() {
        let params = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<HashMap<_, _>>()
        };
        assert!(probe_params(&params(&[
            ("protocol", "samp"),
            ("target", "a.example:7777")
        ]))
        .is_ok());
        for (key, value) in [
            ("protocol", "auto"),
            ("protocol", "rust"),
            ("game", "arkse"),
        ] {
            let parsed = probe_params(&params(&[(key, value), ("target", "a.example")]));
            assert!(parsed.is_ok(), "{key}={value}: {parsed:?}");
        }
        let parsed = probe_params(&params(&[
            ("game", "rust"),
            ("target", "a.example:28015"),
            ("query_port", "28017"),
        ]))
        .unwrap();
        assert_eq!(parsed.query_port, Some(28017));
        let err = probe_params(&params(&[("game", "sqp"), ("target", "x")])).unwrap_err();
        assert!(err.contains("not a game id"), "{err}");
        let err = probe_params(&params(&[
            ("game", "rust"),
            ("protocol", "a2s"),
            ("target", "x"),
        ]))
        .unwrap_err();
        assert!(err.contains("not both"), "{err}");
        let err = probe_params(&params(&[
            ("game", "rust"),
            ("target", "x"),
            ("query_port", "0"),
        ]))
        .unwrap_err();
        assert!(err.contains("query_port"), "{err}");
        let err = probe_params(&params(&[("protocol", "quake9"), ("target", "x")])).unwrap_err();
        assert!(err.contains("quake9"), "{err}");
        let err =
            probe_params(&params(&[("protocol", "samp"), ("target", "x:99999")])).unwrap_err();
        assert!(err.contains("bad target"), "{err}");
        let err = probe_params(&params(&[("target", "x")])).unwrap_err();
        assert!(err.contains("protocol"), "{err}");
    }

    #[test]
    fn the_allow_list_holds_addresses_and_networks() {
        let allow: Vec<IpNet> = vec!["10.0.0.0/8".parse().unwrap(), "::1/128".parse().unwrap()];
        assert!(allowed(&allow, "10.1.2.3".parse().unwrap()));
        assert!(allowed(&allow, "::1".parse().unwrap()));
        assert!(!allowed(&allow, "192.0.2.1".parse().unwrap()));
        assert!(allowed(&[], "192.0.2.1".parse().unwrap()));
    }
}
