//! `gsq rcon battleye` against the BattlEye server of `query_net` (started in the test, on
//! loopback), and the `rcon` package (PyPI, installed by `.ci/run` into `tests/interop/`)
//! against the same server.
//!
//! The server's console answers `players` with a list long enough to be split into several
//! parts, `say TEXT` by sending TEXT to every admin as a server message, and announces every
//! login, as BattlEye servers do. Without the Python venv and rcon the third-party test prints
//! that it skips; under `CI=true` it fails instead.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use query_net::rcon::battleye::server::{serve, BattlEyeConfig, MAX_PART_BODY};
use query_net::rcon::server::{AuthGate, CommandHandler};
use serde_json::Value;
use tokio::sync::mpsc;

const PASSWORD: &str = "be-secret";
const CLIENT_DEADLINE: Duration = Duration::from_secs(60);
const PLAYERS: usize = 120;

fn players() -> String {
    let mut text = String::from("Players on server:\n[#] [IP Address]:[Port] [Ping] [GUID] [Name]\n--------------------------------------------------\n");
    for i in 0..PLAYERS {
        text.push_str(&format!(
            "{i}   192.0.2.{}:2304     {}   {:032x}(OK) Player {i}\n",
            i % 250,
            20 + i % 80,
            i * 7919
        ));
    }
    text.push_str(&format!("({PLAYERS} players in total)"));
    text
}

/// The test's game console.
struct Console {
    say: mpsc::Sender<String>,
    /// Send a server message 200 ms after each command (for `rcon`'s client, which returns an
    /// answer only once a message follows it).
    chatty: bool,
}

impl CommandHandler for Console {
    async fn execute(&self, command: String, _peer: SocketAddr) -> String {
        if self.chatty {
            let say = self.say.clone();
            let note = format!("RCon admin ran {command}");
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(200)).await;
                let _ = say.send(note).await;
            });
        }
        match command.split_once(' ') {
            _ if command == "players" => players(),
            Some(("say", text)) => {
                let _ = self
                    .say
                    .send(format!("RCon admin #0: (Global) {text}"))
                    .await;
                String::new()
            }
            _ => format!("Unknown command: {command}"),
        }
    }
}

/// A BattlEye server on a loopback port, in a thread of its own, stopped when dropped.
struct Server {
    address: SocketAddr,
    shutdown: tokio_util::sync::CancellationToken,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start(chatty: bool) -> Server {
        let shutdown = tokio_util::sync::CancellationToken::new();
        let (address_tx, address_rx) = std::sync::mpsc::channel();
        let stop = shutdown.clone();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let socket = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
                address_tx.send(socket.local_addr().unwrap()).unwrap();
                let config = BattlEyeConfig::default();
                let gate = Arc::new(AuthGate::new(PASSWORD, config.lockout));
                let (say, messages) = mpsc::channel(64);
                let console = Arc::new(Console { say, chatty });
                serve(socket, gate, console, config, messages, stop).await;
            });
        });
        let address = address_rx.recv().unwrap();
        Server {
            address,
            shutdown,
            thread: Some(thread),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown.cancel();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn gsq() -> assert_cmd::Command {
    let mut command = assert_cmd::Command::new(env!("CARGO_BIN_EXE_gsq"));
    command.timeout(CLIENT_DEADLINE);
    command
}

#[test]
fn gsq_rcon_battleye_runs_a_command_whose_answer_comes_in_parts() {
    let server = Server::start(false);
    assert!(players().len() > 3 * MAX_PART_BODY, "the answer is split");
    let output = gsq()
        .args(["rcon", "battleye", &server.address.to_string(), "players"])
        .env("GSQ_RCON_PASSWORD", PASSWORD)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(stdout, format!("{}\n", players()));
    assert!(!String::from_utf8_lossy(&output.stderr).contains(PASSWORD));

    let output = gsq()
        .args(["rcon", "battleye", &server.address.to_string(), "--json"])
        .args(["players"])
        .env("GSQ_RCON_PASSWORD", PASSWORD)
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["protocol"], "battleye");
    assert_eq!(json["output"], players());
}

