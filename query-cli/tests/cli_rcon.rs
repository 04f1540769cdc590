//! `gsq rcon` against `gsq serve --rcon`, and third-party RCON clients against the server:
//! `rcon` and `mcrcon` (PyPI) and `rcon-client` (npm), installed by `.ci/run` into
//! `tests/interop/`.
//!
//! The served state has enough players that `status` answers with more than two packets of
//! srcds's 4,096 bytes, so every client must join a split answer (or, for rcon-client, which
//! takes the first packet as the whole answer, is given short answers only). Each test starts
//! its own server with its own password, from the environment or a file.
//!
//! Without node and rcon-client, or without the Python venv with rcon and mcrcon, the third-party tests
//! print that they skip; under `CI=true` they fail instead.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

const PASSWORD: &str = "correct horse battery staple";
const STARTUP: Duration = Duration::from_secs(20);
const CLIENT_DEADLINE: Duration = Duration::from_secs(60);
/// Players in the served state: each `status` line is about 40 bytes.
const PLAYERS: usize = 300;

fn interop_dir() -> PathBuf {
    query_tests::workspace_root().join("tests/interop")
}

/// A state whose `status` answer is over 8 KiB.
fn state_toml() -> String {
    let mut text =
        String::from("name = \"RCON Test — Zoë\"\nmap = \"de_dust2\"\nmax_players = 512\n");
    for i in 0..PLAYERS {
        text.push_str(&format!(
            "[[players]]\nname = \"player-{i:03}-ñ\"\nscore = {i}\nping = {}\n",
            i % 97
        ));
    }
    text
}

/// A running RCON server (`gsq serve --rcon`, or a third-party one), killed when dropped.
struct Server {
    child: Child,
    address: SocketAddr,
    _dir: Option<tempfile::TempDir>,
}

impl Server {
    fn start() -> Server {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state.toml");
        std::fs::write(&state, state_toml()).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_gsq"));
        command
            .arg("serve")
            .arg(&state)
            .args(["--rcon", "127.0.0.1:0"]);
        Server::spawn(
            command,
            |line| line.strip_prefix("rcon ")?.parse().ok(),
            Some(dir),
        )
    }

    /// The Source RCON server of `tests/interop/source_rcon_server.py`, on the `rcon_server`
    /// package (PyPI), with [`PASSWORD`].
    fn third_party(python: &Path) -> Server {
        let mut command = Command::new(python);
        command
            .current_dir(interop_dir())
            .arg("source_rcon_server.py");
        Server::spawn(
            command,
            |line| {
                let port: u16 = line.strip_prefix("port ")?.parse().ok()?;
                Some(SocketAddr::from(([127, 0, 0, 1], port)))
            },
            None,
        )
    }

