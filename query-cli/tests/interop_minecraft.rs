//! Minecraft with third-party code, both ways, over loopback.
//!
//! - mcstatus (PyPI) and minecraft-server-util (npm) read `gsq serve --minecraft-java`'s
//!   status ping and legacy ping and `--bedrock`'s pong, and must report the served state;
//! - gsq reads a server made with npm minecraft-protocol's `createServer`, through its status
//!   ping and through the legacy ping alone.
//!
//! The clients are installed by `tests/interop/install.sh` (as `.ci/run` does) and run through
//! the small scripts beside it, which print what the library reports as JSON. Without them a
//! test prints that it skips; under `CI=true` it fails instead.

mod cli_support;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use query_net::engines::minecraft::{LegacyPing, LegacySession};
use query_net::state::ServerState;
use query_net::tcp::{run_stream, StreamLimits};
use query_net::Options;
use serde_json::Value;

use cli_support::{run, Server, StateDir};

/// How long a client may take for one query.
const CLIENT_DEADLINE: Duration = Duration::from_secs(60);

fn interop_dir() -> PathBuf {
    query_tests::workspace_root().join("tests/interop")
}

/// The interop state, as `gsq serve` reads it.
fn served() -> (String, ServerState) {
    let path = interop_dir().join("state.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let state = toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (text, state)
}

fn serve(text: &str) -> Server {
    Server::start(
        StateDir::new("toml", text),
        &[
            "--minecraft-java",
            "127.0.0.1:0",
            "--bedrock",
            "127.0.0.1:0",
            "--no-rate-limit",
        ],
        &["minecraft", "bedrock"],
    )
}

/// Reports a missing client: a skip locally, a failure under `CI=true`.
fn missing(what: &str) -> Option<PathBuf> {
    let hint = "tests/interop/install.sh installs it, as .ci/run does";
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{what} is missing; CI=true requires it ({hint})");
    }
    eprintln!("skipping: {what} is missing ({hint})");
    None
}

/// `node`, when it runs and `package` is in `tests/interop/node_modules`.
fn node_with(package: &str) -> Option<PathBuf> {
    let runs = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let installed = interop_dir()
        .join("node_modules")
        .join(package)
        .join("package.json")
        .is_file();
    if !runs || !installed {
        return missing(&format!("node with {package}"));
    }
    Some(PathBuf::from("node"))
}

/// The venv's Python, when mcstatus imports in it.
fn python_with_mcstatus() -> Option<PathBuf> {
    let python = interop_dir().join(".venv/bin/python");
    let ok = Command::new(&python)
        .args(["-c", "import mcstatus"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        return missing("mcstatus (tests/interop/.venv)");
    }
    Some(python)
}

/// Runs a client script on `address` and returns the JSON it printed.
fn run_client(program: &Path, script: &str, kind: &str, address: SocketAddr) -> Value {
    let args = [
        kind.to_owned(),
        address.ip().to_string(),
        address.port().to_string(),
    ];
    let output = assert_cmd::Command::new(program)
        .current_dir(interop_dir())
        .arg(script)
        .args(&args)
        .timeout(CLIENT_DEADLINE)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {} {script}: {e}", program.display()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{script} {args:?} failed ({}):\n{stderr}\n{stdout}",
        output.status
    );
    serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{script} printed no JSON ({e}):\n{stdout}\n{stderr}"))
}

/// The names of the players the status sample holds (the first 12, as vanilla sends).
fn sample_names(state: &ServerState) -> Vec<Value> {
    state
        .players
        .iter()
        .take(query_net::engines::minecraft::responder::MAX_SAMPLE)
        .map(|p| Value::from(p.name.clone()))
        .collect()
}

fn online(state: &ServerState) -> Value {
    Value::from(state.num_players())
}

#[test]
fn mcstatus_reads_the_java_status_the_legacy_ping_and_the_bedrock_pong() {
    let Some(python) = python_with_mcstatus() else {
        return;
    };
    let (text, state) = served();
    let server = serve(&text);
    let script = "mcstatus_query.py";

    let java = run_client(&python, script, "java", server.addresses["minecraft"]);
    assert_eq!(java["motd_plain"], state.name.as_str(), "{java:#}");
    assert_eq!(java["version"]["name"], state.version.as_str(), "{java:#}");
    assert_eq!(
        java["version"]["protocol"], state.protocol_version,
        "{java:#}"
    );
    assert_eq!(java["players"]["online"], online(&state), "{java:#}");
    assert_eq!(java["players"]["max"], state.max_players, "{java:#}");
    let names: Vec<Value> = java["players"]["sample"]
        .as_array()
        .expect("a sample")
        .iter()
        .map(|p| p["name"].clone())
        .collect();
    assert_eq!(names, sample_names(&state));
    assert_eq!(java["enforces_secure_chat"], false);

    let legacy = run_client(&python, script, "legacy", server.addresses["minecraft"]);
    assert_eq!(legacy["motd_plain"], state.name.as_str(), "{legacy:#}");
    assert_eq!(
        legacy["version"]["name"],
        state.version.as_str(),
        "{legacy:#}"
    );
    assert_eq!(legacy["version"]["protocol"], state.protocol_version);
    assert_eq!(legacy["players"]["online"], online(&state), "{legacy:#}");
    assert_eq!(legacy["players"]["max"], state.max_players);

    let bedrock = run_client(&python, script, "bedrock", server.addresses["bedrock"]);
    assert_eq!(bedrock["motd_plain"], state.name.as_str(), "{bedrock:#}");
    assert_eq!(
        bedrock["version"]["name"],
        state.version.as_str(),
        "{bedrock:#}"
    );
    assert_eq!(bedrock["version"]["brand"], "MCPE", "{bedrock:#}");
    assert_eq!(bedrock["players"]["online"], online(&state), "{bedrock:#}");
    assert_eq!(bedrock["players"]["max"], state.max_players);
    assert_eq!(bedrock["map_name"], state.map.as_str(), "{bedrock:#}");
    assert_eq!(bedrock["gamemode"], state.game_type.as_str(), "{bedrock:#}");
}

