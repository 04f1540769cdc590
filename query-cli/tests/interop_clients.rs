//! Third-party clients query `gsq serve` and must report exactly the state it serves.
//!
//! `gsq serve` answers on loopback from `tests/interop/state.toml`; gamedig (npm) and opengsq
//! (PyPI), installed by `.ci/run` into `tests/interop/`, query it with their own libraries
//! through the small scripts there, which print what the library reports as JSON. Each test
//! compares every field the client reports with the state file, field by field, and lists all
//! differences at once.
//!
//! Where a client cannot report a field, or reports it differently by design (gamedig turns
//! numeric GameSpy values into numbers; opengsq decodes text as UTF-8 and drops what does not
//! decode), the expected value is derived from the state by that documented behaviour, and the
//! helper doing so says which client bug or convention it models. Nothing is left uncompared
//! without a comment saying why.
//!
//! Without node and gamedig, or without the Python venv and opengsq, a test prints that it
//! skips; under `CI=true` it fails instead, so CI never passes by skipping.

use std::collections::HashMap;
use std::fmt::Debug;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use query_net::state::{RuleValue, ServerState};
use query_wire::TextEncoding;
use serde_json::Value;

/// How long a client may take for one query before the test gives up on it.
const CLIENT_DEADLINE: Duration = Duration::from_secs(60);
/// How long `gsq serve` may take to print its bound addresses.
const SERVE_STARTUP: Duration = Duration::from_secs(20);

fn interop_dir() -> PathBuf {
    query_tests::workspace_root().join("tests/interop")
}

fn state_file() -> PathBuf {
    interop_dir().join("state.toml")
}

