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
//! without a comment saying why: each result's keys are checked to be exactly the ones
//! compared, and the few values that do not come from the state (gamedig's measured ping, the
//! port it queried) are checked for what they must be.
//!
//! The GameSpy v1 clients query through a relay that counts datagrams: the served state's reply
//! must span several datagrams, and each client must have been sent all of them.
//!
//! The A2S clients query `gsq serve --a2s` through the same relay, with INFO challenged as it
//! is by default: its counts show the challenge exchange (a challenged request is sent twice,
//! the first time answered with the one-datagram challenge) and the RULES reply, which the
//! served state makes longer than a Source part, sent in all its parts. Neither gamedig 5.3.3 nor opengsq 3.7.0 has an A2S server
//! side (their A2S code only sends requests and reads replies), so gsq's A2S client has no
//! responder written with either to query.
//!
//! Without node and gamedig, or without the Python venv and opengsq, a test prints that it
//! skips; under `CI=true` it fails instead, so CI never passes by skipping.

use std::collections::HashMap;
use std::fmt::Debug;
use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use query_net::engines::a2s::{A2sConfig, A2sResponder};
use query_net::engines::gamespy1::{GameSpy1Config, GameSpy1Responder};
use query_net::engines::quake3::{Quake3Config, Quake3Responder};
use query_net::service::Service;
use query_net::state::{RuleValue, ServerState, SharedState};
use query_specs::a2s::{EDF_GAME_ID, EDF_KEYWORDS, EDF_PORT, EDF_STEAM_ID};
use query_specs::quake3::STATUS_HEADER;
use query_specs::unreal2::{Header, Player, Rule, UText, COLOUR_CODE};
use query_wire::{Encode, TextEncoding};
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
        Serve::start_with(protocols, &[])
    }

    /// [`Serve::start`] with more command-line `options`.
    fn start_with(protocols: &[&str], options: &[&str]) -> Serve {
        Serve::start_from(&state_file(), protocols, options)
    }

    /// [`Serve::start_with`], serving the state file at `state`.
    fn start_from(state: &Path, protocols: &[&str], options: &[&str]) -> Serve {
        let mut args = Vec::new();
        for protocol in protocols {
            args.extend([format!("--{protocol}"), "127.0.0.1:0".to_owned()]);
        }
        args.extend(options.iter().map(|o| (*o).to_owned()));
        Serve::launch_from(state, &args, protocols.len())
    }

    /// `gsq serve --game <game> 127.0.0.1:0`: the responder of `game`'s protocol, answering as
    /// that game's servers do.
    fn start_game(game: &str) -> Serve {
        Serve::launch(
            &[
                "--game".to_owned(),
                game.to_owned(),
                "127.0.0.1:0".to_owned(),
            ],
            1,
        )
    }

    /// `gsq serve` with `args`, once it has printed `listening` addresses.
    fn launch(args: &[String], listening: usize) -> Serve {
        Serve::launch_from(&state_file(), args, listening)
    }

    /// [`Serve::launch`], serving the state file at `state`.
    fn launch_from(state: &Path, args: &[String], listening: usize) -> Serve {
        let mut command = Command::new(env!("CARGO_BIN_EXE_gsq"));
        command.arg("serve").arg(state).args(args);
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
        while serve.addresses.len() < listening {
            let line = match lines_rx.recv_timeout(SERVE_STARTUP) {
                Ok(line) => line,
                Err(mpsc::RecvTimeoutError::Disconnected) => panic!(
                    "gsq serve closed its output after printing {:?}: {:?} (its stderr is above)",
                    serve.addresses,
                    serve.child.wait()
                ),
                Err(mpsc::RecvTimeoutError::Timeout) => panic!(
                    "gsq serve printed {:?} and then nothing for {SERVE_STARTUP:?}",
                    serve.addresses
                ),
            };
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

/// A UDP relay between clients and `gsq serve` that counts the datagrams each way, so a
/// test can tell how many datagrams the server answered each request with.
///
/// Like a NAT, it gives each client address a socket of its own towards the server, so a
/// late datagram of one request's reply goes back to the socket that asked, never to the one
/// a client opened for its next request.
struct CountingRelay {
    address: SocketAddr,
    /// How many reply datagrams each request got, by request in arrival order.
    counts: Arc<Mutex<Vec<usize>>>,
    stop: Arc<AtomicBool>,
    /// The thread that reads requests and starts a reply thread per client.
    requests: Option<JoinHandle<()>>,
    /// The reply threads.
    threads: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl CountingRelay {
    /// Relays 127.0.0.1:<free port> to `server`.
    fn start(server: SocketAddr) -> CountingRelay {
        let front = UdpSocket::bind("127.0.0.1:0").expect("bind the relay's front");
        let poll = Some(Duration::from_millis(50));
        front.set_read_timeout(poll).expect("read timeout");
        let address = front.local_addr().expect("relay address");
        let counts: Arc<Mutex<Vec<usize>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let threads: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();

        let requests = {
            let (counts, stop, threads) =
                (Arc::clone(&counts), Arc::clone(&stop), Arc::clone(&threads));
            std::thread::spawn(move || {
                // Per client: the socket towards the server, and the index of the client's
                // latest request, which the replies on that socket count towards.
                let mut backs: HashMap<SocketAddr, (UdpSocket, Arc<AtomicUsize>)> = HashMap::new();
                let mut buf = [0u8; 65_536];
                while !stop.load(Ordering::Relaxed) {
                    let Ok((len, from)) = front.recv_from(&mut buf) else {
                        continue;
                    };
                    let (back, latest) = backs.entry(from).or_insert_with(|| {
                        let back = UdpSocket::bind("127.0.0.1:0").expect("bind a relay socket");
                        back.connect(server)
                            .expect("connect the relay to gsq serve");
                        back.set_read_timeout(poll).expect("read timeout");
                        let latest = Arc::new(AtomicUsize::new(0));
                        let replies = Self::replies(
                            back.try_clone().expect("clone"),
                            front.try_clone().expect("clone"),
                            from,
                            Arc::clone(&latest),
                            Arc::clone(&counts),
                            Arc::clone(&stop),
                        );
                        threads.lock().unwrap().push(replies);
                        (back, latest)
                    });
                    {
                        let mut counts = counts.lock().unwrap();
                        latest.store(counts.len(), Ordering::Relaxed);
                        counts.push(0);
                    }
                    let _ = back.send(&buf[..len]);
                }
            })
        };
        CountingRelay {
            address,
            counts,
            stop,
            requests: Some(requests),
            threads,
        }
    }

    /// Forwards what the server sends on `back` to `client`, counting each datagram towards
    /// the client's `latest` request.
    fn replies(
        back: UdpSocket,
        front: UdpSocket,
        client: SocketAddr,
        latest: Arc<AtomicUsize>,
        counts: Arc<Mutex<Vec<usize>>>,
        stop: Arc<AtomicBool>,
    ) -> JoinHandle<()> {
        std::thread::spawn(move || {
            let mut buf = [0u8; 65_536];
            while !stop.load(Ordering::Relaxed) {
                if let Ok(len) = back.recv(&mut buf) {
                    counts.lock().unwrap()[latest.load(Ordering::Relaxed)] += 1;
                    let _ = front.send_to(&buf[..len], client);
                }
            }
        })
    }

    /// How many reply datagrams followed each request, in order.
    fn replies_per_request(&self) -> Vec<usize> {
        self.counts.lock().unwrap().clone()
    }
}

impl Drop for CountingRelay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // The request thread starts no reply thread once it saw `stop`: join it first.
        if let Some(requests) = self.requests.take() {
            let _ = requests.join();
        }
        let replies = std::mem::take(&mut *self.threads.lock().unwrap());
        for thread in replies {
            let _ = thread.join();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The clients

/// Reports a missing client: a skip locally, a failure under `CI=true`.
fn client_missing(what: &str) -> Option<PathBuf> {
    let hint = "tests/interop/install.sh installs them, as .ci/run does";
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

    /// A list, element by element, so a difference names the element.
    fn list<T: PartialEq + Debug>(&mut self, field: &str, served: &[T], reported: &[T]) {
        self.field(&format!("{field}: count"), served.len(), reported.len());
        for (i, (served, reported)) in served.iter().zip(reported).enumerate() {
            self.field(&format!("{field}[{i}]"), served, reported);
        }
    }

    /// A JSON object, key by key (keys on either side), so a difference names the key.
    fn object(&mut self, field: &str, served: &serde_json::Map<String, Value>, reported: &Value) {
        let Some(reported) = reported.as_object() else {
            self.field(field, &Value::Object(served.clone()), reported);
            return;
        };
        let mut keys: Vec<&String> = served.keys().chain(reported.keys()).collect();
        keys.sort();
        keys.dedup();
        for key in keys {
            self.field(
                &format!("{field}.{key}"),
                served.get(key),
                reported.get(key),
            );
        }
    }

    /// The keys of a JSON object, exactly: a key the client reports that the test does not
    /// expect is a difference, so no field goes uncompared by accident.
    fn keys(&mut self, field: &str, expected: &[&str], reported: &Value) {
        let mut keys: Vec<&str> = reported
            .as_object()
            .map(|object| object.keys().map(String::as_str).collect())
            .unwrap_or_default();
        keys.sort_unstable();
        let mut expected = expected.to_vec();
        expected.sort_unstable();
        self.field(&format!("{field}: keys"), expected, keys);
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
/// `version` from the state's fields, then the state's rules as text, in order, as many as fit
/// one 1,400-byte datagram (`gsq serve`'s default `--max-datagram`) after the 11-byte header
/// and the two-byte count; each rule takes its two one-byte lengths and its text (one byte a
/// character in Windows-1252).
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
    let mut len = 11 + 2;
    let fitting = rules
        .iter()
        .take_while(|(key, value)| {
            len += 2 + key.chars().count() + value.chars().count();
            len <= 1400
        })
        .count();
    rules.truncate(fitting);
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

/// The top-level fields of every gamedig result: its `Results` class, plus `connect` and `ping`
/// that its core adds, plus `protocol` that `gamedig_query.mjs` adds.
const GAMEDIG_FIELDS: [&str; 13] = [
    "protocol",
    "name",
    "map",
    "password",
    "raw",
    "version",
    "maxplayers",
    "numplayers",
    "players",
    "bots",
    "queryPort",
    "connect",
    "ping",
];

/// The fields every gamedig result has that do not come from the server's data: `queryPort`,
/// the port queried; `ping`, gamedig's own round-trip time, which varies run to run, so only
/// its type and range are checked; `bots`, an empty list, as neither SA:MP nor GameSpy v1
/// lists bots apart from players, and the A2S responder reports 0 bots (gamedig's valve
/// protocol moves that many players into `bots`).
fn compare_gamedig_common(c: &mut Comparison, queried: SocketAddr, reported: &Value) {
    c.keys("top level", &GAMEDIG_FIELDS, reported);
    c.field(
        "queryPort (the port queried)",
        Some(u64::from(queried.port())),
        reported["queryPort"].as_u64(),
    );
    c.field(
        "bots (none in the protocol)",
        Some(&Vec::new()),
        reported["bots"].as_array(),
    );
    let ping = reported["ping"].as_f64();
    c.field(
        "ping (gamedig's round trip: a number under the deadline)",
        true,
        ping.is_some_and(|ms| (0.0..CLIENT_DEADLINE.as_secs_f64() * 1000.0).contains(&ms)),
    );
}

/// The fields of gamedig's `samp` protocol, shared by `gtasam` and `gtasao`; `queried` is the
/// address gamedig was pointed at.
///
/// gamedig names the third string of the `i` reply `raw.map`; since SA:MP 0.3.7 servers send
/// their language there (and so does this responder), so it is compared with the language.
/// gamedig leaves `map` empty for SA:MP (it does not read the `mapname` rule, and its
/// `Results.map` defaults to ""), so `map` must be "" and the map is compared through
/// `raw.rules.mapname`. SA:MP reports no game port, so gamedig's `connect` is the address it
/// queried. The player lists are compared by the callers.
fn compare_gamedig_samp_info(
    c: &mut Comparison,
    state: &ServerState,
    queried: SocketAddr,
    reported: &Value,
) {
    compare_gamedig_common(c, queried, reported);
    c.field("protocol", Some("samp"), json_str(&reported["protocol"]));
    c.field(
        "map (gamedig leaves it empty for SA:MP)",
        Some(""),
        json_str(&reported["map"]),
    );
    c.field(
        "connect (the address queried)",
        Some(queried.to_string()),
        json_str(&reported["connect"]).map(str::to_owned),
    );
    c.keys("raw", &["gamemode", "map", "rules"], &reported["raw"]);
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
    c.list(
        "raw.rules",
        &sorted(samp_rules(state)),
        &sorted_pairs(&reported["raw"]["rules"]),
    );
}

#[test]
fn gamedig_reads_samp() {
    let serve = Serve::start(&["samp"]);
    let queried = serve.address("samp");
    let Some(reported) = gamedig("gtasam", queried) else {
        return;
    };
    let state = served_state();
    let mut c = Comparison::new("gamedig gtasam (SA:MP)");
    compare_gamedig_samp_info(&mut c, &state, queried, &reported);
    // SA:MP's `d` list: id, name, score, ping; gamedig keeps the name and puts the rest, and
    // nothing else, in `raw`. Ids are the list positions (the state sets none).
    let served: Vec<Value> = state
        .players
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let id = p.id.unwrap_or(i as u32);
            serde_json::json!({
                "name": p.name,
                "raw": {"id": id, "score": p.score, "ping": p.ping},
            })
        })
        .collect();
    let players = reported["players"].as_array().cloned().unwrap_or_default();
    c.list("players (name; raw id, score, ping)", &served, &players);
    c.finish();
}

#[test]
fn gamedig_reads_samp_as_open_mp() {
    // gamedig's open.mp protocol asks for the `c` list (name and score: open.mp has no `d`).
    // `gsq serve` has no open.mp mode, so its SA:MP responder answers, which answers `c` too.
    let serve = Serve::start(&["samp"]);
    let queried = serve.address("samp");
    let Some(reported) = gamedig("gtasao", queried) else {
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
    compare_gamedig_samp_info(&mut c, &state, queried, &reported_as_samp);
    // The `c` list has a name and a score per player, no id or ping: `raw` holds the score
    // alone.
    let served: Vec<Value> = state
        .players
        .iter()
        .map(|p| serde_json::json!({"name": p.name, "raw": {"score": p.score}}))
        .collect();
    let players = reported["players"].as_array().cloned().unwrap_or_default();
    c.list(
        "players (name; raw score, no id or ping in `c`)",
        &served,
        &players,
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
    c.keys("result", &["status", "rules", "players"], &reported);
    let status = &reported["status"];
    c.keys(
        "status",
        &[
            "password",
            "num_players",
            "max_players",
            "server_name",
            "game_type",
            "language",
        ],
        status,
    );
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
    c.list("rules", &served_rules, &sorted(rules));
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
    c.list("players (id, name, score, ping)", &served, &players);
    c.finish();
}

// ---------------------------------------------------------------------------------------------
// GameSpy v1

/// The `\key\value` pairs the GameSpy v1 responder sends for `state` outside the player and
/// team lists, as its documentation says: basic (`gamever`), info (`hostname`, `hostport`,
/// `mapname`, `gametype`, `numplayers`, `maxplayers`), rules (`password` as `0`/`1`, then the
/// state's rules as text).
fn gamespy_server_pairs(state: &ServerState) -> Vec<(String, String)> {
    let mut pairs = vec![
        ("gamever".to_owned(), state.version.clone()),
        ("hostname".to_owned(), state.name.clone()),
        ("hostport".to_owned(), state.port.to_string()),
        ("mapname".to_owned(), state.map.clone()),
        ("gametype".to_owned(), state.game_type.clone()),
        ("numplayers".to_owned(), state.num_players().to_string()),
        ("maxplayers".to_owned(), state.max_players.to_string()),
        ("password".to_owned(), u8::from(state.password).to_string()),
    ];
    for (key, value) in &state.rules {
        let text = match value {
            RuleValue::Text(text) => text.clone(),
            other => other.to_string(),
        };
        pairs.push((key.clone(), text));
    }
    pairs
}

/// The team number the responder sends for a player: the position of the player's team in the
/// state's team list.
fn gamespy_team_number(state: &ServerState, team: Option<&str>) -> Option<usize> {
    state
        .teams
        .iter()
        .position(|t| Some(t.name.as_str()) == team)
}

/// gamedig's `normalizeEntry` for GameSpy v1 values: keys are lowercased; values become
/// `true`/`false` or a number when they read as one, except for the keys it keeps as text
/// (`website`, `gametype`, `gamemode`, `player`, and any key containing `name`).
fn gamedig_value(key: &str, text: &str) -> Value {
    let key = key.to_lowercase();
    let key_type = match key.split_once('_') {
        Some((kind, index)) if index.parse::<u64>().is_ok() => kind,
        _ => key.as_str(),
    };
    let kept_as_text = matches!(key_type, "website" | "gametype" | "gamemode" | "player")
        || key_type.contains("name");
    if kept_as_text {
        return Value::from(text);
    }
    if text.eq_ignore_ascii_case("true") {
        return Value::from(true);
    }
    if text.eq_ignore_ascii_case("false") {
        return Value::from(false);
    }
    if let Ok(integer) = text.parse::<i64>() {
        return Value::from(integer);
    }
    match text.parse::<f64>() {
        Ok(float) if !text.is_empty() => Value::from(float),
        _ => Value::from(text),
    }
}

/// How many datagrams the GameSpy v1 responder splits its `\status\` reply to `state` into,
/// by the library's own splitting, with the settings `gsq serve` uses here (Windows-1252,
/// 1400-byte datagrams, no game name).
fn gamespy_status_parts(state: &ServerState) -> usize {
    let config = GameSpy1Config {
        encoding: TextEncoding::Windows1252,
        ..GameSpy1Config::default()
    };
    let responder = GameSpy1Responder::new(SharedState::new(state.clone()), config);
    let mut service = Service::new(responder).rate_limit(None);
    let from: SocketAddr = "127.0.0.1:40000".parse().expect("an address");
    service.handle(from, b"\\status\\").count()
}

/// The served state needs a GameSpy v1 reply of several datagrams, and the client got every
/// datagram of it for each request it sent (counted by `relay`), so a client that only reads
/// one-datagram replies cannot pass.
fn compare_gamespy_datagrams(c: &mut Comparison, state: &ServerState, relay: &CountingRelay) {
    let parts = gamespy_status_parts(state);
    assert!(
        parts >= 2,
        "the served state's GameSpy v1 reply fits {parts} datagram(s); the interop test needs \
         several, so add players to tests/interop/state.toml"
    );
    let per_request = relay.replies_per_request();
    c.field(
        "requests seen by the relay (at least one)",
        true,
        !per_request.is_empty(),
    );
    for (i, count) in per_request.iter().enumerate() {
        c.field(&format!("datagrams answering request {i}"), parts, *count);
    }
}

#[test]
fn gamedig_reads_gamespy1() {
    let serve = Serve::start(&["gamespy1"]);
    let relay = CountingRelay::start(serve.address("gamespy1"));
    let Some(reported) = gamedig("unrealtournament", relay.address) else {
        return;
    };
    let state = served_state();
    let mut c = Comparison::new("gamedig unrealtournament (GameSpy v1)");
    compare_gamespy_datagrams(&mut c, &state, &relay);
    compare_gamedig_common(&mut c, relay.address, &reported);
    c.field(
        "protocol (gamedig's for unrealtournament)",
        Some("gamespy1"),
        json_str(&reported["protocol"]),
    );
    c.field(
        "name",
        Some(state.name.as_str()),
        json_str(&reported["name"]),
    );
    c.field("map", Some(state.map.as_str()), json_str(&reported["map"]));
    c.field(
        "password",
        Some(state.password),
        reported["password"].as_bool(),
    );
    c.field(
        "maxplayers",
        Some(u64::from(state.max_players)),
        reported["maxplayers"].as_u64(),
    );
    c.field(
        "numplayers",
        Some(state.players.len() as u64),
        reported["numplayers"].as_u64(),
    );
    c.field(
        "version (gamever)",
        Some(state.version.as_str()),
        json_str(&reported["version"]),
    );
    let connect = format!("{}:{}", relay.address.ip(), state.port);
    c.field(
        "connect (host and hostport)",
        Some(connect.as_str()),
        json_str(&reported["connect"]),
    );

    // `raw`: every server key, normalized by gamedig, and the team names by number. gamedig
    // drops the other team keys (`teamscore_N`: "other team info which we don't track").
    let mut served_raw = serde_json::Map::new();
    for (key, text) in gamespy_server_pairs(&state) {
        served_raw.insert(key.to_lowercase(), gamedig_value(&key, &text));
    }
    let teams: serde_json::Map<String, Value> = state
        .teams
        .iter()
        .enumerate()
        .map(|(i, t)| (i.to_string(), Value::from(t.name.as_str())))
        .collect();
    served_raw.insert("teams".to_owned(), Value::Object(teams));
    c.object("raw", &served_raw, &reported["raw"]);

    // Players: name, frags, ping, and the team by number (`teamId`) and by name.
    let served: Vec<Value> = state
        .players
        .iter()
        .map(|p| {
            let team = gamespy_team_number(&state, p.team.as_deref());
            serde_json::json!({
                "name": p.name,
                "raw": {
                    "frags": p.score,
                    "ping": p.ping,
                    "teamId": team,
                    "team": team.map(|i| state.teams[i].name.as_str()),
                },
            })
        })
        .collect();
    let players = reported["players"].as_array().cloned().unwrap_or_default();
    c.list("players", &served, &players);
    c.finish();
}

#[test]
fn opengsq_reads_gamespy1() {
    let serve = Serve::start(&["gamespy1"]);
    let relay = CountingRelay::start(serve.address("gamespy1"));
    let Some(reported) = opengsq("gamespy1", relay.address) else {
        return;
    };
    let state = served_state();
    let mut c = Comparison::new("opengsq GameSpy1");
    compare_gamespy_datagrams(&mut c, &state, &relay);
    c.keys("result", &["info", "players", "teams"], &reported);
    // opengsq lowercases keys, strips values of surrounding white space, and decodes text as
    // UTF-8 dropping what does not decode (see `as_opengsq_decodes`).
    let decoded = |text: &str| as_opengsq_decodes(text).trim().to_owned();
    let info: serde_json::Map<String, Value> = gamespy_server_pairs(&state)
        .into_iter()
        .map(|(k, v)| (decoded(&k).to_lowercase(), Value::from(decoded(&v))))
        .collect();
    c.object("info", &info, &reported["info"]);
    let players: Vec<Value> = state
        .players
        .iter()
        .map(|p| {
            let mut player = serde_json::json!({
                "player": decoded(&p.name),
                "frags": p.score.to_string(),
                "ping": p.ping.to_string(),
            });
            if let Some(team) = gamespy_team_number(&state, p.team.as_deref()) {
                player["team"] = Value::from(team.to_string());
            }
            player
        })
        .collect();
    let reported_players = reported["players"].as_array().cloned().unwrap_or_default();
    c.list("players", &players, &reported_players);
    // opengsq names `teamname_N` `team`.
    let teams: Vec<Value> = state
        .teams
        .iter()
        .map(|t| serde_json::json!({"team": decoded(&t.name), "teamscore": t.score.to_string()}))
        .collect();
    let reported_teams = reported["teams"].as_array().cloned().unwrap_or_default();
    c.list("teams", &teams, &reported_teams);
    c.finish();
}

// ---------------------------------------------------------------------------------------------
// A2S

/// The game folder the A2S tests serve (`--a2s-folder`).
const A2S_FOLDER: &str = "tf";
/// The Steam app id the A2S tests serve (`--a2s-app-id`): Team Fortress 2, which neither
/// client treats specially (gamedig does CS:GO, CS:Source, Rust and a few others, and both
/// The Ship).
const A2S_APP_ID: u16 = 440;
/// The keywords the A2S tests serve (`--a2s-keywords`), one of them not ASCII.
const A2S_KEYWORDS: &str = "ctf,increased_maxplayers,Zoë";

/// `gsq serve --a2s` with a folder, an app id and keywords, so that INFO carries every field
/// the responder can fill; the game name is left to the state's game type, and INFO is
/// challenged, as `gsq serve` does by default.
fn serve_a2s() -> Serve {
    let app_id = A2S_APP_ID.to_string();
    Serve::start_with(
        &["a2s"],
        &[
            "--a2s-folder",
            A2S_FOLDER,
            "--a2s-app-id",
            &app_id,
            "--a2s-keywords",
            A2S_KEYWORDS,
        ],
    )
}

/// The responder configuration `gsq serve` builds from [`serve_a2s`]'s options: those three,
/// and the defaults for the rest (protocol 17, a dedicated server on this machine's OS, no
/// VAC, no SteamID or game id, INFO challenged).
fn a2s_config() -> A2sConfig {
    A2sConfig {
        folder: A2S_FOLDER.to_owned(),
        app_id: A2S_APP_ID,
        keywords: A2S_KEYWORDS.to_owned(),
        ..A2sConfig::default()
    }
}

/// The A2S responder's replies stop adding PLAYER rows and RULES pairs past this many bytes;
/// the served state must stay under it, or the expectations would have to model the cut.
const A2S_MAX_REPLY: usize = 32 * 1024;

/// `text` as the A2S responder sends it (its `wire_text`): up to its first NUL (which would end
/// the string on the wire), cut to 255 bytes between characters, as UTF-8.
fn a2s_text(text: &str) -> String {
    let text = text.split('\0').next().unwrap_or_default();
    let mut end = text.len().min(255);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

/// A count in one of INFO's u8 fields: the responder saturates it at 255.
fn a2s_count(n: u32) -> u8 {
    u8::try_from(n).unwrap_or(u8::MAX)
}

/// What the A2S responder's INFO carries for `state` under `config`, as its `info` and
/// `keywords` build it (query-net's `engines::a2s::responder`, documented in the module's
/// "Mapping").
#[derive(Debug)]
struct A2sInfo {
    protocol: u8,
    name: String,
    map: String,
    folder: String,
    /// The configured game name, else the state's game type.
    game: String,
    app_id: u16,
    players: u8,
    max_players: u8,
    /// Always 0: the state has no bots.
    bots: u8,
    server_type: u8,
    environment: u8,
    /// The visibility byte: 1 when the state has a password.
    password: bool,
    vac: bool,
    version: String,
    /// The extra data flags, one bit per optional field sent.
    flags: u8,
    /// The state's game port, sent unless 0.
    port: Option<u16>,
    steam_id: Option<u64>,
    /// The configured keywords, after `cp<N>,mp<N>` when a count does not fit a u8; sent
    /// unless empty.
    keywords: Option<String>,
    game_id: Option<u64>,
}

fn a2s_info(state: &ServerState, config: &A2sConfig) -> A2sInfo {
    let game = if config.game.is_empty() {
        &state.game_type
    } else {
        &config.game
    };
    let (players, slots) = (state.num_players(), state.max_players);
    let mut keywords = config.keywords.clone();
    if players > u32::from(u8::MAX) || slots > u32::from(u8::MAX) {
        let counts = format!("cp{players},mp{slots}");
        keywords = if keywords.is_empty() {
            counts
        } else {
            format!("{counts},{keywords}")
        };
    }
    let keywords = Some(a2s_text(&keywords)).filter(|k| !k.is_empty());
    let port = Some(state.port).filter(|&p| p != 0);
    let mut flags = 0;
    for (present, bit) in [
        (port.is_some(), EDF_PORT),
        (config.steam_id.is_some(), EDF_STEAM_ID),
        (keywords.is_some(), EDF_KEYWORDS),
        (config.game_id.is_some(), EDF_GAME_ID),
    ] {
        if present {
            flags |= bit;
        }
    }
    A2sInfo {
        protocol: config.protocol,
        name: a2s_text(&state.name),
        map: a2s_text(&state.map),
        folder: a2s_text(&config.folder),
        game: a2s_text(game),
        app_id: config.app_id,
        players: a2s_count(players),
        max_players: a2s_count(slots),
        bots: 0,
        server_type: config.server_type,
        environment: config.environment,
        password: state.password,
        vac: config.vac,
        version: a2s_text(&state.version),
        flags,
        port,
        steam_id: config.steam_id,
        keywords,
        game_id: config.game_id,
    }
}

/// The PLAYER rows the A2S responder sends for `state`, as its `players` builds them: the first
/// 255 players (the count is a u8), each name as [`a2s_text`], the score saturated to an i32.
/// The duration, which the state does not have, is 0 for every row, so it is not returned.
fn a2s_players(state: &ServerState) -> Vec<(String, i32)> {
    let rows: Vec<(String, i32)> = state
        .players
        .iter()
        .take(usize::from(u8::MAX))
        .map(|p| {
            let score =
                i32::try_from(p.score).unwrap_or(if p.score < 0 { i32::MIN } else { i32::MAX });
            (a2s_text(&p.name), score)
        })
        .collect();
    // Header, count, then per row: index, name, NUL, score, duration.
    let size: usize = 6 + rows.iter().map(|(name, _)| 10 + name.len()).sum::<usize>();
    assert!(
        size <= A2S_MAX_REPLY,
        "the served state's PLAYER reply ({size} bytes) passes the responder's cut"
    );
    rows
}

/// The RULES pairs the A2S responder sends for `state`, as its `rules` and `rule_text` build
/// them: in the state's order, each value as a Source cvar shows it (a flag as `1`/`0`, where
/// SA:MP and GameSpy v1 send `true`/`false`; a number in Rust's formatting; text as it is),
/// names and values as [`a2s_text`].
fn a2s_rules(state: &ServerState) -> Vec<(String, String)> {
    let rules: Vec<(String, String)> = state
        .rules
        .iter()
        .map(|(name, value)| {
            let text = match value {
                RuleValue::Bool(flag) => if *flag { "1" } else { "0" }.to_owned(),
                RuleValue::Text(text) => text.clone(),
                other => other.to_string(),
            };
            (a2s_text(name), a2s_text(&text))
        })
        .collect();
    let size = a2s_rules_payload(&rules).len() + 5;
    assert!(
        size <= A2S_MAX_REPLY,
        "the served state's RULES reply ({size} bytes) passes the responder's cut"
    );
    rules
}

/// The RULES reply after its 4-byte header and kind byte: the pair count (u16, little-endian),
/// then each name and value NUL-terminated.
fn a2s_rules_payload(rules: &[(String, String)]) -> Vec<u8> {
    let count = u16::try_from(rules.len()).expect("at most 65535 rules");
    let mut bytes = count.to_le_bytes().to_vec();
    for (name, value) in rules {
        for text in [name, value] {
            bytes.extend_from_slice(text.as_bytes());
            bytes.push(0);
        }
    }
    bytes
}

/// How many datagrams the A2S responder answers a challenged PLAYER (`b'U'`) or RULES
/// (`b'V'`) request with, for `state` under `config`, by the library's own splitting (one
/// reply, or Source parts of at most 1400 bytes).
fn a2s_reply_parts(state: &ServerState, config: &A2sConfig, kind: u8) -> usize {
    let responder = A2sResponder::new(SharedState::new(state.clone()), config.clone());
    let mut service = Service::new(responder).rate_limit(None);
    let from: SocketAddr = "127.0.0.1:40000".parse().expect("an address");
    let mut request = vec![0xff, 0xff, 0xff, 0xff, kind, 0xff, 0xff, 0xff, 0xff];
    let challenge = service
        .handle(from, &request)
        .next()
        .expect("a challenge")
        .to_vec();
    assert_eq!(challenge.len(), 9, "not a challenge: {challenge:?}");
    assert_eq!(&challenge[..5], b"\xff\xff\xff\xffA", "not a challenge");
    request[5..].copy_from_slice(&challenge[5..]);
    service.handle(from, &request).count()
}

/// The datagrams each request of an A2S client got, counted by `relay`, against `expected`.
/// The served state needs a RULES reply of several Source parts, so a client that reads only
/// one-datagram replies cannot pass.
fn compare_a2s_datagrams(
    c: &mut Comparison,
    requests: &str,
    expected: &[usize],
    rules_parts: usize,
    relay: &CountingRelay,
) {
    assert!(
        rules_parts >= 2,
        "the served state's A2S RULES reply fits {rules_parts} datagram(s); the interop test \
         needs several, so add rules to tests/interop/state.toml"
    );
    c.list(
        &format!("datagrams answering each request ({requests})"),
        expected,
        &relay.replies_per_request(),
    );
}

/// A number as JavaScript's JSON.stringify writes it: without a fraction when it has none.
fn js_number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 2f64.powi(53) {
        Value::from(n as i64)
    } else {
        Value::from(n)
    }
}

/// gamedig's valve protocol reports the players out of the wire order: its `cleanup` sorts
/// `raw.players` by connection time, ascending (a stable sort), then pops from the end, first
/// `raw.numbots` rows into `bots`, then the rest into `players`. So `players` comes longest
/// connected first, and among equal durations, as here (the responder sends 0 for every row),
/// in reverse wire order. `raw.players` keeps the wire order.
fn as_gamedig_orders_players<T>(mut wire_order: Vec<T>) -> Vec<T> {
    wire_order.reverse();
    wire_order
}

#[test]
fn gamedig_reads_a2s() {
    let serve = serve_a2s();
    let relay = CountingRelay::start(serve.address("a2s"));
    let Some(reported) = gamedig("a2s", relay.address) else {
        return;
    };
    let state = served_state();
    let config = a2s_config();
    let info = a2s_info(&state, &config);
    let mut c = Comparison::new("gamedig protocol-valve (A2S)");

    // gamedig sends INFO without a challenge first, and again with the challenge the responder
    // answers that with appended; PLAYER and RULES carry that challenge, so they are answered
    // at once.
    let rules_parts = a2s_reply_parts(&state, &config, b'V');
    let expected = [1, 1, a2s_reply_parts(&state, &config, b'U'), rules_parts];
    compare_a2s_datagrams(
        &mut c,
        "INFO: a challenge, INFO with it: the reply, PLAYER, RULES",
        &expected,
        rules_parts,
        &relay,
    );

    compare_gamedig_common(&mut c, relay.address, &reported);
    c.field("protocol", Some("valve"), json_str(&reported["protocol"]));
    // gamedig trims the name (servers pad it to sort first).
    c.field(
        "name (trimmed)",
        Some(info.name.trim()),
        json_str(&reported["name"]),
    );
    c.field("map", Some(info.map.as_str()), json_str(&reported["map"]));
    c.field(
        "password (visibility)",
        Some(info.password),
        reported["password"].as_bool(),
    );
    c.field(
        "version",
        Some(info.version.as_str()),
        json_str(&reported["version"]),
    );
    // gamedig reads counts from the `cp`/`mp` keywords only for Rust's app id.
    c.field(
        "maxplayers",
        Some(u64::from(info.max_players)),
        reported["maxplayers"].as_u64(),
    );
    c.field(
        "numplayers",
        Some(u64::from(info.players)),
        reported["numplayers"].as_u64(),
    );
    // The host gamedig was given and the game port INFO carries (the queried port without
    // one).
    let connect = format!(
        "{}:{}",
        relay.address.ip(),
        info.port.unwrap_or(relay.address.port())
    );
    c.field(
        "connect (host and game port)",
        Some(connect.as_str()),
        json_str(&reported["connect"]),
    );

    // `raw`: INFO's other fields by gamedig's names (the server type and environment as
    // characters, VAC as `secure`), the keywords split at commas as `tags`, the SteamID as
    // text; then the lists, compared below.
    let raw = &reported["raw"];
    let mut served_raw = serde_json::json!({
        "protocol": info.protocol,
        "folder": info.folder,
        "game": info.game,
        "appId": info.app_id,
        "numbots": info.bots,
        "listentype": char::from(info.server_type).to_string(),
        "environment": char::from(info.environment).to_string(),
        "secure": u8::from(info.vac),
    });
    if let Some(keywords) = &info.keywords {
        served_raw["tags"] = keywords.split(',').collect::<Vec<_>>().into();
    }
    if let Some(steam_id) = info.steam_id {
        served_raw["steamid"] = steam_id.to_string().into();
    }
    let lists = ["players", "rules", "rulesBytes"];
    let mut reported_raw = raw.as_object().cloned().unwrap_or_default();
    for list in lists {
        c.field(
            &format!("raw.{list} (present)"),
            true,
            reported_raw.remove(list).is_some(),
        );
    }
    let served_raw = served_raw.as_object().expect("an object");
    c.object("raw", served_raw, &Value::Object(reported_raw));

    let rows = a2s_players(&state);
    let wire_order: Vec<Value> = rows
        .iter()
        .map(|(name, score)| serde_json::json!({"name": name, "score": score, "time": js_number(0.0)}))
        .collect();
    let reported_rows = raw["players"].as_array().cloned().unwrap_or_default();
    c.list(
        "raw.players (wire order: name, score, time)",
        &wire_order,
        &reported_rows,
    );
    let players: Vec<Value> = as_gamedig_orders_players(rows)
        .into_iter()
        .map(|(name, score)| {
            serde_json::json!({"name": name, "raw": {"score": score, "time": js_number(0.0)}})
        })
        .collect();
    let reported_players = reported["players"].as_array().cloned().unwrap_or_default();
    c.list(
        "players (gamedig's order: name; raw score, time)",
        &players,
        &reported_players,
    );

    // The rules as a JS object (no order), and the RULES payload as gamedig kept it, byte for
    // byte, which shows the order and the count too.
    let rules = a2s_rules(&state);
    c.list(
        "raw.rules",
        &sorted(rules.clone()),
        &sorted_pairs(&raw["rules"]),
    );
    let bytes = &raw["rulesBytes"];
    c.keys("raw.rulesBytes", &["type", "data"], bytes);
    c.field(
        "raw.rulesBytes.type",
        Some("Buffer"),
        json_str(&bytes["type"]),
    );
    let payload: Vec<u64> = a2s_rules_payload(&rules)
        .into_iter()
        .map(u64::from)
        .collect();
    let reported_payload: Vec<u64> = bytes["data"]
        .as_array()
        .map(|data| {
            data.iter()
                .map(|b| b.as_u64().unwrap_or(u64::MAX))
                .collect()
        })
        .unwrap_or_default();
    c.list(
        "raw.rulesBytes.data (RULES after its kind byte)",
        &payload,
        &reported_payload,
    );
    c.finish();
}

/// opengsq's name for INFO's server type: `ServerType.parse` lowercases the byte and looks it
/// up (`d`, `l`, `p`), failing the query on any other.
fn opengsq_server_type(byte: u8) -> String {
    let member = match byte.to_ascii_lowercase() {
        b'd' => "Dedicated",
        b'l' => "Listen",
        b'p' => "Proxy",
        other => panic!("opengsq cannot read server type {other:#04x}"),
    };
    format!("ServerType.{member}")
}

/// opengsq's name for INFO's environment: `Environment.parse` lowercases the byte, and reads
/// `l` and `w` as Linux and Windows and anything else as Mac (`m`, or `o` before L4D).
fn opengsq_environment(byte: u8) -> String {
    let member = match byte.to_ascii_lowercase() {
        b'l' => "Linux",
        b'w' => "Windows",
        _ => "Mac",
    };
    format!("Environment.{member}")
}

#[test]
fn opengsq_reads_a2s() {
    let serve = serve_a2s();
    let relay = CountingRelay::start(serve.address("a2s"));
    let Some(reported) = opengsq("a2s", relay.address) else {
        return;
    };
    let state = served_state();
    let config = a2s_config();
    let info = a2s_info(&state, &config);
    let mut c = Comparison::new("opengsq Source (A2S)");

    // opengsq's get_info, get_players and get_rules each send their request without a
    // challenge (PLAYER and RULES with -1), then again with the challenge the responder
    // answers with.
    let rules_parts = a2s_reply_parts(&state, &config, b'V');
    let expected = [
        1,
        1,
        1,
        a2s_reply_parts(&state, &config, b'U'),
        1,
        rules_parts,
    ];
    compare_a2s_datagrams(
        &mut c,
        "INFO, PLAYER, RULES: each a challenge, then the reply",
        &expected,
        rules_parts,
        &relay,
    );

    c.keys("result", &["info", "players", "rules"], &reported);
    // opengsq decodes text as UTF-8 (dropping undecodable bytes, of which the responder sends
    // none), reads the SteamID and game id as signed, and names the enums' members; the extra
    // data flags come as their number, and The Ship's fields are null for other app ids.
    let as_signed = |id: Option<u64>| id.map(|id| id as i64);
    let served_info = serde_json::json!({
        "protocol": info.protocol,
        "name": info.name,
        "map": info.map,
        "folder": info.folder,
        "game": info.game,
        "id": info.app_id,
        "players": info.players,
        "max_players": info.max_players,
        "bots": info.bots,
        "server_type": opengsq_server_type(info.server_type),
        "environment": opengsq_environment(info.environment),
        "visibility": if info.password { "Visibility.Private" } else { "Visibility.Public" },
        "vac": if info.vac { "VAC.Secured" } else { "VAC.Unsecured" },
        "version": info.version,
        "edf": info.flags,
        "port": info.port,
        "steam_id": as_signed(info.steam_id),
        "spectator_port": null,
        "spectator_name": null,
        "keywords": info.keywords,
        "game_id": as_signed(info.game_id),
        "mode": null,
        "witnesses": null,
        "duration": null,
    });
    c.object(
        "info",
        served_info.as_object().expect("an object"),
        &reported["info"],
    );

    // Players in the wire order; deaths and money are The Ship's, null here.
    let players: Vec<Value> = a2s_players(&state)
        .into_iter()
        .map(|(name, score)| {
            serde_json::json!({
                "name": name,
                "score": score,
                "duration": 0.0,
                "deaths": null,
                "money": null,
            })
        })
        .collect();
    let reported_players = reported["players"].as_array().cloned().unwrap_or_default();
    c.list(
        "players (name, score, duration)",
        &players,
        &reported_players,
    );

    let rules: Vec<(String, String)> = reported["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .map(|pair| {
            (
                json_str(&pair[0]).expect("name").to_owned(),
                json_str(&pair[1]).expect("value").to_owned(),
            )
        })
        .collect();
    c.list("rules", &sorted(a2s_rules(&state)), &sorted(rules));
    c.finish();
}

// ---------------------------------------------------------------------------------------------
// Quake 3

/// The `statusResponse` the Quake 3 responder sends for `state` (with `gsq serve`'s
/// settings: Windows-1252, 1,400-byte datagrams), as datagrams.
fn quake3_status_datagrams(state: &ServerState) -> Vec<Vec<u8>> {
    let responder = Quake3Responder::new(SharedState::new(state.clone()), Quake3Config::default());
    let mut service = Service::new(responder).rate_limit(None);
    let from: SocketAddr = "127.0.0.1:40000".parse().expect("an address");
    service
        .handle(from, b"\xff\xff\xff\xffgetstatus\n")
        .map(<[u8]>::to_vec)
        .collect()
}

/// How many pairs and player lines the first datagram of `datagrams` holds: all that
/// gamedig and opengsq read of a reply.
fn quake3_first_datagram_counts(datagrams: &[Vec<u8>]) -> (usize, usize) {
    let body = &datagrams[0][STATUS_HEADER.len()..];
    let mut lines = body.split(|&b| b == b'\n').filter(|l| !l.is_empty());
    let pairs = lines
        .next()
        .map_or(0, |l| l.iter().filter(|&&b| b == b'\\').count() / 2);
    (pairs, lines.count())
}

/// The pairs the Quake 3 responder sends for `state`, as its documentation says: the server's
/// keys (the game type and version only when set; there is no game name here), then the rules
/// as text, in order, as long as the line of pairs stays within 1,024 bytes (Quake 3's limit
/// on its info string); each pair takes two backslashes and its text (one byte a character in
/// Windows-1252).
fn quake3_pairs(state: &ServerState) -> Vec<(String, String)> {
    let mut pairs = vec![
        ("sv_hostname".to_owned(), state.name.clone()),
        ("mapname".to_owned(), state.map.clone()),
        ("g_gametype".to_owned(), state.game_type.clone()),
        ("version".to_owned(), state.version.clone()),
        ("sv_maxclients".to_owned(), state.max_players.to_string()),
        (
            "g_needpass".to_owned(),
            u8::from(state.password).to_string(),
        ),
    ];
    for (key, value) in &state.rules {
        let text = match value {
            RuleValue::Text(text) => text.clone(),
            other => other.to_string(),
        };
        pairs.push((key.clone(), text));
    }
    let mut len = 0;
    let fitting = pairs
        .iter()
        .take_while(|(key, value)| {
            len += 2 + key.chars().count() + value.chars().count();
            len <= 1024
        })
        .count();
    assert!(fitting > 6, "the server's own keys fit");
    pairs.truncate(fitting);
    pairs
}

/// The served state's reply needs several datagrams, and the relay saw every one of them for
/// each `getstatus` (requests are told from `getinfo` by the order the clients send them in).
/// Neither third-party client joins datagrams: each reads the first, which holds every pair
/// and the player lines that fit after them. Returns the first datagram's pair and player
/// counts.
fn compare_quake3_datagrams(
    c: &mut Comparison,
    state: &ServerState,
    relay: &CountingRelay,
    getstatus_requests: &[usize],
) -> (usize, usize) {
    let datagrams = quake3_status_datagrams(state);
    assert!(
        datagrams.len() >= 2,
        "the served state's Quake 3 reply fits one datagram; the interop test needs several, \
         so add players to tests/interop/state.toml"
    );
    let per_request = relay.replies_per_request();
    for &i in getstatus_requests {
        c.field(
            &format!("datagrams answering getstatus request {i}"),
            Some(datagrams.len()),
            per_request.get(i).copied(),
        );
    }
    let (pairs, players) = quake3_first_datagram_counts(&datagrams);
    c.field(
        "pairs in the first datagram (every pair sent)",
        quake3_pairs(state).len(),
        pairs,
    );
    assert!(players > 0 && players < state.players.len());
    (pairs, players)
}

#[test]
fn gamedig_reads_quake3() {
    let serve = Serve::start(&["quake3"]);
    let relay = CountingRelay::start(serve.address("quake3"));
    let Some(reported) = gamedig("protocol-quake3", relay.address) else {
        return;
    };
    let state = served_state();
    let mut c = Comparison::new("gamedig protocol-quake3");
    let (_, first_players) = compare_quake3_datagrams(&mut c, &state, &relay, &[0]);
    c.keys("top level", &GAMEDIG_FIELDS, &reported);
    c.field(
        "queryPort (the port queried)",
        Some(u64::from(relay.address.port())),
        reported["queryPort"].as_u64(),
    );
    c.field("protocol", Some("quake3"), json_str(&reported["protocol"]));
    c.field(
        "name",
        Some(state.name.as_str()),
        json_str(&reported["name"]),
    );
    c.field("map", Some(state.map.as_str()), json_str(&reported["map"]));
    c.field(
        "version",
        Some(state.version.as_str()),
        json_str(&reported["version"]),
    );
    // gamedig keeps these as the text of the pairs.
    let max_players = state.max_players.to_string();
    c.field(
        "maxplayers (sv_maxclients)",
        Some(max_players.as_str()),
        json_str(&reported["maxplayers"]),
    );
    let password = u8::from(state.password).to_string();
    c.field(
        "password (g_needpass)",
        Some(password.as_str()),
        json_str(&reported["password"]),
    );
    let served_raw: serde_json::Map<String, Value> = quake3_pairs(&state)
        .into_iter()
        .map(|(k, v)| (k, Value::from(v)))
        .collect();
    c.object("raw", &served_raw, &reported["raw"]);

    // The player lines of the first datagram; gamedig files a player with ping 0 as a bot.
    let line = |p: &query_net::state::PlayerState| serde_json::json!({"name": p.name, "raw": {"frags": p.score, "ping": p.ping}});
    let first = &state.players[..first_players];
    let served_players: Vec<Value> = first.iter().filter(|p| p.ping != 0).map(line).collect();
    let served_bots: Vec<Value> = first.iter().filter(|p| p.ping == 0).map(line).collect();
    let players = reported["players"].as_array().cloned().unwrap_or_default();
    let bots = reported["bots"].as_array().cloned().unwrap_or_default();
    c.list("players (ping above 0)", &served_players, &players);
    c.list("bots (ping 0)", &served_bots, &bots);
    c.field(
        "numplayers (players and bots listed)",
        Some(first_players as u64),
        reported["numplayers"].as_u64(),
    );
    c.finish();
}

#[test]
fn opengsq_reads_quake3() {
    let serve = Serve::start(&["quake3"]);
    let relay = CountingRelay::start(serve.address("quake3"));
    let Some(reported) = opengsq("quake3", relay.address) else {
        return;
    };
    let state = served_state();
    let mut c = Comparison::new("opengsq Quake3");
    // Requests: getinfo, then getstatus twice (kept and stripped colour codes).
    let (_, first_players) = compare_quake3_datagrams(&mut c, &state, &relay, &[1, 2]);
    c.field(
        "datagrams answering getinfo",
        Some(1),
        relay.replies_per_request().first().copied(),
    );
    c.keys("result", &["info", "status", "status_stripped"], &reported);
    let decoded = as_opengsq_decodes;
    let pairs: Vec<(String, String)> = quake3_pairs(&state)
        .into_iter()
        .map(|(k, v)| (decoded(&k), decoded(&v)))
        .collect();

    // getinfo: the challenge opengsq sent, the server's keys, and the player count.
    let mut info = serde_json::Map::new();
    info.insert("challenge".to_owned(), Value::from("opengsq"));
    for (key, value) in &pairs[..6] {
        info.insert(key.clone(), Value::from(value.as_str()));
    }
    info.insert(
        "clients".to_owned(),
        Value::from(state.players.len().to_string()),
    );
    c.object("info (getinfo)", &info, &reported["info"]);

    let status_info: serde_json::Map<String, Value> = pairs
        .iter()
        .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
        .collect();
    let players: Vec<Value> = state.players[..first_players]
        .iter()
        .map(|p| {
            serde_json::json!({
                "frags": p.score,
                "ping": p.ping,
                "name": decoded(&p.name),
                "address": "",
            })
        })
        .collect();
    for status in ["status", "status_stripped"] {
        c.object(
            &format!("{status}.info"),
            &status_info,
            &reported[status]["info"],
        );
        let reported_players = reported[status]["players"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        c.list(&format!("{status}.players"), &players, &reported_players);
    }
    c.finish();
}

// ---------------------------------------------------------------------------------------------
// GameSpy 2

/// A rule's text as the GameSpy responders send it: text as it is, other values in their
/// usual spelling (`true`, `0.008`).
fn rule_text(value: &RuleValue) -> String {
    match value {
        RuleValue::Text(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Bytes a text takes in Windows-1252, the encoding `gsq serve` sends here: one a character.
fn cp1252_len(text: &str) -> usize {
    text.chars().count()
}

/// The keys the GameSpy 2 responder writes from the state's fields; a rule of the same name is
/// not sent again.
const GAMESPY2_DECLARED: [&str; 10] = [
    "hostname",
    "gamename",
    "gamever",
    "hostport",
    "mapname",
    "gametype",
    "gamemode",
    "numplayers",
    "maxplayers",
    "password",
];

/// The team cell the GameSpy 2 responder sends for a player: the row of the player's team in
/// the teams table, empty without a team (every team of the served state is in the table, as
/// [`gamespy2_details`] checks).
fn gamespy2_team_cell(state: &ServerState, team: Option<&str>) -> String {
    match team {
        None => String::new(),
        Some(name) => gamespy_team_number(state, Some(name))
            .map_or_else(|| name.to_owned(), |row| row.to_string()),
    }
}

/// The details pairs the GameSpy 2 responder sends for `state` with `gsq serve`'s settings (no
/// game name, Windows-1252, 1,400-byte datagrams), as its documentation says: `hostname`,
/// `gamever`, `hostport`, `mapname`, `gametype`, `numplayers`, `maxplayers`, `password`, then
/// the state's rules as text, in order, as many as fit the one datagram after the tables (team
/// and player rows are kept before rules). The reply is the 5-byte header; the pairs, each its
/// key, value and two NULs, then a NUL; each table a zero byte, the row count, the column
/// names each with its NUL, a NUL, then every cell with its NUL.
fn gamespy2_details(state: &ServerState) -> Vec<(String, String)> {
    let mut pairs = vec![
        ("hostname".to_owned(), state.name.clone()),
        ("gamever".to_owned(), state.version.clone()),
        ("hostport".to_owned(), state.port.to_string()),
        ("mapname".to_owned(), state.map.clone()),
        ("gametype".to_owned(), state.game_type.clone()),
        ("numplayers".to_owned(), state.num_players().to_string()),
        ("maxplayers".to_owned(), state.max_players.to_string()),
        ("password".to_owned(), u8::from(state.password).to_string()),
    ];
    let pair_len = |(key, value): &(String, String)| cp1252_len(key) + cp1252_len(value) + 2;
    let details: usize = pairs.iter().map(pair_len).sum::<usize>() + 1;
    let players: usize = 2
        + ["player_", "score_", "ping_", "team_"]
            .iter()
            .map(|c| c.len() + 1)
            .sum::<usize>()
        + 1
        + state
            .players
            .iter()
            .map(|p| {
                cp1252_len(&p.name)
                    + p.score.to_string().len()
                    + p.ping.to_string().len()
                    + gamespy2_team_cell(state, p.team.as_deref()).len()
                    + 4
            })
            .sum::<usize>();
    let teams: usize = 2
        + ["team_t", "score_t"]
            .iter()
            .map(|c| c.len() + 1)
            .sum::<usize>()
        + 1
        + state
            .teams
            .iter()
            .map(|t| cp1252_len(&t.name) + t.score.to_string().len() + 2)
            .sum::<usize>();
    let fixed = 5 + details + players + teams;
    assert!(
        fixed <= 1400 && state.players.len() < 256 && state.teams.len() < 256,
        "the served state's GameSpy 2 tables take {fixed} bytes: the responder would cut rows, \
         which the interop test does not model"
    );
    let mut room = 1400 - fixed;
    for (key, value) in &state.rules {
        if key.is_empty() || GAMESPY2_DECLARED.contains(&key.as_str()) {
            continue;
        }
        let pair = (key.clone(), rule_text(value));
        let len = pair_len(&pair);
        if len > room {
            break;
        }
        room -= len;
        pairs.push(pair);
    }
    pairs
}

/// gamedig's `halo` (its `gamespy2` protocol: details, players and teams asked in three
/// requests) reads `gsq serve --gamespy2`: name, map, version, password, slots, the game port,
/// every details pair, every player with each column, the teams. gamedig reads the text as
/// Windows-1252 (its `latin1` is Windows-1252), turns the `score`, `ping` and `team` cells into
/// numbers and renames `player_` and `team_t` to `name`, keeping `score_t` as sent. Its table
/// reader takes a count byte over 64 for a missing count; the served state has 48 players.
#[test]
fn gamedig_reads_gamespy2() {
    let serve = Serve::start(&["gamespy2"]);
    let address = serve.address("gamespy2");
    let Some(reported) = gamedig("halo", address) else {
        return;
    };
    let state = served_state();
    let details = gamespy2_details(&state);
    assert!(
        details.len() > 8 + 10 && details.len() < 8 + state.rules.len(),
        "the served state should fill the datagram with some of its rules, not all: {}",
        details.len()
    );
    let mut c = Comparison::new("gamedig halo (GameSpy 2)");
    compare_gamedig_common(&mut c, address, &reported);
    c.field(
        "protocol (gamedig's for halo)",
        Some("gamespy2"),
        json_str(&reported["protocol"]),
    );
    c.field(
        "name",
        Some(state.name.as_str()),
        json_str(&reported["name"]),
    );
    c.field("map", Some(state.map.as_str()), json_str(&reported["map"]));
    c.field(
        "version (gamever)",
        Some(state.version.as_str()),
        json_str(&reported["version"]),
    );
    c.field(
        "password",
        Some(state.password),
        reported["password"].as_bool(),
    );
    c.field(
        "maxplayers",
        Some(u64::from(state.max_players)),
        reported["maxplayers"].as_u64(),
    );
    c.field(
        "numplayers",
        Some(state.players.len() as u64),
        reported["numplayers"].as_u64(),
    );
    let connect = format!("{}:{}", address.ip(), state.port);
    c.field(
        "connect (host and hostport)",
        Some(connect.as_str()),
        json_str(&reported["connect"]),
    );
    // `raw`: every details pair as sent, and the teams table.
    let mut served_raw: serde_json::Map<String, Value> = details
        .iter()
        .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
        .collect();
    let teams: Vec<Value> = state
        .teams
        .iter()
        .map(|t| serde_json::json!({"name": t.name, "score_t": t.score.to_string()}))
        .collect();
    served_raw.insert("teams".to_owned(), Value::from(teams));
    c.object("raw", &served_raw, &reported["raw"]);
    // Players: name, score, ping, and the team's row (an empty cell is left out).
    let served: Vec<Value> = state
        .players
        .iter()
        .map(|p| {
            let mut raw = serde_json::json!({"score": p.score, "ping": p.ping});
            if let Some(row) = gamespy_team_number(&state, p.team.as_deref()) {
                raw["team"] = Value::from(row);
            }
            serde_json::json!({"name": p.name, "raw": raw})
        })
        .collect();
    let players = reported["players"].as_array().cloned().unwrap_or_default();
    c.list("players", &served, &players);
    c.finish();
}

/// opengsq's `GameSpy2` (details, players and teams in one request) reads
/// `gsq serve --gamespy2`: every details pair, every player with each column, the teams.
/// opengsq strips the values (not the keys) of surrounding white space, drops the `_` / `_t`
/// of the column names (`player_` → `player`, `team_t` → `team`), and decodes text as UTF-8
/// dropping what does not decode (see [`as_opengsq_decodes`]).
#[test]
fn opengsq_reads_gamespy2() {
    let serve = Serve::start(&["gamespy2"]);
    let Some(reported) = opengsq("gamespy2", serve.address("gamespy2")) else {
        return;
    };
    let state = served_state();
    let mut c = Comparison::new("opengsq GameSpy2");
    c.keys("result", &["info", "players", "teams"], &reported);
    let decoded = |text: &str| as_opengsq_decodes(text).trim().to_owned();
    let info: serde_json::Map<String, Value> = gamespy2_details(&state)
        .into_iter()
        .map(|(k, v)| (as_opengsq_decodes(&k), Value::from(decoded(&v))))
        .collect();
    c.object("info", &info, &reported["info"]);
    let players: Vec<Value> = state
        .players
        .iter()
        .map(|p| {
            serde_json::json!({
                "player": decoded(&p.name),
                "score": p.score.to_string(),
                "ping": p.ping.to_string(),
                "team": gamespy2_team_cell(&state, p.team.as_deref()),
            })
        })
        .collect();
    let reported_players = reported["players"].as_array().cloned().unwrap_or_default();
    c.list("players", &players, &reported_players);
    let teams: Vec<Value> = state
        .teams
        .iter()
        .map(|t| serde_json::json!({"team": decoded(&t.name), "score": t.score.to_string()}))
        .collect();
    let reported_teams = reported["teams"].as_array().cloned().unwrap_or_default();
    c.list("teams", &teams, &reported_teams);
    c.finish();
}

// ---------------------------------------------------------------------------------------------
// GameSpy 3

/// gamedig's `battlefield2` (its `gamespy3` protocol: the challenge first, then the query,
/// parts joined) reads `gsq serve --gamespy3`. gamedig reads key/values from the first part
/// only, so the served rules that continue into the second part (the interop state has far
/// more than a Battlefield 2 server) come out as field data in its `raw.playerTeamInfo`;
/// the server's own keys, which lead the first part, and every player are compared.
#[test]
fn gamedig_reads_gamespy3() {
    let serve = Serve::start(&["gamespy3"]);
    let Some(reported) = gamedig("battlefield2", serve.address("gamespy3")) else {
        return;
    };
    let state = served_state();
    let mut c = Comparison::new("gamedig battlefield2 (GameSpy 3)");
    c.field(
        "protocol",
        Some("gamespy3"),
        json_str(&reported["protocol"]),
    );
    c.field(
        "name",
        Some(state.name.as_str()),
        json_str(&reported["name"]),
    );
    c.field("map", Some(state.map.as_str()), json_str(&reported["map"]));
    c.field(
        "version",
        Some(state.version.as_str()),
        json_str(&reported["version"]),
    );
    c.field(
        "password",
        Some(state.password),
        reported["password"].as_bool(),
    );
    c.field(
        "maxplayers",
        Some(u64::from(state.max_players)),
        reported["maxplayers"].as_u64(),
    );
    c.field(
        "numplayers",
        Some(state.players.len() as u64),
        reported["numplayers"].as_u64(),
    );
    for (key, served) in [
        ("hostname", state.name.clone()),
        ("mapname", state.map.clone()),
        ("gametype", state.game_type.clone()),
        ("gamever", state.version.clone()),
        ("numplayers", state.players.len().to_string()),
        ("maxplayers", state.max_players.to_string()),
        ("hostport", state.port.to_string()),
    ] {
        c.field(
            &format!("raw.{key}"),
            Some(served.as_str()),
            json_str(&reported["raw"][key]),
        );
    }
    // Every player, in order: name, score, ping (gamedig keeps bots apart only by a key the
    // responder does not send, so all are players).
    let served: Vec<Value> = state
        .players
        .iter()
        .map(|p| serde_json::json!({"name": p.name, "score": p.score, "ping": p.ping}))
        .collect();
    let players: Vec<Value> = reported["players"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|p| serde_json::json!({"name": p["name"], "score": p["raw"]["score"], "ping": p["raw"]["ping"]}))
        .collect();
    c.list("players", &served, &players);
    c.finish();
}

/// The key/values the GameSpy 3 responder sends for `state`, as its documentation says:
/// `hostname`, `gamename` (`game_name`, when there is one), `gamever` and `version`, `mapname`
/// and `map`, `gametype`, `numplayers`, `maxplayers`, `password`, `hostport`, then the state's
/// rules as text, in order, while all the pairs (each its key, value and two NULs, one byte a
/// character in Windows-1252) take at most 8 KiB.
fn gamespy3_pairs(state: &ServerState, game_name: Option<&str>) -> Vec<(String, String)> {
    let mut pairs = vec![("hostname".to_owned(), state.name.clone())];
    if let Some(game_name) = game_name {
        pairs.push(("gamename".to_owned(), game_name.to_owned()));
    }
    for (keys, value) in [
        (&["gamever", "version"][..], &state.version),
        (&["mapname", "map"], &state.map),
        (&["gametype"], &state.game_type),
    ] {
        for key in keys {
            pairs.push(((*key).to_owned(), value.clone()));
        }
    }
    pairs.extend([
        ("numplayers".to_owned(), state.num_players().to_string()),
        ("maxplayers".to_owned(), state.max_players.to_string()),
        ("password".to_owned(), u8::from(state.password).to_string()),
        ("hostport".to_owned(), state.port.to_string()),
    ]);
    let mut bytes: usize = pairs
        .iter()
        .map(|(k, v)| cp1252_len(k) + cp1252_len(v) + 2)
        .sum();
    for (key, value) in &state.rules {
        if key.is_empty() || pairs.iter().any(|(k, _)| k == key) {
            continue;
        }
        let value = rule_text(value);
        bytes += cp1252_len(key) + cp1252_len(&value) + 2;
        if bytes > 8 * 1024 {
            break;
        }
        pairs.push((key.clone(), value));
    }
    pairs
}

/// What opengsq's `GameSpy3` and `GameSpy4` (the same code, with and without the challenge)
/// report for `gsq serve --gamespy3` and `--minecraft-query`: every key/value (opengsq joins the
/// parts before reading them), every player's name, score and team, the teams. opengsq
/// decodes text as UTF-8 and drops what does not decode (see [`as_opengsq_decodes`]), strips
/// the table values of surrounding white space (not the key/values), and loses a column
/// continued into the next part: the `ping_` column, which the second part resumes, comes back
/// for the players of the first part only, and the rest of it under a key named by its first
/// value, which is why each player is compared on the four columns alone. So pings are
/// compared for the players opengsq kept them for, which must be some but not all (gamedig's
/// tests compare every ping).
fn compare_opengsq_gamespy3(
    c: &mut Comparison,
    state: &ServerState,
    game_name: Option<&str>,
    reported: &Value,
) {
    c.keys("result", &["info", "players", "teams"], reported);
    let decoded = |text: &str| as_opengsq_decodes(text);
    let info: serde_json::Map<String, Value> = gamespy3_pairs(state, game_name)
        .into_iter()
        .map(|(k, v)| (decoded(&k), Value::from(decoded(&v))))
        .collect();
    c.object("info", &info, &reported["info"]);
    let reported_players = reported["players"].as_array().cloned().unwrap_or_default();
    let kept = reported_players
        .iter()
        .take_while(|p| p["ping"].is_string())
        .count();
    c.field(
        "players whose ping opengsq kept (some, not all)",
        true,
        kept > 0 && kept < state.players.len(),
    );
    let served: Vec<Value> = state
        .players
        .iter()
        .enumerate()
        .map(|(i, p)| {
            serde_json::json!({
                "name": decoded(&p.name).trim(),
                "score": p.score.to_string(),
                "ping": (i < kept).then(|| p.ping.to_string()),
                "team": p.team.as_deref().map(|t| decoded(t).trim().to_owned()),
            })
        })
        .collect();
    let players: Vec<Value> = reported_players
        .iter()
        .map(|p| {
            ["name", "score", "ping", "team"]
                .iter()
                .map(|&f| (f.to_owned(), p[f].clone()))
                .collect()
        })
        .collect();
    c.list("players", &served, &players);
    let teams: Vec<Value> = state
        .teams
        .iter()
        .map(|t| serde_json::json!({"name": decoded(&t.name).trim(), "score": t.score.to_string()}))
        .collect();
    let reported_teams = reported["teams"].as_array().cloned().unwrap_or_default();
    c.list("teams", &teams, &reported_teams);
}

/// opengsq's `GameSpy3` reads `gsq serve --gamespy3`, which requires the challenge: opengsq's
/// `challenge_required` (a class attribute, off on `GameSpy3`) is set on the instance by
/// `opengsq_query.py`. Without it opengsq sends the query alone and gets the challenge back.
#[test]
fn opengsq_reads_gamespy3() {
    let serve = Serve::start(&["gamespy3"]);
    let Some(reported) = opengsq("gamespy3", serve.address("gamespy3")) else {
        return;
    };
    let state = served_state();
    let mut c = Comparison::new("opengsq GameSpy3 (challenge required)");
    compare_opengsq_gamespy3(&mut c, &state, None, &reported);
    c.finish();
}

/// opengsq's `GameSpy4` (GameSpy 3 with the challenge, as Minecraft's query) reads
/// `gsq serve --minecraft-query`, which sends `gamename` `MINECRAFT`.
#[test]
fn opengsq_reads_minecraft() {
    let serve = Serve::start(&["minecraft-query"]);
    let Some(reported) = opengsq("gamespy4", serve.address("minecraft-query")) else {
        return;
    };
    let state = served_state();
    let mut c = Comparison::new("opengsq GameSpy4 (Minecraft)");
    compare_opengsq_gamespy3(&mut c, &state, Some("MINECRAFT"), &reported);
    c.finish();
}

/// What gamedig's `minecraft` reports for text a server sent in Windows-1252: it reads the
/// GameSpy 4 text as UTF-8 (its `minecraft` type sets `encoding: 'utf8'` for that query), so
/// each byte run that does not form UTF-8 becomes one U+FFFD, as Node's decoder (and Rust's
/// `from_utf8_lossy`, the same rule) replaces it. Minecraft servers send Latin-1 (`§` as the
/// one byte A7), as the Minecraft responder does, so this is gamedig's fault.
fn as_gamedig_minecraft_decodes(text: &str) -> String {
    let bytes = TextEncoding::Windows1252
        .encode(text)
        .unwrap_or_else(|| panic!("{text:?} is not Windows-1252 text"));
    String::from_utf8_lossy(&bytes).into_owned()
}

/// gamedig's `minecraft` reads `gsq serve --minecraft-query`. It runs three queries of the port at
/// once, each allowed to fail (it fails only when all do): the Java edition's status ping over
/// TCP, GameSpy 4 over UDP (its `gamespy3` protocol), and a Bedrock unconnected ping over UDP.
/// `gsq serve` has no TCP listener (the connection is refused) and drops the Bedrock ping (not
/// a GameSpy request), so gamedig reports what its GameSpy 4 result gives, as its source maps
/// it: `name` (white space runs made one space, `§` codes removed, though a `§` sent in
/// Latin-1 has become U+FFFD by then), `numplayers`,
/// `maxplayers` and `players` from it; `map` only from a Bedrock reply and `version` only from
/// the Bedrock or TCP replies, so both are empty; `password` not taken from it, so `false`;
/// `connect` the queried address. `raw` holds each query's result: `gamespy` the GameSpy 4
/// one (its own name, map, version, password and game port), `vanilla` and `bedrock`
/// undefined, which JSON leaves out. Text is read as UTF-8 (see
/// [`as_gamedig_minecraft_decodes`]); gamedig's `gamespy3` parses `team` as an integer, so the
/// team names come out as NaN, which JSON writes as null. Its key/values are read from the
/// first part only (see [`gamedig_reads_gamespy3`]): the server's own keys are compared.
#[test]
fn gamedig_reads_minecraft() {
    let serve = Serve::start(&["minecraft-query"]);
    let address = serve.address("minecraft-query");
    let Some(reported) = gamedig("minecraft", address) else {
        return;
    };
    let state = served_state();
    let decoded = |text: &str| as_gamedig_minecraft_decodes(text);
    let mut c = Comparison::new("gamedig minecraft (GameSpy 4)");
    compare_gamedig_common(&mut c, address, &reported);
    c.field(
        "protocol",
        Some("minecraft"),
        json_str(&reported["protocol"]),
    );
    let name = decoded(&state.name);
    let collapsed = name.split_whitespace().collect::<Vec<_>>().join(" ");
    c.field(
        "name (white space collapsed)",
        Some(collapsed.as_str()),
        json_str(&reported["name"]),
    );
    c.field(
        "map (from Bedrock only)",
        Some(""),
        json_str(&reported["map"]),
    );
    c.field(
        "version (from Java or Bedrock only)",
        Some(""),
        json_str(&reported["version"]),
    );
    c.field(
        "password (not taken from GameSpy 4)",
        Some(false),
        reported["password"].as_bool(),
    );
    c.field(
        "maxplayers",
        Some(u64::from(state.max_players)),
        reported["maxplayers"].as_u64(),
    );
    c.field(
        "numplayers",
        Some(state.players.len() as u64),
        reported["numplayers"].as_u64(),
    );
    c.field(
        "connect (the queried address)",
        Some(address.to_string().as_str()),
        json_str(&reported["connect"]),
    );
    let has_teams = state.players.iter().any(|p| p.team.is_some());
    let served_players: Vec<Value> = state
        .players
        .iter()
        .map(|p| {
            let mut raw = serde_json::json!({"score": p.score, "ping": p.ping});
            if has_teams {
                raw["team"] = Value::Null;
            }
            serde_json::json!({"name": decoded(&p.name), "raw": raw})
        })
        .collect();
    let players = reported["players"].as_array().cloned().unwrap_or_default();
    c.list("players", &served_players, &players);
    c.keys("raw", &["gamespy"], &reported["raw"]);

    // The GameSpy 4 result itself.
    let gamespy = &reported["raw"]["gamespy"];
    let fields: Vec<&str> = GAMEDIG_FIELDS
        .iter()
        .copied()
        .filter(|&f| f != "protocol")
        .collect();
    c.keys("raw.gamespy", &fields, gamespy);
    c.field(
        "raw.gamespy.name",
        Some(name.trim()),
        json_str(&gamespy["name"]),
    );
    c.field(
        "raw.gamespy.map",
        Some(decoded(&state.map).as_str()),
        json_str(&gamespy["map"]),
    );
    c.field(
        "raw.gamespy.version",
        Some(decoded(&state.version).as_str()),
        json_str(&gamespy["version"]),
    );
    c.field(
        "raw.gamespy.password",
        Some(state.password),
        gamespy["password"].as_bool(),
    );
    c.field(
        "raw.gamespy.maxplayers",
        Some(u64::from(state.max_players)),
        gamespy["maxplayers"].as_u64(),
    );
    c.field(
        "raw.gamespy.numplayers",
        Some(state.players.len() as u64),
        gamespy["numplayers"].as_u64(),
    );
    c.field(
        "raw.gamespy.queryPort",
        Some(u64::from(address.port())),
        gamespy["queryPort"].as_u64(),
    );
    let connect = format!("{}:{}", address.ip(), state.port);
    c.field(
        "raw.gamespy.connect (host and hostport)",
        Some(connect.as_str()),
        json_str(&gamespy["connect"]),
    );
    c.field(
        "raw.gamespy.bots",
        Some(&Vec::new()),
        gamespy["bots"].as_array(),
    );
    c.field(
        "raw.gamespy.ping (a number)",
        true,
        gamespy["ping"].is_number(),
    );
    let gamespy_players = gamespy["players"].as_array().cloned().unwrap_or_default();
    c.list("raw.gamespy.players", &served_players, &gamespy_players);
    for (key, served) in [
        ("hostname", state.name.clone()),
        ("gamename", "MINECRAFT".to_owned()),
        ("gamever", state.version.clone()),
        ("version", state.version.clone()),
        ("mapname", state.map.clone()),
        ("map", state.map.clone()),
        ("gametype", state.game_type.clone()),
        ("numplayers", state.players.len().to_string()),
        ("maxplayers", state.max_players.to_string()),
        ("password", u8::from(state.password).to_string()),
        ("hostport", state.port.to_string()),
    ] {
        c.field(
            &format!("raw.gamespy.raw.{key}"),
            Some(decoded(&served).as_str()),
            json_str(&gamespy["raw"][key]),
        );
    }
    c.finish();
}

/// The served rules as the All-Seeing Eye responder sends them, in order, as text.
fn ase_rules(state: &ServerState) -> Vec<(String, String)> {
    state
        .rules
        .iter()
        .map(|(key, value)| (key.clone(), rule_text(value)))
        .collect()
}

/// The rules a client reports: the served rules that fit the one datagram after the server's
/// fields and before the 48 players, which the responder keeps (it leaves rules out first). So
/// the reported rules must be the first of the served ones, some of them and not all (compared
/// as sorted lists: the clients' JSON objects keep no order).
fn compare_ase_rules(c: &mut Comparison, state: &ServerState, reported: &[(String, String)]) {
    let served = ase_rules(state);
    c.field(
        "rules (some, not all: the datagram is full)",
        true,
        !reported.is_empty() && reported.len() < served.len(),
    );
    let first = sorted(served[..reported.len().min(served.len())].to_vec());
    c.list(
        "rules (the first served ones)",
        &first,
        &sorted(reported.to_vec()),
    );
}

/// The players as an ASE client reports them: name, team, score, ping, in the served order.
fn ase_players(state: &ServerState) -> Vec<(String, Option<String>, i64, u32)> {
    state
        .players
        .iter()
        .map(|p| (p.name.clone(), p.team.clone(), p.score, p.ping))
        .collect()
}

/// gamedig's `gtasamta` (Multi Theft Auto, its `ase` protocol) reads `gsq serve --eye`: name,
/// map, version, password, slots, game port, the game's short name and type, the rules that
/// fit, every player (name, team, score, ping). gamedig keeps every value but the players'
/// in `raw` as text, numbers of the players as numbers.
#[test]
fn gamedig_reads_ase() {
    let serve = Serve::start(&["eye"]);
    let address = serve.address("eye");
    let Some(reported) = gamedig("gtasamta", address) else {
        return;
    };
    let state = served_state();
    let mut c = Comparison::new("gamedig gtasamta (All-Seeing Eye)");
    compare_gamedig_common(&mut c, address, &reported);
    c.field("protocol", Some("ase"), json_str(&reported["protocol"]));
    c.field(
        "name",
        Some(state.name.as_str()),
        json_str(&reported["name"]),
    );
    c.field("map", Some(state.map.as_str()), json_str(&reported["map"]));
    c.field(
        "version",
        Some(state.version.as_str()),
        json_str(&reported["version"]),
    );
    c.field(
        "password",
        Some(state.password),
        reported["password"].as_bool(),
    );
    c.field(
        "maxplayers",
        Some(u64::from(state.max_players)),
        reported["maxplayers"].as_u64(),
    );
    c.field(
        "numplayers",
        Some(state.players.len() as u64),
        reported["numplayers"].as_u64(),
    );
    let connect = format!("{}:{}", address.ip(), state.port);
    c.field(
        "connect (host and game port)",
        Some(connect.as_str()),
        json_str(&reported["connect"]),
    );
    c.field(
        "raw.gamename",
        Some("mta"),
        json_str(&reported["raw"]["gamename"]),
    );
    c.field(
        "raw.gametype",
        Some(state.game_type.as_str()),
        json_str(&reported["raw"]["gametype"]),
    );
    // The rest of `raw` is the rules, in order.
    let rules: Vec<(String, String)> = reported["raw"]
        .as_object()
        .map(|raw| {
            raw.iter()
                .filter(|(key, _)| !matches!(key.as_str(), "gamename" | "gametype"))
                .map(|(key, value)| (key.clone(), json_str(value).unwrap_or("?").to_owned()))
                .collect()
        })
        .unwrap_or_default();
    compare_ase_rules(&mut c, &state, &rules);
    let players: Vec<(String, Option<String>, i64, u32)> = reported["players"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|p| {
            (
                json_str(&p["name"]).unwrap_or("?").to_owned(),
                json_str(&p["raw"]["team"]).map(str::to_owned),
                p["raw"]["score"].as_i64().unwrap_or(i64::MIN),
                p["raw"]["ping"].as_u64().map_or(u32::MAX, |n| n as u32),
            )
        })
        .collect();
    c.list(
        "players (name, team, score, ping)",
        &ase_players(&state),
        &players,
    );
    c.finish();
}

/// opengsq's `ASE.get_status` reads `gsq serve --eye`: every field of its status, the rules
/// that fit, every player (name, team, score, ping; skin and time are not sent).
#[test]
fn opengsq_reads_ase() {
    let serve = Serve::start(&["eye"]);
    let Some(reported) = opengsq("ase", serve.address("eye")) else {
        return;
    };
    let state = served_state();
    let mut c = Comparison::new("opengsq ASE");
    c.keys(
        "status",
        &[
            "game_name",
            "game_port",
            "hostname",
            "game_type",
            "map",
            "version",
            "password",
            "num_players",
            "max_players",
            "rules",
            "players",
        ],
        &reported,
    );
    c.field("game_name", Some("mta"), json_str(&reported["game_name"]));
    c.field(
        "game_port",
        Some(u64::from(state.port)),
        reported["game_port"].as_u64(),
    );
    c.field(
        "hostname",
        Some(state.name.as_str()),
        json_str(&reported["hostname"]),
    );
    c.field(
        "game_type",
        Some(state.game_type.as_str()),
        json_str(&reported["game_type"]),
    );
    c.field("map", Some(state.map.as_str()), json_str(&reported["map"]));
    c.field(
        "version",
        Some(state.version.as_str()),
        json_str(&reported["version"]),
    );
    c.field(
        "password",
        Some(state.password),
        reported["password"].as_bool(),
    );
    c.field(
        "num_players",
        Some(state.players.len() as u64),
        reported["num_players"].as_u64(),
    );
    c.field(
        "max_players",
        Some(u64::from(state.max_players)),
        reported["max_players"].as_u64(),
    );
    let rules: Vec<(String, String)> = reported["rules"]
        .as_object()
        .map(|rules| {
            rules
                .iter()
                .map(|(key, value)| (key.clone(), json_str(value).unwrap_or("?").to_owned()))
                .collect()
        })
        .unwrap_or_default();
    compare_ase_rules(&mut c, &state, &rules);
    let players = reported["players"].as_array().cloned().unwrap_or_default();
    let read: Vec<(String, Option<String>, i64, u32)> = players
        .iter()
        .map(|p| {
            (
                json_str(&p["name"]).unwrap_or("?").to_owned(),
                json_str(&p["team"]).map(str::to_owned),
                p["score"].as_i64().unwrap_or(i64::MIN),
                p["ping"].as_u64().map_or(u32::MAX, |n| n as u32),
            )
        })
        .collect();
    c.list(
        "players (name, team, score, ping)",
        &ase_players(&state),
        &read,
    );
    let unsent = players
        .iter()
        .all(|p| p["skin"].is_null() && p["time"].is_null());
    c.field("players' skin and time (not sent)", true, unsent);
    c.finish();
}

/// `text` as the Doom 3 engine responder sends it: Latin-1, a character outside it (the name's
/// em dash) as `?`.
fn doom3_latin1(text: &str) -> String {
    text.chars()
        .map(|c| if u32::from(c) <= 0xff { c } else { '?' })
        .collect()
}

/// What gamedig's Doom 3 engine protocol reported, compared with the served state: name, map,
/// password, slots, the players listed (at most 32, as the engine sends), `si_version`, and
/// each player's name and ping. gamedig files a player whose ping is 0 under `bots` (it reads
/// ETQW's bot flag too, which the responder never sets). `version` is what gamedig makes of
/// the protocol version.
fn compare_gamedig_doom3(c: &mut Comparison, reported: &Value, version: &str) {
    let state = served_state();
    let latin1 = doom3_latin1;
    c.field("protocol", Some("doom3"), json_str(&reported["protocol"]));
    c.field(
        "name",
        Some(latin1(&state.name).as_str()),
        json_str(&reported["name"]),
    );
    c.field(
        "map",
        Some(latin1(&state.map).as_str()),
        json_str(&reported["map"]),
    );
    c.field(
        "password",
        Some(state.password),
        reported["password"].as_bool(),
    );
    c.field(
        "maxplayers",
        Some(u64::from(state.max_players)),
        reported["maxplayers"].as_u64(),
    );
    let listed = &state.players[..state.players.len().min(32)];
    c.field(
        "numplayers (the players listed)",
        Some(listed.len() as u64),
        reported["numplayers"].as_u64(),
    );
    c.field(
        "raw.si_version",
        Some(latin1(&state.version).as_str()),
        json_str(&reported["raw"]["si_version"]),
    );
    c.field(
        "raw.protocolVersion",
        Some(version),
        json_str(&reported["raw"]["protocolVersion"]),
    );
    let served = |bots: bool| -> Vec<(String, u64)> {
        listed
            .iter()
            .filter(|p| (p.ping == 0) == bots)
            .map(|p| (latin1(&p.name), u64::from(p.ping)))
            .collect()
    };
    let reported_list = |key: &str| -> Vec<(String, u64)> {
        reported[key]
            .as_array()
            .map(|players| {
                players
                    .iter()
                    .map(|p| {
                        (
                            json_str(&p["name"]).unwrap_or("?").to_owned(),
                            p["raw"]["ping"].as_u64().unwrap_or(u64::MAX),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    c.list(
        "players (name, ping)",
        &served(false),
        &reported_list("players"),
    );
    c.list("bots (ping 0)", &served(true), &reported_list("bots"));
}

/// gamedig's `doom3` (its Doom 3 engine protocol) against `gsq serve --doom3`.
#[test]
fn gamedig_reads_doom3() {
    let serve = Serve::start(&["doom3"]);
    let Some(reported) = gamedig("doom3", serve.address("doom3")) else {
        return;
    };
    let mut c = Comparison::new("gamedig doom3");
    compare_gamedig_doom3(&mut c, &reported, "1.41");
    c.finish();
}

/// gamedig's `quake4` against `gsq serve --game quake4`: Quake 4's layout, each player with a
/// clan tag (empty: the state has none), which gamedig reads when Doom 3's layout fails.
#[test]
fn gamedig_reads_quake4() {
    let serve = Serve::start_game("quake4");
    let Some(reported) = gamedig("quake4", serve.address("doom3")) else {
        return;
    };
    let mut c = Comparison::new("gamedig quake4");
    compare_gamedig_doom3(&mut c, &reported, "2.85");
    let players = reported["players"].as_array().cloned().unwrap_or_default();
    let clans: Vec<&str> = players
        .iter()
        .filter_map(|p| json_str(&p["raw"]["clantag"]))
        .collect();
    c.field(
        "every player's clan tag (Quake 4's layout read)",
        vec![""; players.len()],
        clans,
    );
    c.finish();
}

/// gamedig's `etqw` against `gsq serve --game etqw`: ETQW's `infoResponse`, the challenge then
/// `FF FF FF FF`, the version and the size. gamedig 5.3.3 reads the `FF FF FF FF` as the
/// protocol version (`-1.65535`: its shift is signed) and the real version and size as one
/// more pair of junk keys before the real ones: a bug of gamedig's (qstat and opengsq read the
/// version after the marker), modelled here. Name, map, slots and players agree.
#[test]
fn gamedig_reads_etqw() {
    let serve = Serve::start_game("etqw");
    let Some(reported) = gamedig("etqw", serve.address("doom3")) else {
        return;
    };
    let mut c = Comparison::new("gamedig etqw");
    compare_gamedig_doom3(&mut c, &reported, "-1.65535");
    c.field(
        "raw.gamename",
        Some("baseETQW-1"),
        json_str(&reported["raw"]["gamename"]),
    );
    c.finish();
}

/// What opengsq reports for Latin-1 text the Doom 3 engine responder sent: it decodes every
/// string as UTF-8 dropping what does not decode, so every non-ASCII Latin-1 character is
/// lost (see `as_opengsq_decodes`).
fn as_opengsq_decodes_latin1(text: &str) -> String {
    let sent = doom3_latin1(text);
    let bytes = TextEncoding::Latin1
        .encode(&sent)
        .unwrap_or_else(|| panic!("{sent:?} is not Latin-1 text"));
    String::from_utf8_lossy(&bytes).replace('\u{fffd}', "")
}

/// opengsq's Doom 3 protocol against `gsq serve` in each game's layout: the pairs (name, map,
/// slots, password), its version, and the players, as `(id, name, ping)`.
///
/// opengsq reads the whole record of a player before it looks at the id, the end marker (32)
/// included, and gives up on a layout that runs past the reply: after Doom 3's end marker
/// only the 4-byte OS mask follows (as real Doom 3 servers send it), shorter than the ping and
/// rate it reads there, so every layout fails and opengsq reports no players for any Doom 3
/// server that sends the mask alone. That bug of opengsq's is modelled: no players for Doom 3.
/// Quake 4's 5 bytes after the mask and ETQW's server fields are long enough.
#[test]
fn opengsq_reads_doom3_quake4_and_etqw() {
    let state = served_state();
    let listed = &state.players[..state.players.len().min(32)];
    let players: Vec<(u64, String, u64)> = listed
        .iter()
        .enumerate()
        .map(|(id, p)| {
            (
                id as u64,
                as_opengsq_decodes_latin1(&p.name),
                u64::from(p.ping),
            )
        })
        .collect();
    for (game, version, game_name, players) in [
        (None, "1.41", "baseDOOM-1", Vec::new()),
        (Some("quake4"), "2.85", "Q4MP", players.clone()),
        (Some("etqw"), "10.21", "baseETQW-1", players.clone()),
    ] {
        let serve = match game {
            Some(game) => Serve::start_game(game),
            None => Serve::start(&["doom3"]),
        };
        let Some(reported) = opengsq("doom3", serve.address("doom3")) else {
            return;
        };
        let mut c = Comparison::new(&format!("opengsq Doom3 ({})", game.unwrap_or("doom3")));
        let info = &reported["info"];
        let decoded = as_opengsq_decodes_latin1;
        c.field(
            "si_name",
            Some(decoded(&state.name)),
            json_str(&info["si_name"]).map(str::to_owned),
        );
        c.field(
            "si_map",
            Some(decoded(&state.map)),
            json_str(&info["si_map"]).map(str::to_owned),
        );
        c.field(
            "si_maxPlayers",
            Some(state.max_players.to_string()),
            json_str(&info["si_maxPlayers"]).map(str::to_owned),
        );
        c.field(
            "si_usepass",
            Some(if state.password { "1" } else { "0" }),
            json_str(&info["si_usepass"]),
        );
        c.field("gamename", Some(game_name), json_str(&info["gamename"]));
        c.field("version", Some(version), json_str(&info["version"]));
        let read: Vec<(u64, String, u64)> = reported["players"]
            .as_array()
            .map(|list| {
                list.iter()
                    .map(|p| {
                        (
                            p["id"].as_u64().unwrap_or(u64::MAX),
                            json_str(&p["name"]).unwrap_or("?").to_owned(),
                            p["ping"].as_u64().unwrap_or(u64::MAX),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        c.list("players (id, name, ping)", &players, &read);
        c.finish();
    }
}

/// gamedig's `unrealtournament2004` (its Unreal 2 protocol) against `gsq serve --unreal2`:
/// details, rules and players, each over as many datagrams as they take (gamedig reads each
/// until its socket timeout, so the test takes a few seconds). gamedig files a player whose
/// ping is 0 under `bots`, and it inverts the password: it reads `GamePassword` as "not
/// True", so a server with a password is reported without one.
#[test]
fn gamedig_reads_unreal2() {
    let serve = Serve::start(&["unreal2"]);
    let address = serve.address("unreal2");
    let Some(reported) = gamedig("unrealtournament2004", address) else {
        return;
    };
    let state = served_state();
    let mut c = Comparison::new("gamedig unrealtournament2004 (Unreal 2)");
    c.field("protocol", Some("unreal2"), json_str(&reported["protocol"]));
    c.field(
        "name",
        Some(state.name.as_str()),
        json_str(&reported["name"]),
    );
    c.field("map", Some(state.map.as_str()), json_str(&reported["map"]));
    c.field(
        "raw.gametype",
        Some(state.game_type.as_str()),
        json_str(&reported["raw"]["gametype"]),
    );
    c.field(
        "password (gamedig inverts GamePassword)",
        Some(!state.password),
        reported["password"].as_bool(),
    );
    c.field(
        "maxplayers",
        Some(u64::from(state.max_players)),
        reported["maxplayers"].as_u64(),
    );
    c.field(
        "numplayers",
        Some(state.players.len() as u64),
        reported["numplayers"].as_u64(),
    );
    for (key, value) in &state.rules {
        let served = match value {
            RuleValue::Text(text) => text.clone(),
            other => other.to_string(),
        };
        c.field(
            &format!("raw.rules.{key}"),
            Some(served.as_str()),
            json_str(&reported["raw"]["rules"][key.as_str()]),
        );
    }
    let served = |bots: bool| -> Vec<(String, i64, u64)> {
        state
            .players
            .iter()
            .filter(|p| (p.ping == 0) == bots)
            .map(|p| (p.name.clone(), p.score, u64::from(p.ping)))
            .collect()
    };
    let reported_list = |key: &str| -> Vec<(String, i64, u64)> {
        reported[key]
            .as_array()
            .map(|players| {
                players
                    .iter()
                    .map(|p| {
                        (
                            json_str(&p["name"]).unwrap_or("?").to_owned(),
                            p["raw"]["score"].as_i64().unwrap_or(i64::MIN),
                            p["raw"]["ping"].as_u64().unwrap_or(u64::MAX),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    c.list(
        "players (name, score, ping)",
        &served(false),
        &reported_list("players"),
    );
    c.list("bots (ping 0)", &served(true), &reported_list("bots"));
    c.finish();
}

/// What opengsq's Unreal 2 reader makes of the string the responder writes for `text`
/// (Latin-1 when it can, else UTF-16LE, as [`UText::new`]): the bytes after the length byte,
/// as many as it counts (`by_length`; for UTF-16, twice the units), or up to the first NUL
/// byte (how it reads the server name); then its colour stripping, which removes `1B` with the
/// three bytes after it (any but a newline) and every byte from `00` to `1A`; then UTF-8
/// decoding that drops what does not decode (see [`as_opengsq_decodes`]: every non-ASCII
/// Latin-1 byte, and UTF-16's bytes read one by one); then Python's `str.strip`, which also
/// strips `1C` to `1F`.
fn as_opengsq_reads_unreal2(text: &str, by_length: bool) -> String {
    let wire = UText::new(text).to_vec().expect("an Unreal 2 string");
    let mut body = &wire[1..];
    if !by_length {
        body = body.split(|&b| b == 0).next().unwrap_or_default();
    }
    let mut kept = Vec::with_capacity(body.len());
    let mut at = 0;
    while at < body.len() {
        let colour = body[at] == COLOUR_CODE
            && body
                .get(at + 1..at + 4)
                .is_some_and(|code| !code.contains(&b'\n'));
        if colour {
            at += 4;
            continue;
        }
        if body[at] > 0x1a {
            kept.push(body[at]);
        }
        at += 1;
    }
    String::from_utf8_lossy(&kept)
        .replace('\u{fffd}', "")
        .trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
        .to_owned()
}

/// The entries the responder puts in the first datagram of a list: whole entries while they
/// fit a 1,400-byte datagram (`gsq serve`'s default `--max-datagram`) after the header.
/// opengsq reads one datagram per request, so this is all of a list it reports.
fn in_first_unreal2_datagram<T: Encode<Ctx = ()>>(entries: Vec<T>) -> Vec<T> {
    let room = 1400 - Header::FIXED_LEN.expect("a fixed-size header");
    let mut used = 0;
    entries
        .into_iter()
        .take_while(|entry| {
            used += entry.encoded_len(());
            used <= room
        })
        .collect()
}

/// The rules and players opengsq reads from `gsq serve --unreal2` serving `state`, compared:
/// the first datagram of each (see [`in_first_unreal2_datagram`]), every text as opengsq reads
/// it ([`as_opengsq_reads_unreal2`]). Rules: `ServerVersion`, `GamePassword` (`True` or
/// `False`), then the state's rules, in a dict (a later key replaces an earlier one), with
/// opengsq's own `Mutators` list of the values of keys named `mutator`, which it leaves out of
/// the dict; the state has none.
fn compare_unreal2_lists(c: &mut Comparison, state: &ServerState, reported: &Value) {
    let mut rules = vec![
        Rule {
            key: UText::new("ServerVersion"),
            value: UText::new(&state.version),
        },
        Rule {
            key: UText::new("GamePassword"),
            value: UText::new(if state.password { "True" } else { "False" }),
        },
    ];
    rules.extend(state.rules.iter().map(|(key, value)| Rule {
        key: UText::new(key),
        value: UText::new(&value.to_string()),
    }));
    let text = |t: &UText| as_opengsq_reads_unreal2(&t.decode(TextEncoding::Latin1), true);
    let mut expected = serde_json::Map::new();
    expected.insert("Mutators".to_owned(), Value::Array(Vec::new()));
    for rule in in_first_unreal2_datagram(rules) {
        let key = text(&rule.key);
        if !key.is_empty() {
            expected.insert(key, Value::String(text(&rule.value)));
        }
    }
    assert!(expected.len() > 10, "the first rules datagram holds a few");
    c.keys("rules", &["value"], &reported["rules"]);
    c.object("rules", &expected, &reported["rules"]["value"]);

    let players: Vec<Player> = state
        .players
        .iter()
        .enumerate()
        .map(|(i, p)| Player {
            id: p.id.unwrap_or(i as u32 + 1),
            name: UText::new(&p.name),
            ping: p.ping,
            score: i32::try_from(p.score).expect("a score that fits"),
            stats_id: 0,
        })
        .collect();
    let served: Vec<(i64, String, i64, i64, i64)> = in_first_unreal2_datagram(players)
        .iter()
        .map(|p| {
            (
                i64::from(p.id),
                text(&p.name),
                i64::from(p.ping),
                i64::from(p.score),
                i64::from(p.stats_id),
            )
        })
        .collect();
    assert_eq!(
        served.len(),
        state.players.len(),
        "one datagram holds them all"
    );
    c.keys("players", &["value"], &reported["players"]);
    let listed = reported["players"]["value"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for (i, player) in listed.iter().enumerate() {
        c.keys(
            &format!("players[{i}]"),
            &["id", "name", "ping", "score", "stats_id"],
            player,
        );
    }
    let number = |v: &Value| v.as_i64().unwrap_or(i64::MIN);
    let reported_players: Vec<(i64, String, i64, i64, i64)> = listed
        .iter()
        .map(|p| {
            (
                number(&p["id"]),
                json_str(&p["name"]).unwrap_or("?").to_owned(),
                number(&p["ping"]),
                number(&p["score"]),
                number(&p["stats_id"]),
            )
        })
        .collect();
    c.list(
        "players (id, name, ping, score, stats id)",
        &served,
        &reported_players,
    );
}

/// opengsq's Unreal 2 reader against `gsq serve --unreal2` serving a state whose every text
/// has a Latin-1 byte per character (the interop state, its name's em dash made a hyphen), so
/// every string goes out as Latin-1: the details, rules and players agree with the state,
/// each text as opengsq decodes it ([`as_opengsq_reads_unreal2`]: it drops non-ASCII Latin-1
/// bytes, as it does for SA:MP).
#[test]
fn opengsq_reads_unreal2_with_a_latin1_name() {
    let mut table: toml::Table =
        toml::from_str(&std::fs::read_to_string(state_file()).expect("the interop state"))
            .expect("the interop state as TOML");
    table.insert(
        "name".to_owned(),
        toml::Value::String("Zoë's Café - Ñandú Arena".to_owned()),
    );
    let text = toml::to_string(&table).expect("a TOML state");
    let state: ServerState = toml::from_str(&text).expect("a state");
    assert!(
        !UText::new(&state.name).utf16,
        "the name goes out as Latin-1"
    );
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("state.toml");
    std::fs::write(&path, text).expect("write the state");
    let serve = Serve::start_from(&path, &["unreal2"], &[]);
    let Some(reported) = opengsq("unreal2", serve.address("unreal2")) else {
        return;
    };
    let mut c = Comparison::new("opengsq Unreal2 (Latin-1 name)");
    c.keys("result", &["details", "rules", "players"], &reported);
    let expected = serde_json::json!({
        "server_id": 0,
        "server_ip": "",
        "game_port": state.port,
        "query_port": 0,
        "server_name": as_opengsq_reads_unreal2(&state.name, false),
        "map_name": as_opengsq_reads_unreal2(&state.map, true),
        "game_type": as_opengsq_reads_unreal2(&state.game_type, true),
        "num_players": state.players.len(),
        "max_players": state.max_players,
        "ping": 0,
        "flags": u32::from(state.password),
        "skill": "",
    });
    c.keys("details", &["value"], &reported["details"]);
    c.object(
        "details",
        expected.as_object().expect("an object"),
        &reported["details"]["value"],
    );
    compare_unreal2_lists(&mut c, &state, &reported);
    c.finish();
}

/// opengsq's Unreal 2 reader against `gsq serve --unreal2` serving the interop state, whose
/// name holds an em dash, which Latin-1 lacks: the name goes out as UTF-16, as UT2004 sends it.
/// opengsq reads the server name (alone of all strings) up to the first NUL byte rather than
/// by its length byte, so it stops after `Z` (`5A 00` in UTF-16LE), reads the rest of the
/// name's units as the map, game type and counts, and runs past the end of the datagram:
/// `get_details` raises an `IndexError`. That is opengsq's bug, modelled here; its rules and
/// players, read by their length bytes, still agree with the state.
#[test]
fn opengsq_reads_unreal2_but_not_a_utf16_name() {
    let serve = Serve::start(&["unreal2"]);
    let Some(reported) = opengsq("unreal2", serve.address("unreal2")) else {
        return;
    };
    let state = served_state();
    assert!(UText::new(&state.name).utf16, "the name goes out as UTF-16");
    let mut c = Comparison::new("opengsq Unreal2 (UTF-16 name)");
    c.keys("result", &["details", "rules", "players"], &reported);
    c.keys("details", &["error"], &reported["details"]);
    c.field(
        "details (opengsq reads the UTF-16 name to its first NUL byte, then past the end)",
        Some("IndexError"),
        json_str(&reported["details"]["error"]).and_then(|e| e.split(':').next()),
    );
    compare_unreal2_lists(&mut c, &state, &reported);
    c.finish();
}
