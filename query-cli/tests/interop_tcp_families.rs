//! Third-party clients against `gsq serve --frostbite` and `--teamspeak3`, over loopback TCP:
//! the `ts3` ServerQuery library (PyPI), opengsq's `Battlefield` and `TeamSpeak3`, and
//! gamedig's `battlefield4` and `teamspeak3`, each compared with the served state
//! (`tests/interop/state.toml`, whose voice port is its `port`, 7777).
//!
//! Where a client reads differently by design, the test models it: gamedig decodes Frostbite
//! words as `latin1`, which its decoder takes for Windows-1252 (the responder sends UTF-8, so
//! each non-ASCII letter comes back as its UTF-8 bytes read that way), gamedig and `ts3` count the querying client in
//! `virtualserver_clientsonline` as the server does, and only gamedig leaves query clients
//! out of its player list.
//!
//! Without the clients (tests/interop/install.sh installs them, as .ci/run does) a test says
//! so and passes, except under `CI=true`, where it fails.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use query_net::state::ServerState;
use serde_json::Value;

const CLIENT_DEADLINE: Duration = Duration::from_secs(60);
const LOGIN_PASSWORD: &str = "s3cret pässword";

fn interop_dir() -> PathBuf {
    query_tests::workspace_root().join("tests/interop")
}