/// The state the responders serve, read the way `gsq serve` reads it.
fn served_state() -> ServerState {
    let path = state_file();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

// ---------------------------------------------------------------------------------------------
// The server

/// A running `gsq serve`, killed when dropped.
struct Serve {
    child: Child,
    addresses: HashMap<String, SocketAddr>,
}

impl Serve {
    /// Starts `gsq serve` on 127.0.0.1, any free port, for each of `protocols`, and reads the
    /// `<protocol> <address>` lines it prints.
    fn start(protocols: &[&str]) -> Serve {
        let mut command = Command::new(env!("CARGO_BIN_EXE_gsq"));
        command.arg("serve").arg(state_file());
        for protocol in protocols {
            command.arg(format!("--{protocol}")).arg("127.0.0.1:0");
        }
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start gsq serve");
        let stdout = child.stdout.take().expect("piped stdout");
        let (lines_tx, lines_rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if lines_tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut serve = Serve {
            child,
            addresses: HashMap::new(),
        };
        while serve.addresses.len() < protocols.len() {
            let line = lines_rx.recv_timeout(SERVE_STARTUP).unwrap_or_else(|_| {
                panic!(
                    "gsq serve printed {:?} and then nothing for {SERVE_STARTUP:?}",
                    serve.addresses
                )
            });
            let mut words = line.split_whitespace();
            let (Some(protocol), Some(address), None) = (words.next(), words.next(), words.next())
            else {
                panic!("unexpected line from gsq serve: {line:?}");
            };
            let address: SocketAddr = address
                .parse()
                .unwrap_or_else(|e| panic!("bad address in {line:?}: {e}"));
            serve.addresses.insert(protocol.to_owned(), address);
        }
        serve
    }

    fn address(&self, protocol: &str) -> SocketAddr {
        *self
            .addresses
            .get(protocol)
            .unwrap_or_else(|| panic!("gsq serve printed no {protocol} address"))
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------------------------
// The clients

/// Reports a missing client: a skip locally, a failure under `CI=true`.
fn client_missing(what: &str) -> Option<PathBuf> {
    let hint = "run .ci/run, or install them as it does (npm ci and a venv in tests/interop)";
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{what} is missing; CI=true requires it ({hint})");
    }
    eprintln!("skipping: {what} is missing ({hint})");
    None
}

/// `node`, when it runs and gamedig is installed in `tests/interop/node_modules`.
fn gamedig_runner() -> Option<PathBuf> {
    let ok = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        return client_missing("node");
    }
    if !interop_dir()
        .join("node_modules/gamedig/package.json")
        .is_file()
    {
        return client_missing("gamedig (tests/interop/node_modules)");
    }
    Some(PathBuf::from("node"))
}

/// The venv's Python, when opengsq imports in it.
fn opengsq_runner() -> Option<PathBuf> {
    let bin = if cfg!(windows) { "Scripts" } else { "bin" };
    let python = interop_dir().join(".venv").join(bin).join("python");
    let ok = Command::new(&python)
        .args(["-c", "import opengsq"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        return client_missing("opengsq (tests/interop/.venv)");
    }
    Some(python)
}

/// Runs one client script and returns the JSON it printed; panics with its stderr if it fails.
fn run_client(program: &Path, script: &str, args: &[String]) -> Value {
    let output = assert_cmd::Command::new(program)
        .current_dir(interop_dir())
        .arg(script)
        .args(args)
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

fn gamedig(game: &str, address: SocketAddr) -> Option<Value> {
    let node = gamedig_runner()?;
    Some(run_client(
        &node,
        "gamedig_query.mjs",
        &[
            game.to_owned(),
            address.ip().to_string(),
            address.port().to_string(),
        ],
    ))
}

fn opengsq(protocol: &str, address: SocketAddr) -> Option<Value> {
    let python = opengsq_runner()?;
    Some(run_client(
        &python,
        "opengsq_query.py",
        &[
            protocol.to_owned(),
            address.ip().to_string(),
            address.port().to_string(),
        ],
    ))
}

// ---------------------------------------------------------------------------------------------
// Comparing

/// Collects every difference between what was served and what a client reported, so one run
/// shows them all.
#[derive(Debug)]
struct Comparison {
    client: String,
    differences: Vec<String>,
    compared: usize,
}

impl Comparison {
    fn new(client: &str) -> Self {
        Comparison {
            client: client.to_owned(),
            differences: Vec::new(),
            compared: 0,
        }
    }

    fn field<T: PartialEq + Debug>(&mut self, field: &str, served: T, reported: T) {
        self.compared += 1;
        if served != reported {
            self.differences
                .push(format!("{field}: served {served:?}, reported {reported:?}"));
        }
    }

    /// Panics listing every difference.
    fn finish(self) {
        assert!(self.compared > 0, "{}: nothing was compared", self.client);
        assert!(
            self.differences.is_empty(),
            "{} reports {} of {} fields differently from the served state:\n  {}",
            self.client,
            self.differences.len(),
            self.compared,
            self.differences.join("\n  ")
        );
        eprintln!("{}: {} fields agree", self.client, self.compared);
    }
}

fn json_str(value: &Value) -> Option<&str> {
    value.as_str()
}

/// What opengsq reports for text a server sent in Windows-1252: it decodes every string as
/// UTF-8 with `errors="ignore"`, so each byte that does not form UTF-8 (every non-ASCII
/// Windows-1252 character) is dropped. That is opengsq's bug (the protocol notes: "one drops
/// non-UTF-8 bytes"); the bytes on the wire are right, as gamedig's decode shows.
fn as_opengsq_decodes(text: &str) -> String {
    let bytes = TextEncoding::Windows1252
        .encode(text)
        .unwrap_or_else(|| panic!("{text:?} is not Windows-1252 text"));
    String::from_utf8_lossy(&bytes).replace('\u{fffd}', "")
}

// ---------------------------------------------------------------------------------------------
// SA:MP

/// The rules the SA:MP responder sends for `state`, as its documentation says: `mapname` and
/// `version` from the state's fields, then the state's rules as text, in order.
fn samp_rules(state: &ServerState) -> Vec<(String, String)> {
    let mut rules = vec![
        ("mapname".to_owned(), state.map.clone()),
        ("version".to_owned(), state.version.clone()),
    ];
    for (key, value) in &state.rules {
        let text = match value {
            RuleValue::Text(text) => text.clone(),
            other => other.to_string(),
        };
        rules.push((key.clone(), text));
    }
    rules
}

/// A JSON object's entries as sorted `(key, text)` pairs: the clients' rule maps carry no
/// order (gamedig's is a JS object, opengsq's a set), so rules are compared as sets.
fn sorted_pairs(object: &Value) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = object
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {object}"))
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                v.as_str().unwrap_or_else(|| panic!("{k}: {v}")).to_owned(),
            )
        })
        .collect();
    pairs.sort();
    pairs
}

fn sorted(mut pairs: Vec<(String, String)>) -> Vec<(String, String)> {
    pairs.sort();
    pairs
}

/// The fields of gamedig's `samp` protocol, shared by `gtasam` and `gtasao`.
///
/// gamedig names the third string of the `i` reply `raw.map`; since SA:MP 0.3.7 servers send
/// their language there (and so does this responder), so it is compared with the language.
/// gamedig leaves `map` empty for SA:MP (it does not read the `mapname` rule), so the map is
/// compared through `raw.rules.mapname`.
fn compare_gamedig_samp_info(c: &mut Comparison, state: &ServerState, reported: &Value) {
    c.field("protocol", Some("samp"), json_str(&reported["protocol"]));
    c.field(
        "name",
        Some(state.name.as_str()),
        json_str(&reported["name"]),
    );
    c.field(
        "password",
        Some(state.password),
        reported["password"].as_bool(),
    );
    c.field(
        "numplayers",
        Some(u64::from(state.num_players())),
        reported["numplayers"].as_u64(),
    );
    c.field(
        "maxplayers",
        Some(u64::from(state.max_players)),
        reported["maxplayers"].as_u64(),
    );
    c.field(
        "raw.gamemode (game type)",
        Some(state.game_type.as_str()),
        json_str(&reported["raw"]["gamemode"]),
    );
    c.field(
        "raw.map (the language)",
        Some(state.language.as_str()),
        json_str(&reported["raw"]["map"]),
    );
    c.field(
        "version (the version rule)",
        Some(state.version.as_str()),
        json_str(&reported["version"]),
    );
    c.field(
        "raw.rules",
        sorted(samp_rules(state)),
        sorted_pairs(&reported["raw"]["rules"]),
    );
}

