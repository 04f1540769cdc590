//! `gsq exporter` under a real Prometheus server (Debian's `prometheus` package): Prometheus
//! scrapes `/probe` for a `gsq serve --all` on loopback, blackbox style, and the series read
//! back through its HTTP API equal the served state; when the game server stops, `gsq_up`
//! turns 0. Also the exporter's own HTTP answers: 400s with a reason, the allow-list, and
//! `/metrics` with a polled target list.
//!
//! Without a `prometheus` binary the Prometheus test says so and skips, except under
//! `CI=true`, where `.ci/run` installs it and its absence fails the run.

mod cli_support;

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use cli_support::{gsq_path, poll, Server, StateDir};

const STATE: &str = r#"
name = "Prom \"Test\" Server"
map = "dust2"
game_type = "ctf"
version = "1.4"
max_players = 24

[[players]]
name = "Ana"
score = 3

[[players]]
name = "Bo"
score = 1

[[players]]
name = "Cy"
score = 7
"#;

/// A child process killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `gsq exporter` with `args` on a free port; returns it and its base URL.
fn exporter(args: &[&str]) -> (Running, String) {
    let mut child = Command::new(gsq_path())
        .args(["exporter", "--listen", "127.0.0.1:0"])
        .args(args)
        .env_remove("GSQ_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn gsq exporter");
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the exporter's address line");
    let url = line
        .trim()
        .strip_prefix("exporter ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    (Running(child), url)
}

/// GET `url`: the status code and the body.
fn get(url: &str) -> (u16, String) {
    try_get(url).unwrap_or_else(|e| panic!("GET {url}: {e}"))
}

/// GET `url`, or the error, such as a refused connection while a server starts.
fn try_get(url: &str) -> Result<(u16, String), ureq::Error> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let mut response = agent.get(url).call()?;
    let status = response.status().as_u16();
    let body = response.body_mut().read_to_string()?;
    Ok((status, body))
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn prometheus_binary() -> Option<&'static str> {
    let found = Command::new("prometheus")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if found {
        return Some("prometheus");
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("prometheus is not installed, and CI=true: .ci/run installs it");
    }
    eprintln!("SKIPPED: no prometheus binary (apt-get install prometheus); the exporter's Prometheus test did not run");
    None
}

/// The value of the one series an instant query returns, or `None` while there is none.
fn instant(prometheus: &str, query: &str) -> Option<Value> {
    let url = format!(
        "{prometheus}/api/v1/query?query={}",
        query
            .bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect::<String>()
    );
    let (status, body) = get(&url);
    assert_eq!(status, 200, "{body}");
    let json: Value = serde_json::from_str(&body).unwrap();
    let result = json["data"]["result"].as_array()?;
    match result.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

fn number(series: &Value) -> f64 {
    series["value"][1].as_str().unwrap().parse().unwrap()
}

fn write_config(dir: &Path, exporter: &str, game_server: &str) -> std::path::PathBuf {
    let exporter = exporter.trim_start_matches("http://");
    let mut jobs = String::new();
    for protocol in ["sqp", "samp", "gamespy1"] {
        jobs.push_str(&format!(
            r#"
  - job_name: gsq_{protocol}
    metrics_path: /probe
    params:
      protocol: [{protocol}]
    static_configs:
      - targets: ['{game_server}']
    relabel_configs:
      - source_labels: [__address__]
        target_label: __param_target
      - source_labels: [__param_target]
        target_label: instance
      - target_label: __address__
        replacement: '{exporter}'
"#
        ));
    }
    let config =
        format!("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:{jobs}");
    let path = dir.join("prometheus.yml");
    std::fs::write(&path, config).unwrap();
    path
}

#[test]
fn prometheus_scrapes_the_served_state_and_sees_a_stopped_server_go_down() {
    let Some(binary) = prometheus_binary() else {
        return;
    };
    let server = Server::start(
        StateDir::new("toml", STATE),
        &["--all", "127.0.0.1:0"],
        &["sqp", "samp", "gamespy1"],
    );
    let game_server = server.addr("sqp");
    let (_exporter, exporter_url) = exporter(&["--timeout", "200ms", "--retries", "1"]);

    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &exporter_url, &game_server);
    let port = free_port();
    let _prometheus = Running(
        Command::new(binary)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start prometheus"),
    );
    let prometheus = format!("http://127.0.0.1:{port}");
    let ready = poll(Duration::from_secs(30), || {
        let (status, _) = try_get(&format!("{prometheus}/-/ready")).ok()?;
        (status == 200).then_some(())
    });
    assert!(ready.is_some(), "prometheus was not ready within 30 s");

    // Two scrapes of each job, then every value as served.
    for job in ["gsq_sqp", "gsq_samp", "gsq_gamespy1"] {
        let scrapes = poll(Duration::from_secs(30), || {
            let series = instant(
                &prometheus,
                &format!("count_over_time(gsq_up{{job=\"{job}\"}}[5m])"),
            )?;
            (number(&series) >= 2.0).then_some(())
        });
        assert!(scrapes.is_some(), "{job}: fewer than two scrapes in 30 s");
        let up = instant(&prometheus, &format!("gsq_up{{job=\"{job}\"}}")).unwrap();
        assert_eq!(number(&up), 1.0, "{job}: {up}");
        assert_eq!(up["metric"]["instance"], game_server.as_str(), "{up}");
        let players = instant(&prometheus, &format!("gsq_players{{job=\"{job}\"}}")).unwrap();
        assert_eq!(number(&players), 3.0, "{job}");
        let max = instant(&prometheus, &format!("gsq_max_players{{job=\"{job}\"}}")).unwrap();
        assert_eq!(number(&max), 24.0, "{job}");
        let info = instant(&prometheus, &format!("gsq_server_info{{job=\"{job}\"}}")).unwrap();
        assert_eq!(
            info["metric"]["name"], "Prom \"Test\" Server",
            "{job}: {info}"
        );
        assert_eq!(info["metric"]["map"], "dust2", "{job}: {info}");
        let duration = instant(
            &prometheus,
            &format!("gsq_probe_duration_seconds{{job=\"{job}\"}}"),
        )
        .unwrap();
        assert!(number(&duration) < 1.0, "{job}: {duration}");
    }

    // The game server stops: the next scrapes say so.
    drop(server);
    let down = poll(Duration::from_secs(30), || {
        let up = instant(&prometheus, "gsq_up{job=\"gsq_sqp\"}")?;
        (number(&up) == 0.0).then_some(())
    });
    assert!(
        down.is_some(),
        "gsq_up did not turn 0 within 30 s of the server stopping"
    );
}