#[test]
fn minecraft_server_util_reads_the_java_status_the_legacy_ping_and_the_bedrock_pong() {
    let Some(node) = node_with("minecraft-server-util") else {
        return;
    };
    let (text, state) = served();
    let server = serve(&text);
    let script = "mcutil_query.mjs";

    let java = run_client(&node, script, "java", server.addresses["minecraft"]);
    assert_eq!(java["motd"]["clean"], state.name.as_str(), "{java:#}");
    assert_eq!(java["version"]["name"], state.version.as_str(), "{java:#}");
    assert_eq!(java["version"]["protocol"], state.protocol_version);
    assert_eq!(java["players"]["online"], online(&state), "{java:#}");
    assert_eq!(java["players"]["max"], state.max_players);
    let names: Vec<Value> = java["players"]["sample"]
        .as_array()
        .expect("a sample")
        .iter()
        .map(|p| p["name"].clone())
        .collect();
    assert_eq!(names, sample_names(&state));

    let legacy = run_client(&node, script, "legacy", server.addresses["minecraft"]);
    assert_eq!(legacy["motd"]["clean"], state.name.as_str(), "{legacy:#}");
    assert_eq!(
        legacy["version"]["name"],
        state.version.as_str(),
        "{legacy:#}"
    );
    assert_eq!(legacy["version"]["protocol"], state.protocol_version);
    assert_eq!(legacy["players"]["online"], online(&state), "{legacy:#}");
    assert_eq!(legacy["players"]["max"], state.max_players);

    let bedrock = run_client(&node, script, "bedrock", server.addresses["bedrock"]);
    assert_eq!(bedrock["edition"], "MCPE", "{bedrock:#}");
    assert_eq!(
        bedrock["motd"]["clean"],
        format!("{}\n{}", state.name, state.map)
    );
    assert_eq!(
        bedrock["version"]["name"],
        state.version.as_str(),
        "{bedrock:#}"
    );
    assert_eq!(bedrock["version"]["protocol"], state.protocol_version);
    assert_eq!(bedrock["players"]["online"], online(&state), "{bedrock:#}");
    assert_eq!(bedrock["players"]["max"], state.max_players);
    assert_eq!(bedrock["gameMode"], state.game_type.as_str(), "{bedrock:#}");
}

/// A minecraft-protocol server, killed when dropped.
struct NodeServer {
    child: Child,
    address: SocketAddr,
}

impl NodeServer {
    fn start(node: &Path, motd: &str, max_players: u32) -> NodeServer {
        let mut child = Command::new(node)
            .current_dir(interop_dir())
            .args(["mc_server.mjs", motd, &max_players.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start node mc_server.mjs");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("mc_server.mjs printed its address");
        let address = line
            .trim()
            .strip_prefix("minecraft ")
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("unexpected line from mc_server.mjs: {line:?}"));
        NodeServer { child, address }
    }
}

impl Drop for NodeServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn gsq_reads_a_minecraft_protocol_server() {
    let Some(node) = node_with("minecraft-protocol") else {
        return;
    };
    let motd = "A node server — ünïcode";
    let server = NodeServer::start(&node, motd, 42);
    let target = server.address.to_string();

    let ran = run(&["query", "minecraft", &target, "--json"]);
    assert_eq!(ran.code, Some(0), "{ran:#?}");
    let status: Value = serde_json::from_str(ran.stdout.trim()).unwrap();
    assert_eq!(status["protocol"], "minecraft", "{status:#}");
    assert_eq!(status["name"], motd, "{status:#}");
    assert_eq!(status["max_players"], 42, "{status:#}");
    assert_eq!(status["num_players"], 0, "{status:#}");
    assert_eq!(status["version"], "1.20.1", "{status:#}");
    assert_eq!(status["complete"], true, "{status:#}");

    // The same server through the 1.6 legacy ping alone, as a pre-1.7 server is read.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let options = Options::default();
    let session = LegacySession::with_request(
        server.address,
        LegacyPing::V1_6 {
            host: "127.0.0.1".to_owned(),
            port: server.address.port(),
        },
    );
    let legacy = runtime
        .block_on(run_stream(
            server.address,
            session,
            StreamLimits::from_options(&options),
        ))
        .expect("the legacy ping is answered");
    assert_eq!(legacy.name, motd);
    assert_eq!(legacy.max_players, 42);
    assert_eq!(legacy.version.as_deref(), Some("1.20.1"));
}