    /// Starts `command` with [`PASSWORD`] and waits for the line `address` reads the
    /// listening address from.
    fn spawn(
        mut command: Command,
        address: impl Fn(&str) -> Option<SocketAddr>,
        dir: Option<tempfile::TempDir>,
    ) -> Server {
        let mut child = command
            .env("GSQ_RCON_PASSWORD", PASSWORD)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the RCON server");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let line = rx
            .recv_timeout(STARTUP)
            .expect("the RCON server printed its address");
        let address = address(&line).unwrap_or_else(|| panic!("no address in {line:?}"));
        Server {
            child,
            address,
            _dir: dir,
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `gsq rcon source ADDRESS COMMAND...` with the password in the environment.
fn gsq_rcon(server: &Server, args: &[&str]) -> std::process::Output {
    gsq_rcon_as(server, "source", PASSWORD, args, "")
}

/// `gsq rcon FLAVOUR ADDRESS ARGS...` with `password` in the environment and `stdin`.
fn gsq_rcon_as(
    server: &Server,
    flavour: &str,
    password: &str,
    args: &[&str],
    stdin: &str,
) -> std::process::Output {
    assert_cmd::Command::new(env!("CARGO_BIN_EXE_gsq"))
        .args(["rcon", flavour, &server.address.to_string()])
        .args(args)
        .env("GSQ_RCON_PASSWORD", password)
        .write_stdin(stdin)
        .timeout(CLIENT_DEADLINE)
        .output()
        .unwrap()
}

fn stdout(output: &std::process::Output) -> String {
    assert!(
        output.status.success(),
        "gsq failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn assert_whole_status(text: &str, name: &str) {
    assert!(
        text.starts_with(&format!("hostname: {name}\n")),
        "{text:.200}"
    );
    assert!(text.len() > 8192, "{} bytes: not split", text.len());
    for i in 0..PLAYERS {
        assert!(
            text.contains(&format!("\"player-{i:03}-ñ\" {i} {}\n", i % 97)),
            "player {i} missing"
        );
    }
}

#[test]
fn gsq_rcon_runs_commands_joins_split_answers_and_changes_the_state() {
    let server = Server::start();
    let status = stdout(&gsq_rcon(&server, &["status"]));
    assert_whole_status(&status, "RCON Test — Zoë");
    let renamed = stdout(&gsq_rcon(&server, &["hostname", "Renamed"]));
    assert_eq!(renamed, "hostname = \"Renamed\"\n");
    let status = stdout(&gsq_rcon(&server, &["status"]));
    assert!(status.starts_with("hostname: Renamed\n"), "{status:.100}");

    let json = stdout(&gsq_rcon(&server, &["--json", "players"]));
    let json: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["protocol"], "source");
    assert_eq!(json["command"], "players");
    assert!(json["output"]
        .as_str()
        .unwrap()
        .contains("\"player-299-ñ\""));
}

#[test]
fn the_shell_runs_lines_until_exit_and_says_when_the_connection_is_lost() {
    let mut server = Server::start();
    let output = assert_cmd::Command::new(env!("CARGO_BIN_EXE_gsq"))
        .args(["rcon", "source", &server.address.to_string()])
        .env("GSQ_RCON_PASSWORD", PASSWORD)
        .write_stdin("hostname Shell\n\n  \nbogus\nhostname\nexit\nhostname Never\n")
        .timeout(CLIENT_DEADLINE)
        .output()
        .unwrap();
    assert_eq!(
        stdout(&output),
        "hostname = \"Shell\"\nUnknown command \"bogus\"\nhostname = \"Shell\"\n"
    );

    // The server goes away between two lines: one line says so, the reconnect fails.
    let address = server.address.to_string();
    let mut shell = Command::new(env!("CARGO_BIN_EXE_gsq"))
        .args(["rcon", "source", &address])
        .env("GSQ_RCON_PASSWORD", PASSWORD)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = shell.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, b"echo first\n").unwrap();
    let mut first = String::new();
    BufReader::new(shell.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert_eq!(first, "first\n");
    let _ = server.child.kill();
    let _ = server.child.wait();
    std::io::Write::write_all(&mut stdin, b"echo second\n").unwrap();
    drop(stdin);
    let output = shell.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(12), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(lines[0].starts_with("gsq: connection lost ("), "{stderr}");
    assert!(lines[1].contains("nothing listens"), "{stderr}");
}

#[test]
fn gsq_rcon_takes_the_password_from_a_file_and_warns_on_the_command_line() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("password");
    std::fs::write(&file, format!("{PASSWORD}\n")).unwrap();
    // Options go before the command: everything after its first word is the command.
    let output = assert_cmd::Command::new(env!("CARGO_BIN_EXE_gsq"))
        .args(["rcon", "source", &server.address.to_string()])
        .arg("--password-file")
        .arg(&file)
        .args(["echo", "hi", "--password-file"])
        .env_remove("GSQ_RCON_PASSWORD")
        .timeout(CLIENT_DEADLINE)
        .output()
        .unwrap();
    assert_eq!(stdout(&output), "hi --password-file\n");

    let output = assert_cmd::Command::new(env!("CARGO_BIN_EXE_gsq"))
        .args([
            "rcon",
            "source",
            &server.address.to_string(),
            "--password",
            PASSWORD,
        ])
        .args(["echo", "hi"])
        .env_remove("GSQ_RCON_PASSWORD")
        .timeout(CLIENT_DEADLINE)
        .output()
        .unwrap();
    assert_eq!(stdout(&output), "hi\n");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("warning"), "{stderr}");
    assert!(!stderr.contains(PASSWORD), "the password is never printed");
}

#[test]
fn a_refused_password_exits_with_the_auth_code_in_one_line() {
    let server = Server::start();
    let output = assert_cmd::Command::new(env!("CARGO_BIN_EXE_gsq"))
        .args(["rcon", "source", &server.address.to_string(), "status"])
        .env("GSQ_RCON_PASSWORD", "wrong")
        .timeout(CLIENT_DEADLINE)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(11));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("refused the RCON password"), "{stderr}");
    assert!(
        !stderr.contains("wrong"),
        "the password is never printed: {stderr}"
    );
}

