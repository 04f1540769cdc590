//! Running the real `gsq` binary from tests: one-shot commands with a time limit, and a
//! `gsq serve` in the background whose bound addresses are read from its startup lines.
//!
//! Everything stays on loopback and every wait is bounded.

#![allow(dead_code)] // Each test file uses a different part of this module.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// The longest any single `gsq` command may run in a test.
pub const COMMAND_LIMIT: Duration = Duration::from_secs(30);

/// The binary under test.
pub fn gsq_path() -> &'static str {
    env!("CARGO_BIN_EXE_gsq")
}

/// An assert_cmd command for `gsq` with `args`, a time limit, and no inherited settings
/// that would change its behaviour.
pub fn gsq(args: &[&str]) -> assert_cmd::Command {
    let mut command = assert_cmd::Command::new(gsq_path());
    command
        .args(args)
        .env_remove("GSQ_LOG")
        .env_remove("GSQ_RCON_PASSWORD")
        .env_remove("GSQ_ONEQUERY_TOKEN")
        .env_remove("GSQ_ONEQUERY_SECRETS")
        .env_remove("GSQ_SAMP_RCON_PASSWORD")
        // A panic would print a backtrace with this set; the tests check that none appears.
        .env("RUST_BACKTRACE", "1")
        .timeout(COMMAND_LIMIT);
    command
}