#[test]
fn gamedig_reads_samp() {
    let serve = Serve::start(&["samp"]);
    let Some(reported) = gamedig("gtasam", serve.address("samp")) else {
        return;
    };
    let state = served_state();
    let mut c = Comparison::new("gamedig gtasam (SA:MP)");
    compare_gamedig_samp_info(&mut c, &state, &reported);
    // SA:MP's `d` list: id, name, score, ping. Ids are the list positions (the state sets none).
    let served: Vec<_> = state
        .players
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let id = p.id.unwrap_or(i as u32);
            (
                p.name.clone(),
                Some(u64::from(id)),
                Some(p.score),
                Some(u64::from(p.ping)),
            )
        })
        .collect();
    let players: Vec<_> = reported["players"]
        .as_array()
        .expect("players")
        .iter()
        .map(|p| {
            (
                json_str(&p["name"]).unwrap_or_default().to_owned(),
                p["raw"]["id"].as_u64(),
                p["raw"]["score"].as_i64(),
                p["raw"]["ping"].as_u64(),
            )
        })
        .collect();
    c.field("players (name, id, score, ping)", served, players);
    c.finish();
}

#[test]
fn gamedig_reads_samp_as_open_mp() {
    // gamedig's open.mp protocol asks for the `c` list (name and score: open.mp has no `d`).
    // `gsq serve` has no open.mp mode, so its SA:MP responder answers, which answers `c` too.
    let serve = Serve::start(&["samp"]);
    let Some(reported) = gamedig("gtasao", serve.address("samp")) else {
        return;
    };
    let state = served_state();
    let mut c = Comparison::new("gamedig gtasao (open.mp)");
    // gtasao is gamedig's samp protocol with the `c` list.
    c.field(
        "protocol (gamedig)",
        Some("gtasao"),
        json_str(&reported["protocol"]),
    );
    let mut reported_as_samp = reported.clone();
    reported_as_samp["protocol"] = Value::from("samp");
    compare_gamedig_samp_info(&mut c, &state, &reported_as_samp);
    let served: Vec<_> = state
        .players
        .iter()
        .map(|p| (p.name.clone(), Some(p.score), None, None))
        .collect();
    let players: Vec<_> = reported["players"]
        .as_array()
        .expect("players")
        .iter()
        .map(|p| {
            (
                json_str(&p["name"]).unwrap_or_default().to_owned(),
                p["raw"]["score"].as_i64(),
                p["raw"].get("id").cloned(),
                p["raw"].get("ping").cloned(),
            )
        })
        .collect();
    c.field(
        "players (name, score; no id or ping in `c`)",
        served,
        players,
    );
    c.finish();
}

#[test]
fn opengsq_reads_samp() {
    let serve = Serve::start(&["samp"]);
    let Some(reported) = opengsq("samp", serve.address("samp")) else {
        return;
    };
    let state = served_state();
    let mut c = Comparison::new("opengsq Samp");
    let status = &reported["status"];
    c.field(
        "password",
        Some(state.password),
        status["password"].as_bool(),
    );
    c.field(
        "num_players",
        Some(u64::from(state.num_players())),
        status["num_players"].as_u64(),
    );
    c.field(
        "max_players",
        Some(u64::from(state.max_players)),
        status["max_players"].as_u64(),
    );
    c.field(
        "server_name (UTF-8, undecodable bytes dropped)",
        Some(as_opengsq_decodes(&state.name)),
        json_str(&status["server_name"]).map(str::to_owned),
    );
    c.field(
        "game_type",
        Some(as_opengsq_decodes(&state.game_type)),
        json_str(&status["game_type"]).map(str::to_owned),
    );
    c.field(
        "language",
        Some(as_opengsq_decodes(&state.language)),
        json_str(&status["language"]).map(str::to_owned),
    );
    let served_rules = sorted(
        samp_rules(&state)
            .into_iter()
            .map(|(k, v)| (as_opengsq_decodes(&k), as_opengsq_decodes(&v)))
            .collect(),
    );
    let rules: Vec<(String, String)> = reported["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .map(|pair| {
            (
                json_str(&pair[0]).expect("key").to_owned(),
                json_str(&pair[1]).expect("value").to_owned(),
            )
        })
        .collect();
    c.field("rules", served_rules, sorted(rules));
    let served: Vec<_> = state
        .players
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let id = p.id.unwrap_or(i as u32);
            (
                Some(u64::from(id)),
                as_opengsq_decodes(&p.name),
                Some(p.score),
                Some(u64::from(p.ping)),
            )
        })
        .collect();
    let players: Vec<_> = reported["players"]
        .as_array()
        .expect("players")
        .iter()
        .map(|p| {
            (
                p["id"].as_u64(),
                json_str(&p["name"]).unwrap_or_default().to_owned(),
                p["score"].as_i64(),
                p["ping"].as_u64(),
            )
        })
        .collect();
    c.field("players (id, name, score, ping)", served, players);
    c.finish();
}