#[test]
fn no_password_and_no_terminal_is_a_usage_error() {
    let output = assert_cmd::Command::new(env!("CARGO_BIN_EXE_gsq"))
        .args(["rcon", "minecraft", "127.0.0.1:1", "list"])
        .env_remove("GSQ_RCON_PASSWORD")
        .write_stdin("")
        .timeout(CLIENT_DEADLINE)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("GSQ_RCON_PASSWORD"), "{stderr}");
}

#[test]
fn serve_rcon_without_a_password_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.toml");
    std::fs::write(&state, "name = \"x\"\n").unwrap();
    let output = assert_cmd::Command::new(env!("CARGO_BIN_EXE_gsq"))
        .arg("serve")
        .arg(&state)
        .args(["--rcon", "127.0.0.1:0"])
        .env_remove("GSQ_RCON_PASSWORD")
        .timeout(CLIENT_DEADLINE)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--rcon needs a password"));
}

// ---------------------------------------------------------------------------------------------
// Third-party clients

/// Reports a missing client: a skip locally, a failure under `CI=true`.
fn client_missing(what: &str) -> Option<PathBuf> {
    let hint = "tests/interop/install.sh installs them, as .ci/run does";
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{what} is missing; CI=true requires it ({hint})");
    }
    eprintln!("skipping: {what} is missing ({hint})");
    None
}

/// The interop venv's Python, if it can import `module` (a PyPI package installed there).
fn python_with(module: &str) -> Option<PathBuf> {
    let python = interop_dir().join(".venv/bin/python");
    let ok = Command::new(&python)
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        Some(python)
    } else {
        client_missing(&format!("{module} (tests/interop/.venv)"))
    }
}

fn node_with_rcon_client() -> Option<PathBuf> {
    let ok = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if ok
        && interop_dir()
            .join("node_modules/rcon-client/package.json")
            .is_file()
    {
        Some(PathBuf::from("node"))
    } else {
        client_missing("node with rcon-client (tests/interop/node_modules)")
    }
}

/// Runs a client script with `password`; returns its JSON and whether it succeeded.
fn run_client(
    program: &Path,
    script: &str,
    server: &Server,
    password: &str,
    commands: &[&str],
) -> (bool, Value) {
    let output = assert_cmd::Command::new(program)
        .current_dir(interop_dir())
        .arg(script)
        .arg(server.address.ip().to_string())
        .arg(server.address.port().to_string())
        .args(commands)
        .env("GSQ_RCON_PASSWORD", password)
        .timeout(CLIENT_DEADLINE)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    let json = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "{script} printed no JSON ({e}):\n{text}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.success(), json)
}