/// How a command ended.
#[derive(Debug)]
pub struct Ran {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `gsq` with `args` to completion.
pub fn run(args: &[&str]) -> Ran {
    run_with_stdin(args, "")
}

/// Runs `gsq` with `args`, feeding `stdin`.
pub fn run_with_stdin(args: &[&str], stdin: &str) -> Ran {
    let output = gsq(args)
        .write_stdin(stdin.as_bytes().to_vec())
        .output()
        .unwrap_or_else(|e| panic!("cannot run gsq {args:?}: {e}"));
    Ran {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

impl Ran {
    /// Asserts success and parses stdout as one JSON value.
    pub fn json(&self) -> serde_json::Value {
        assert_eq!(self.code, Some(0), "gsq failed: {self:#?}");
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not one JSON value ({e}): {self:#?}"))
    }

    /// Asserts success and parses each stdout line as JSON.
    pub fn json_lines(&self) -> Vec<serde_json::Value> {
        assert_eq!(self.code, Some(0), "gsq failed: {self:#?}");
        self.stdout
            .lines()
            .map(|line| {
                serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}\n{self:#?}"))
            })
            .collect()
    }

    /// Asserts the documented failure shape: exit `code`, nothing on stdout, and exactly one
    /// stderr line `gsq: error: ...` containing every one of `needles`, with no panic or
    /// backtrace.
    pub fn assert_error(&self, code: i32, needles: &[&str]) {
        assert_eq!(self.code, Some(code), "wrong exit code: {self:#?}");
        assert_eq!(self.stdout, "", "stdout should be empty: {self:#?}");
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "expected one stderr line: {self:#?}");
        let line = lines[0];
        assert!(line.starts_with("gsq: error: "), "{line}");
        for needle in needles {
            assert!(line.contains(needle), "{needle:?} missing from {line:?}");
        }
        for forbidden in ["panicked", "backtrace", "RUST_BACKTRACE", "thread '"] {
            assert!(!line.contains(forbidden), "{forbidden:?} in {line:?}");
        }
    }
}

/// A temporary directory holding a state file.
pub struct StateDir {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
}

impl StateDir {
    /// `content` written to `state.<extension>` in a new directory.
    pub fn new(extension: &str, content: &str) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(format!("state.{extension}"));
        std::fs::write(&path, content).expect("write state");
        StateDir { dir, path }
    }

    /// Replaces the file's content at once (write a sibling, rename it over), as editors do.
    pub fn replace(&self, content: &str) {
        let temporary = self.dir.path().join(".state.tmp");
        std::fs::write(&temporary, content).expect("write state");
        std::fs::rename(&temporary, &self.path).expect("rename state");
    }

    /// Overwrites the file in place (truncate, then write), as `echo >` does.
    pub fn overwrite(&self, content: &str) {
        let mut file = std::fs::File::create(&self.path).expect("open state");
        file.write_all(content.as_bytes()).expect("write state");
    }

    pub fn path_str(&self) -> &str {
        self.path.to_str().expect("utf-8 temp path")
    }
}

/// A sample state in TOML: accented names, typed rules.
pub const SAMPLE_STATE: &str = r#"
name = "Café Zoë"
map = "Highrise"
game_type = "Team Deathmatch"
version = "1.0.3"
max_players = 16
port = 7777

[rules]
round_time = 300
difficulty = "hard"

[[players]]
name = "Zoë"
score = 42
ping = 31

[[players]]
name = "Jürgen"
score = 17
ping = 54
"#;

/// A `gsq serve` running in the background.
pub struct Server {
    child: Child,
    /// Bound address per protocol name, from the startup lines.
    pub addresses: HashMap<String, SocketAddr>,
    stderr: Arc<Mutex<Vec<String>>>,
    pub state: StateDir,
}

impl Server {
    /// Starts `gsq serve <state> <args>` and waits (at most 10 s) for one startup line per
    /// protocol in `expect`.
    pub fn start(state: StateDir, args: &[&str], expect: &[&str]) -> Server {
        let mut child = Command::new(gsq_path())
            .arg("serve")
            .arg(&state.path)
            .args(args)
            .env_remove("GSQ_LOG")
            .env_remove("GSQ_SAMP_RCON_PASSWORD")
            .env_remove("GSQ_ONEQUERY_SECRETS")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn gsq serve");
        let stdout = child.stdout.take().expect("stdout");
        let stderr_pipe = child.stderr.take().expect("stderr");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        {
            let stderr = Arc::clone(&stderr);
            std::thread::spawn(move || {
                for line in BufReader::new(stderr_pipe).lines().map_while(Result::ok) {
                    stderr.lock().unwrap().push(line);
                }
            });
        }
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut addresses = HashMap::new();
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut server = Server {
            child,
            addresses: HashMap::new(),
            stderr,
            state,
        };
        while !expect.iter().all(|p| addresses.contains_key(*p)) {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => {
                    let (protocol, address) = line
                        .split_once(' ')
                        .unwrap_or_else(|| panic!("unexpected startup line {line:?}"));
                    let address: SocketAddr = address
                        .parse()
                        .unwrap_or_else(|e| panic!("bad address in {line:?}: {e}"));
                    addresses.insert(protocol.to_owned(), address);
                }
                Err(_) => {
                    let status = server.child.try_wait().ok().flatten();
                    panic!(
                        "gsq serve did not announce {expect:?} (got {addresses:?}, exit {status:?}); stderr: {:?}",
                        server.stderr_lines()
                    );
                }
            }
        }
        server.addresses = addresses;
        server
    }

    /// The address serving `protocol`, as `gsq query` takes it.
    pub fn addr(&self, protocol: &str) -> String {
        self.addresses
            .get(protocol)
            .unwrap_or_else(|| panic!("no {protocol} address in {:?}", self.addresses))
            .to_string()
    }

    /// The log lines so far.
    pub fn stderr_lines(&self) -> Vec<String> {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits (at most `limit`) until a log line satisfies `test`.
    pub fn wait_for_log(&self, limit: Duration, test: impl Fn(&str) -> bool) -> Option<String> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(line) = self.stderr_lines().into_iter().find(|l| test(l)) {
                return Some(line);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` (`INT`, `TERM`) and waits (at most 10 s) for the exit.
    pub fn stop_with(mut self, signal: &str) -> (ExitStatus, Vec<String>) {
        let sent = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("run kill");
        assert!(sent.success(), "kill -{signal} failed");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                // Let the stderr reader catch the last lines.
                std::thread::sleep(Duration::from_millis(100));
                return (status, self.stderr_lines());
            }
            assert!(
                Instant::now() < deadline,
                "gsq serve did not stop on SIG{signal}; stderr: {:?}",
                self.stderr_lines()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A UDP socket on loopback that never answers: queries to it time out.
pub fn silent_socket() -> UdpSocket {
    UdpSocket::bind("127.0.0.1:0").expect("bind a silent socket")
}

/// Polls `check` every 50 ms until it returns `Some`, for at most `limit`.
pub fn poll<T>(limit: Duration, mut check: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(found) = check() {
            return Some(found);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The workspace root, found from this crate's manifest directory.
pub fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate is inside the workspace")
}

/// A fixture under `specs/fixtures/`.
pub fn fixture(relative: &str) -> String {
    workspace_root()
        .join("specs/fixtures")
        .join(relative)
        .to_str()
        .expect("utf-8 path")
        .to_owned()
}

/// tcpdump writing the UDP traffic of `port` on `interface` (`lo`, or `any` for Linux cooked
/// frames) to `file`, until finished or dropped.
pub struct Tcpdump {
    child: std::process::Child,
    /// Where it reports, at the end, how many packets the kernel dropped.
    stderr: BufReader<std::process::ChildStderr>,
}

impl Tcpdump {
    /// Started and listening, or `None` (said, and a failure under CI=true) when tcpdump is
    /// missing or may not capture here.
    pub fn start(file: &Path, interface: &str, extra: &[&str], port: u16) -> Option<Tcpdump> {
        let in_ci = std::env::var("CI").as_deref() == Ok("true");
        let child = Command::new("tcpdump")
            .args(["-i", interface, "--immediate-mode", "-U"])
            .args(extra)
            .arg("-w")
            .arg(file)
            .args(["udp", "port", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn();
        let mut child = match child {
            Ok(child) => child,
            Err(e) if !in_ci => {
                eprintln!("SKIPPED: cannot run tcpdump ({e}); the capture test did not run");
                return None;
            }
            Err(e) => panic!("tcpdump is missing under CI=true ({e}): .ci/run installs it"),
        };
        // It says "listening on <interface>" once the capture has begun, after a note on the
        // link type where one is chosen (`-i any`: "data link type LINUX_SLL2").
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        for _ in 0..4 {
            line.clear();
            if stderr.read_line(&mut line).unwrap_or(0) == 0
                || !line.starts_with("tcpdump: data link type")
            {
                break;
            }
        }
        if !line.contains("listening on") {
            let _ = child.kill();
            assert!(
                !in_ci,
                "tcpdump cannot capture on {interface} under CI=true: {line}"
            );
            eprintln!(
                "SKIPPED: tcpdump cannot capture here ({}); the capture test did not run",
                line.trim()
            );
            return None;
        }
        Some(Tcpdump { child, stderr })
    }

    /// Stops it as Ctrl-C does, so it writes out what it captured; returns how many packets
    /// the kernel dropped before tcpdump read them (it says so as it ends).
    pub fn finish(mut self) -> u64 {
        std::thread::sleep(Duration::from_millis(300));
        let _ = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
        let mut report = String::new();
        let _ = self.stderr.read_to_string(&mut report);
        report
            .lines()
            .find_map(|line| line.strip_suffix(" packets dropped by kernel"))
            .and_then(|count| count.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Captures what `exchange` makes happen, again (three times at most) while tcpdump says
    /// the kernel dropped packets: a capture with holes proves nothing about the decoder. On
    /// a busy machine `tcpdump -i any` drops some now and then. `None` where tcpdump cannot
    /// run (see [`Tcpdump::start`]).
    pub fn capture<T>(
        file: &Path,
        interface: &str,
        extra: &[&str],
        port: u16,
        mut exchange: impl FnMut() -> T,
    ) -> Option<T> {
        let mut tries = 0;
        loop {
            let tcpdump = Tcpdump::start(file, interface, extra, port)?;
            let made = exchange();
            let dropped = tcpdump.finish();
            tries += 1;
            if dropped == 0 {
                return Some(made);
            }
            assert!(
                tries < 3,
                "tcpdump dropped packets in {tries} captures in a row"
            );
            eprintln!("tcpdump dropped {dropped} packet(s); capturing again");
        }
    }
}

impl Drop for Tcpdump {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