fn served_state() -> ServerState {
    let path = interop_dir().join("state.toml");
    toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// `gsq serve` answering Frostbite and TeamSpeak 3 on free loopback ports, killed when dropped.
struct Serve {
    child: Child,
    addresses: HashMap<String, SocketAddr>,
}

impl Serve {
    fn start() -> Serve {
        let mut child = Command::new(env!("CARGO_BIN_EXE_gsq"))
            .arg("serve")
            .arg(interop_dir().join("state.toml"))
            .args(["--frostbite", "127.0.0.1:0", "--teamspeak3", "127.0.0.1:0"])
            .env("GSQ_RCON_PASSWORD", LOGIN_PASSWORD)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn gsq serve");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut addresses = HashMap::new();
        while addresses.len() < 2 {
            let line = lines.next().expect("a startup line").unwrap();
            let (protocol, address) = line.split_once(' ').unwrap();
            addresses.insert(protocol.to_owned(), address.parse().unwrap());
        }
        Serve { child, addresses }
    }

    fn port(&self, protocol: &str) -> String {
        self.addresses[protocol].port().to_string()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn missing(what: &str) -> Option<PathBuf> {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{what} is missing; CI=true requires it (tests/interop/install.sh)");
    }
    eprintln!("skipping: {what} is missing (tests/interop/install.sh installs it)");
    None
}

/// The venv's Python, when `module` imports in it.
fn python_with(module: &str) -> Option<PathBuf> {
    let python = interop_dir().join(".venv/bin/python");
    let ok = Command::new(&python)
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        Some(python)
    } else {
        missing(&format!("{module} (tests/interop/.venv)"))
    }
}

fn node_with_gamedig() -> Option<PathBuf> {
    let node = Command::new("node").arg("--version").output();
    let installed = interop_dir()
        .join("node_modules/gamedig/package.json")
        .is_file();
    if node.is_ok_and(|o| o.status.success()) && installed {
        Some(PathBuf::from("node"))
    } else {
        missing("node and gamedig (tests/interop/node_modules)")
    }
}

/// Runs a client script; its JSON, or its exit code and stderr when it failed.
fn run(program: &PathBuf, args: &[&str], env: &[(&str, &str)]) -> Result<Value, (i32, String)> {
    let output = assert_cmd::Command::new(program)
        .current_dir(interop_dir())
        .args(args)
        .envs(env.iter().copied())
        .timeout(CLIENT_DEADLINE)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if !output.status.success() {
        return Err((output.status.code().unwrap_or(-1), stderr));
    }
    Ok(serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{args:?} printed no JSON ({e}): {stderr}")))
}

fn str_of(value: &Value) -> &str {
    value
        .as_str()
        .unwrap_or_else(|| panic!("not a string: {value}"))
}

/// Text as gamedig reads its UTF-8 bytes: its `latin1` decoder is Windows-1252's (0x80 is €).
fn as_latin1_reads(text: &str) -> String {
    query_wire::TextEncoding::Windows1252
        .decode_lossy(text.as_bytes())
        .into_owned()
}

/// The served players' names, in order.
fn names(state: &ServerState) -> Vec<String> {
    state.players.iter().map(|p| p.name.clone()).collect()
}

/// The checks every ServerQuery client's view shares: the server info's fields, the people in
/// the client list, one query client, the teams as channels.
fn check_serverquery(state: &ServerState, info: &Value, clients: &[Value], channels: &[Value]) {
    assert_eq!(str_of(&info["virtualserver_name"]), state.name);
    assert_eq!(
        str_of(&info["virtualserver_maxclients"]),
        state.max_players.to_string()
    );
    assert_eq!(
        str_of(&info["virtualserver_clientsonline"]),
        (state.players.len() + 1).to_string()
    );
    assert_eq!(str_of(&info["virtualserver_port"]), state.port.to_string());
    assert_eq!(str_of(&info["virtualserver_flag_password"]), "1");
    assert_eq!(str_of(&info["virtualserver_version"]), state.version);
    let people: Vec<&str> = clients
        .iter()
        .filter(|c| c["client_type"] == "0")
        .map(|c| str_of(&c["client_nickname"]))
        .collect();
    assert_eq!(people, names(state));
    assert_eq!(
        clients.iter().filter(|c| c["client_type"] == "1").count(),
        1
    );
    let channel_names: Vec<&str> = channels
        .iter()
        .map(|c| str_of(&c["channel_name"]))
        .collect();
    let teams: Vec<&str> = state.teams.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(channel_names, teams);
    // Each person in the channel of their team.
    for (client, player) in clients.iter().zip(&state.players) {
        let team = player.team.as_deref().unwrap_or(&state.teams[0].name);
        let channel = channels.iter().find(|c| c["cid"] == client["cid"]).unwrap();
        assert_eq!(str_of(&channel["channel_name"]), team);
    }
}

#[test]
fn the_ts3_library_reads_the_teamspeak3_responder_and_logs_in() {
    let Some(python) = python_with("ts3") else {
        return;
    };
    let server = Serve::start();
    let state = served_state();
    let port = server.port("teamspeak3");
    let voice = state.port.to_string();
    let got = run(&python, &["ts3_query.py", "127.0.0.1", &port, &voice], &[]).unwrap();
    let clients = got["clientlist"].as_array().unwrap();
    let channels = got["channellist"].as_array().unwrap();
    check_serverquery(&state, &got["serverinfo"], clients, channels);

    let login = [("GSQ_RCON_PASSWORD", LOGIN_PASSWORD)];
    let args = ["ts3_query.py", "127.0.0.1", &port, &voice, "serveradmin"];
    assert!(
        run(&python, &args, &login).is_ok(),
        "the right password logs in"
    );
    let refused = run(&python, &args, &[("GSQ_RCON_PASSWORD", "wrong")]).unwrap_err();
    assert_eq!(refused.0, 3, "{}", refused.1);
    assert!(
        refused.1.contains("520 invalid loginname or password"),
        "{}",
        refused.1
    );
    // Another voice port is no virtual server of this one.
    let refused = run(&python, &["ts3_query.py", "127.0.0.1", &port, "9"], &[]).unwrap_err();
    assert!(refused.1.contains("1024 invalid serverID"), "{}", refused.1);
}

#[test]
fn opengsq_reads_both_responders() {
    let Some(python) = python_with("opengsq") else {
        return;
    };
    let server = Serve::start();
    let state = served_state();
    let voice = state.port.to_string();
    let got = run(
        &python,
        &[
            "opengsq_query.py",
            "teamspeak3",
            "127.0.0.1",
            &server.port("teamspeak3"),
        ],
        &[("VOICE_PORT", &voice)],
    )
    .unwrap();
    let clients = got["clients"].as_array().unwrap();
    let channels = got["channels"].as_array().unwrap();
    check_serverquery(&state, &got["info"], clients, channels);

    let got = run(
        &python,
        &[
            "opengsq_query.py",
            "battlefield",
            "127.0.0.1",
            &server.port("frostbite"),
        ],
        &[],
    )
    .unwrap();
    let info = &got["info"];
    assert_eq!(str_of(&info["hostname"]), state.name);
    assert_eq!(str_of(&info["map"]), state.map);
    assert_eq!(str_of(&info["game_type"]), state.game_type);
    assert_eq!(info["num_players"], state.players.len());
    assert_eq!(info["max_players"], state.max_players);
    assert_eq!(info["password"], state.password);
    let scores: Vec<f64> = state.teams.iter().map(|t| t.score as f64).collect();
    assert_eq!(info["teams"], serde_json::json!(scores));
    assert_eq!(info["blaze_game_state"], "IN_GAME");
    assert_eq!(str_of(&got["version"]["mod"]), "BF4");
    assert_eq!(str_of(&got["version"]["version"]), state.version);
    let players = got["players"].as_array().unwrap();
    let got_names: Vec<&str> = players.iter().map(|p| str_of(&p["name"])).collect();
    assert_eq!(got_names, names(&state));
    for (player, served) in players.iter().zip(&state.players) {
        assert_eq!(str_of(&player["score"]), served.score.to_string());
        assert_eq!(str_of(&player["ping"]), served.ping.to_string());
    }
}

#[test]
fn gamedig_reads_both_responders() {
    let Some(node) = node_with_gamedig() else {
        return;
    };
    let server = Serve::start();
    let state = served_state();
    let voice = state.port.to_string();
    let got = run(
        &node,
        &[
            "gamedig_query.mjs",
            "teamspeak3",
            "127.0.0.1",
            &server.port("teamspeak3"),
            &voice,
        ],
        &[],
    )
    .unwrap();
    assert_eq!(got["protocol"], "teamspeak3");
    assert_eq!(str_of(&got["name"]), state.name);
    assert_eq!(got["maxplayers"], state.max_players.to_string());
    let people: Vec<&str> = got["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| str_of(&p["name"]))
        .collect();
    assert_eq!(people, names(&state), "people only");
    let channels: Vec<&str> = got["raw"]["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| str_of(&c["channel_name"]))
        .collect();
    assert_eq!(channels, ["Rød", "Blå"]);

    let got = run(
        &node,
        &[
            "gamedig_query.mjs",
            "battlefield4",
            "127.0.0.1",
            &server.port("frostbite"),
        ],
        &[],
    )
    .unwrap();
    assert_eq!(got["protocol"], "battlefield");
    assert_eq!(str_of(&got["name"]), as_latin1_reads(&state.name));
    assert_eq!(str_of(&got["map"]), as_latin1_reads(&state.map));
    assert_eq!(got["numplayers"], state.players.len());
    assert_eq!(got["maxplayers"], state.max_players);
    assert_eq!(got["password"], state.password);
    assert_eq!(str_of(&got["version"]), state.version);
    let tickets: Vec<f64> = got["raw"]["teams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tickets"].as_f64().unwrap())
        .collect();
    let scores: Vec<f64> = state.teams.iter().map(|t| t.score as f64).collect();
    assert_eq!(tickets, scores);
    let players = got["players"].as_array().unwrap();
    assert_eq!(players.len(), state.players.len());
    for (player, served) in players.iter().zip(&state.players) {
        assert_eq!(str_of(&player["name"]), as_latin1_reads(&served.name));
        assert_eq!(player["raw"]["score"], served.score);
        assert_eq!(player["raw"]["ping"], served.ping);
    }
}