#[test]
fn bad_probes_get_a_one_line_reason_and_the_allow_list_holds() {
    let (_exporter, url) = exporter(&["--allow", "10.0.0.0/8", "--timeout", "200ms"]);
    let (status, body) = get(&format!("{url}/probe?protocol=quake9&target=127.0.0.1"));
    assert_eq!(status, 400);
    assert!(
        body.contains("quake9") && body.lines().count() == 1,
        "{body}"
    );
    let (status, body) = get(&format!("{url}/probe?protocol=sqp&target=127.0.0.1:99999"));
    assert_eq!(status, 400);
    assert!(body.contains("bad target"), "{body}");
    let (status, body) = get(&format!("{url}/probe?protocol=sqp"));
    assert_eq!(status, 400);
    assert!(body.contains("target"), "{body}");
    let (status, body) = get(&format!("{url}/probe?protocol=sqp&target=127.0.0.1:7779"));
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("--allow"), "{body}");

    let (status, body) = get(&format!("{url}/metrics"));
    assert_eq!(status, 200);
    assert!(
        body.contains("gsq_exporter_refused_probes_total{reason=\"bad_request\"} 3"),
        "{body}"
    );
    assert!(
        body.contains("gsq_exporter_refused_probes_total{reason=\"forbidden\"} 1"),
        "{body}"
    );
}

#[test]
fn a_probe_of_a_silent_server_ends_by_the_scrape_timeout() {
    let silent = cli_support::silent_socket();
    let target = silent.local_addr().unwrap().to_string();
    let (_exporter, url) = exporter(&["--timeout", "5s", "--retries", "3"]);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let started = std::time::Instant::now();
    let mut response = agent
        .get(format!("{url}/probe?protocol=samp&target={target}"))
        .header("X-Prometheus-Scrape-Timeout-Seconds", "1.5")
        .call()
        .unwrap();
    let body = response.body_mut().read_to_string().unwrap();
    let took = started.elapsed();
    assert!(
        took < Duration::from_millis(1500),
        "the probe took {took:?}"
    );
    assert!(body.contains("gsq_up{} 0.0"), "{body}");
}

#[test]
fn metrics_show_the_latest_result_of_every_polled_target() {
    let server = Server::start(
        StateDir::new("toml", STATE),
        &["--samp", "127.0.0.1:0", "--sqp", "127.0.0.1:0"],
        &["samp", "sqp"],
    );
    let silent = cli_support::silent_socket();
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("targets.txt");
    std::fs::write(
        &list,
        format!(
            // Two bad lines among the good ones: logged, counted and skipped.
            "# game servers\nsamp {}\nquake9 127.0.0.1\nsqp {}\nsqp ::1:7779\nsamp {}\n",
            server.addr("samp"),
            server.addr("sqp"),
            silent.local_addr().unwrap()
        ),
    )
    .unwrap();
    let (_exporter, url) = exporter(&[
        "--targets",
        list.to_str().unwrap(),
        "--interval",
        "200ms",
        "--timeout",
        "200ms",
        "--retries",
        "0",
    ]);
    let body = poll(Duration::from_secs(20), || {
        let (_, body) = get(&format!("{url}/metrics"));
        body.contains("gsq_exporter_poll_rounds_total 2")
            .then_some(body)
    })
    .expect("two rounds of polling");
    let samp = format!("protocol=\"samp\",target=\"{}\"", server.addr("samp"));
    let sqp = format!("protocol=\"sqp\",target=\"{}\"", server.addr("sqp"));
    let dead = format!(
        "protocol=\"samp\",target=\"{}\"",
        silent.local_addr().unwrap()
    );
    assert!(body.contains(&format!("gsq_up{{{samp}}} 1.0")), "{body}");
    assert!(
        body.contains(&format!("gsq_players{{{sqp}}} 3.0")),
        "{body}"
    );
    assert!(
        body.contains(&format!("gsq_max_players{{{samp}}} 24.0")),
        "{body}"
    );
    assert!(body.contains(&format!("gsq_up{{{dead}}} 0.0")), "{body}");
    assert!(
        body.contains("gsq_exporter_polls_total{protocol=\"samp\",outcome=\"timeout\"}"),
        "{body}"
    );
    assert!(
        body.contains("gsq_exporter_errors_total{kind=\"timeout\"}"),
        "{body}"
    );
    assert!(
        body.contains("gsq_exporter_skipped_target_lines_total 2"),
        "{body}"
    );
}