#[test]
fn gsq_rcon_battleye_refused_password_exits_with_the_auth_code() {
    let server = Server::start(false);
    let output = gsq()
        .args(["rcon", "battleye", &server.address.to_string(), "players"])
        .env("GSQ_RCON_PASSWORD", "wrong")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(11), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("refused"), "{stderr}");
    assert!(
        !stderr.contains("wrong"),
        "the password is never printed: {stderr}"
    );
}

#[test]
fn the_battleye_shell_shows_server_messages() {
    let server = Server::start(false);
    let output = gsq()
        .args(["rcon", "battleye", &server.address.to_string()])
        .env("GSQ_RCON_PASSWORD", PASSWORD)
        .write_stdin("say hello\nplayers\n")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    let login = stdout
        .find("[server] RCon admin #0 (127.0.0.1:")
        .unwrap_or_else(|| panic!("no login message: {stdout}"));
    let said = stdout
        .find("[server] RCon admin #0: (Global) hello")
        .unwrap_or_else(|| panic!("no message for say: {stdout}"));
    assert!(login < said);
    assert!(stdout.contains(&players()), "{stdout}");
}

// ---------------------------------------------------------------------------------------------
// A third-party client

fn interop_dir() -> PathBuf {
    query_tests::workspace_root().join("tests/interop")
}

fn python_with_rcon_battleye() -> Option<PathBuf> {
    let python = interop_dir().join(".venv/bin/python");
    let ok = Command::new(&python)
        .args(["-c", "import rcon.battleye"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some(python);
    }
    let hint = "tests/interop/install.sh installs it, as .ci/run does";
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("rcon (tests/interop/.venv) is missing; CI=true requires it ({hint})");
    }
    eprintln!("skipping: rcon (tests/interop/.venv) is missing ({hint})");
    None
}

fn run_python(python: &PathBuf, server: &Server, password: &str, commands: &[&str]) -> Value {
    let output = assert_cmd::Command::new(python)
        .current_dir(interop_dir())
        .arg("rcon_battleye.py")
        .arg(server.address.ip().to_string())
        .arg(server.address.port().to_string())
        .args(commands)
        .env("GSQ_RCON_PASSWORD", password)
        .timeout(CLIENT_DEADLINE)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "rcon_battleye.py printed no JSON ({e}):\n{text}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// `rcon`'s output for a split answer: each part with its header, in arrival order; the
/// headers are checked and taken off.
fn strip_part_headers(joined: &str) -> String {
    let bytes = joined.as_bytes();
    let count = usize::from(bytes[1]);
    let mut body = Vec::new();
    let mut rest = bytes;
    for index in 0..count {
        assert_eq!(&rest[..3], [0, count as u8, index as u8], "part {index}");
        let len = if index + 1 == count {
            rest.len() - 3
        } else {
            MAX_PART_BODY
        };
        body.extend_from_slice(&rest[3..3 + len]);
        rest = &rest[3 + len..];
    }
    assert!(rest.is_empty());
    String::from_utf8(body).unwrap()
}

#[test]
fn pypi_rcon_logs_in_runs_commands_and_gets_every_part() {
    let Some(python) = python_with_rcon_battleye() else {
        return;
    };
    let server = Server::start(true);
    let json = run_python(&python, &server, PASSWORD, &["players"]);
    let outputs = json["outputs"]
        .as_array()
        .unwrap_or_else(|| panic!("no outputs: {json}"));
    assert_eq!(strip_part_headers(outputs[0].as_str().unwrap()), players());
    let messages = json["messages"].to_string();
    assert!(messages.contains("logged in"), "{messages}");
    assert!(messages.contains("ran players"), "{messages}");
}

#[test]
fn gsq_rcon_battleye_where_nothing_listens_exits_with_its_code() {
    let closed = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let output = gsq()
        .args(["rcon", "battleye", &closed.to_string(), "players"])
        .args(["--timeout", "200ms"])
        .env("GSQ_RCON_PASSWORD", PASSWORD)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(12), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("nothing listens"), "{stderr}");
}