fn outputs(json: &Value) -> Vec<String> {
    json["outputs"]
        .as_array()
        .unwrap_or_else(|| panic!("no outputs: {json}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn pypi_rcon_authenticates_runs_commands_and_joins_split_answers() {
    let Some(python) = python_with("rcon.source") else {
        return;
    };
    let server = Server::start();
    let (ok, json) = run_client(
        &python,
        "rcon_source.py",
        &server,
        PASSWORD,
        &["echo hello", "hostname Python", "status"],
    );
    assert!(ok, "{json}");
    let outputs = outputs(&json);
    assert_eq!(outputs[0], "hello\n");
    assert_eq!(outputs[1], "hostname = \"Python\"\n");
    assert_whole_status(&outputs[2], "Python");
    // What gsq's own client reads from the same server.
    assert_eq!(stdout(&gsq_rcon(&server, &["status"])), outputs[2]);

    let (ok, json) = run_client(&python, "rcon_source.py", &server, "wrong", &["status"]);
    assert!(!ok);
    assert_eq!(json["error"], "WrongPassword");
}

#[test]
fn npm_rcon_client_runs_short_commands() {
    let Some(node) = node_with_rcon_client() else {
        return;
    };
    let server = Server::start();
    let (ok, json) = run_client(
        &node,
        "rcon_client.mjs",
        &server,
        PASSWORD,
        &["echo hello", "hostname Node", "hostname"],
    );
    assert!(ok, "{json}");
    assert_eq!(
        outputs(&json),
        ["hello\n", "hostname = \"Node\"\n", "hostname = \"Node\"\n"]
    );
    let (ok, json) = run_client(
        &node,
        "rcon_client.mjs",
        &server,
        "wrong",
        &["hostname Evil"],
    );
    assert!(!ok, "{json}");
    assert_eq!(json["error"], "Authentication failed");
    assert!(stdout(&gsq_rcon(&server, &["hostname"])).contains("\"Node\""));
}

#[test]
fn pypi_mcrcon_runs_short_commands_and_is_refused_a_wrong_password() {
    let Some(python) = python_with("mcrcon") else {
        return;
    };
    let server = Server::start();
    let (ok, json) = run_client(
        &python,
        "mcrcon_client.py",
        &server,
        PASSWORD,
        &["echo hello", "hostname Creeper", "hostname"],
    );
    assert!(ok, "{json}");
    assert_eq!(
        outputs(&json),
        [
            "hello\n",
            "hostname = \"Creeper\"\n",
            "hostname = \"Creeper\"\n"
        ]
    );
    let (ok, json) = run_client(
        &python,
        "mcrcon_client.py",
        &server,
        "wrong",
        &["hostname Evil"],
    );
    assert!(!ok, "{json}");
    assert_eq!(json["error"], "Login failed");
    assert!(stdout(&gsq_rcon(&server, &["hostname"])).contains("\"Creeper\""));
}

/// `gsq rcon` against a Source RCON server that is not ours: the `rcon_server` package (PyPI).
/// It handles one packet per chunk of bytes its socket delivers, leaving the rest unread until
/// more bytes come, so a client that wrote the command and its end marker at once would wait
/// for the marker's echo until its deadline.
#[test]
fn gsq_rcon_talks_to_a_third_party_source_server() {
    let Some(python) = python_with("rcon_server.rcon_server") else {
        return;
    };
    let server = Server::third_party(&python);
    assert_eq!(stdout(&gsq_rcon(&server, &["echo", "hello"])), "hello\n");
    // 3,000 lines of 11 bytes: the answer comes in nine packets, joined.
    let lines = stdout(&gsq_rcon(&server, &["lines", "3000"]));
    let expected: String = (0..3000).map(|i| format!("line {i:05}\n")).collect();
    assert_eq!(lines, expected);
    // The shell: several commands on one connection.
    let output = gsq_rcon_as(
        &server,
        "source",
        PASSWORD,
        &[],
        "echo one\nlines 2\nbogus\n",
    );
    assert_eq!(
        stdout(&output),
        "one\nline 00000\nline 00001\nUnknown command \"bogus\"\n"
    );
    // The Minecraft flavour reads it too while the answers fit Minecraft's fragments.
    let output = gsq_rcon_as(&server, "minecraft", PASSWORD, &["echo", "creeper"], "");
    assert_eq!(stdout(&output), "creeper\n");
    // A refused password: srcds's empty value, then the auth response with id -1.
    let output = gsq_rcon_as(&server, "source", "wrong", &["echo", "x"], "");
    assert_eq!(output.status.code(), Some(11));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("refused the RCON password"), "{stderr}");
}
