//! The README's configuration for sharded exporters (its `prometheus.yml` and file service
//! discovery blocks) loads in a real Prometheus's `promtool check config`, the targets file
//! found and valid; and run by a real Prometheus against three `gsq exporter`s and game
//! servers on loopback, every target is scraped through exactly one exporter, with its game.
//! Skipped without promtool and prometheus (Debian's `prometheus` package ships both), except
//! under CI=true, where `.ci/run` installs them.

mod cli_support;

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use cli_support::{gsq_path, poll, workspace_root, Server, StateDir, SAMPLE_STATE};

/// The fenced YAML block of the README whose first line is `first`.
fn readme_block(first: &str) -> String {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).unwrap();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        if line == "```yaml" {
            let block: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
            if block.first() == Some(&first) {
                return block.join("\n") + "\n";
            }
        }
    }
    panic!("no ```yaml block starting with {first:?} in the README");
}

#[test]
fn the_readme_sharding_configuration_loads_in_promtool() {
    let config = readme_block("# prometheus.yml: gsq exporters sharded by target");
    let targets = readme_block(
        "# gsq/servers.yml: the game servers, by game (HOST:PORT is the port players connect to)",
    );
    // What the configuration promises: hashmod over the target, one exporter per shard.
    assert!(config.contains("action: hashmod") && config.contains("modulus: 3"));
    for shard in 0..3 {
        assert!(
            config.contains(&format!("regex: '{shard}'")),
            "shard {shard}"
        );
    }
    assert!(targets.contains("game: rust"));

    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("gsq")).unwrap();
    std::fs::write(dir.path().join("prometheus.yml"), &config).unwrap();
    std::fs::write(dir.path().join("gsq/servers.yml"), &targets).unwrap();
    let output = match Command::new("promtool")
        .args(["check", "config", "prometheus.yml"])
        .current_dir(dir.path())
        .output()
    {
        Ok(output) => output,
        Err(e) => {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("promtool is required under CI=true (apt-get install prometheus): {e}");
            }
            eprintln!("skipped: promtool does not run ({e}); apt-get install prometheus");
            return;
        }
    };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "promtool refused it: {text}");
    assert!(!text.contains("WARNING"), "{text}");
    assert!(text.contains("SUCCESS"), "{text}");

    // And promtool is no rubber stamp: a broken targets file fails.
    std::fs::write(dir.path().join("gsq/servers.yml"), "- targets: [1\n").unwrap();
    let output = Command::new("promtool")
        .args(["check", "config", "prometheus.yml"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!output.status.success());
}

/// A child process killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn get(url: &str) -> Option<(u16, String)> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let mut response = agent.get(url).call().ok()?;
    let status = response.status().as_u16();
    Some((status, response.body_mut().read_to_string().ok()?))
}

/// Starts `gsq exporter` on a free port; its `host:port`.
fn exporter() -> (Running, String) {
    let mut child = Command::new(gsq_path())
        .args([
            "exporter",
            "--listen",
            "127.0.0.1:0",
            "-t",
            "300ms",
            "-r",
            "1",
        ])
        .env_remove("GSQ_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn gsq exporter");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let address = line
        .trim()
        .strip_prefix("exporter http://")
        .unwrap()
        .to_owned();
    (Running(child), address)
}

fn prometheus_runs() -> bool {
    let found = Command::new("prometheus")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found && std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("prometheus is required under CI=true (apt-get install prometheus)");
    }
    if !found {
        eprintln!("skipped: no prometheus binary (apt-get install prometheus)");
    }
    found
}

#[test]
fn prometheus_shards_the_readme_targets_over_three_exporters() {
    if !prometheus_runs() {
        return;
    }
    let csgo = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &["--game", "csgo", "127.0.0.1:0", "--no-rate-limit"],
        &["a2s"],
    );
    let minecraft = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &["--minecraft-query", "127.0.0.1:0", "--no-rate-limit"],
        &["minecraft-query"],
    );
    let sqp = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &["--sqp", "127.0.0.1:0", "--no-rate-limit"],
        &["sqp"],
    );
    let exporters: Vec<(Running, String)> = (0..3).map(|_| exporter()).collect();

    // The README's configuration, with loopback exporters and a fast scrape.
    let mut config = readme_block("# prometheus.yml: gsq exporters sharded by target")
        .replace("scrape_interval: 30s", "scrape_interval: 1s")
        .replace("scrape_timeout: 10s", "scrape_timeout: 1s");
    for (shard, (_, address)) in exporters.iter().enumerate() {
        config = config.replace(&format!("exporter-{shard}.example.org:9339"), address);
    }
    assert!(!config.contains("example.org"), "{config}");
    let targets = format!(
        "- targets: ['{}']\n  labels: {{game: csgo}}\n- targets: ['{}']\n  labels: {{game: minecraft}}\n- targets: ['{}']\n  labels: {{protocol: auto}}\n",
        csgo.addr("a2s"),
        minecraft.addr("minecraft-query"),
        sqp.addr("sqp"),
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("gsq")).unwrap();
    std::fs::write(dir.path().join("prometheus.yml"), &config).unwrap();
    std::fs::write(dir.path().join("gsq/servers.yml"), &targets).unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _prometheus = Running(
        Command::new("prometheus")
            .arg("--config.file=prometheus.yml")
            .arg("--storage.tsdb.path=data")
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start prometheus"),
    );
    let prometheus = format!("http://127.0.0.1:{port}");

    // Every target up, with its game, once each.
    let expected: HashMap<String, &str> = [
        (csgo.addr("a2s"), "csgo"),
        (minecraft.addr("minecraft-query"), "minecraft"),
        (sqp.addr("sqp"), ""),
    ]
    .into_iter()
    .collect();
    let up = poll(Duration::from_secs(40), || {
        let (_, body) = get(&format!("{prometheus}/api/v1/query?query=gsq_up"))?;
        let json: Value = serde_json::from_str(&body).ok()?;
        let series = json["data"]["result"].as_array()?.clone();
        (series.len() == expected.len() && series.iter().all(|s| s["value"][1] == "1"))
            .then_some(series)
    })
    .expect("every target up within 40 s");
    for series in &up {
        let instance = series["metric"]["instance"].as_str().unwrap();
        let game = expected.get(instance).unwrap_or_else(|| panic!("{series}"));
        assert_eq!(
            series["metric"]["game"].as_str().unwrap_or(""),
            *game,
            "{series}"
        );
    }

    // Each target is scraped once, through one of the exporters (the one its hash picked:
    // the shard label is gone by then, being temporary).
    let (_, body) = get(&format!("{prometheus}/api/v1/targets?state=active")).unwrap();
    let json: Value = serde_json::from_str(&body).unwrap();
    let active = json["data"]["activeTargets"].as_array().unwrap();
    assert_eq!(active.len(), expected.len(), "{body}");
    let exporter_addresses: HashSet<&str> = exporters.iter().map(|(_, a)| a.as_str()).collect();
    for target in active {
        let scrape_url = target["scrapeUrl"].as_str().unwrap();
        let host = scrape_url
            .strip_prefix("http://")
            .and_then(|rest| rest.split('/').next())
            .unwrap();
        assert!(exporter_addresses.contains(host), "{scrape_url}");
    }
}
