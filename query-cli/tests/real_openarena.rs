//! `gsq query quake3` against a real Quake 3 engine: Debian's `openarena-server` (OpenArena on
//! ioquake3), started by the test on loopback with a configuration it writes (host name with a
//! colour code, map, slots, game type, one bot, an rcon password), queried until the bot has
//! joined, compared with that configuration, asked for `status` over `gsq rcon quake3` (and
//! with a wrong password), and stopped.
//!
//! Without the server (`apt-get install openarena-server`, which `.ci/run` does) the test
//! prints that it skips; under `CI=true` it fails instead. It takes a few seconds: the server
//! loads its map and the bot before it answers with a player.

use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;
use serde_json::Value;

/// Where Debian installs the server's wrapper script.
const SERVER: &str = "/usr/games/openarena-server";
/// How long the server may take to load its map and bot and answer with the bot listed.
const STARTUP: Duration = Duration::from_secs(60);

const HOSTNAME: &str = "gsq ^1real^7 arena";
const MAP: &str = "oa_dm4";
const MAX_CLIENTS: u32 = 7;
const GAME_TYPE: &str = "3";
const BOT: &str = "Sarge";
const RCON_PASSWORD: &str = "gsq-rcon-secret";

/// The server binary, or `None` after saying the test skips (a failure under `CI=true`).
fn server_binary() -> Option<PathBuf> {
    let found = [PathBuf::from(SERVER)]
        .into_iter()
        .chain(std::env::var_os("PATH").into_iter().flat_map(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join("openarena-server"))
                .collect::<Vec<_>>()
        }))
        .find(|p| p.is_file());
    if found.is_none() {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("openarena-server is not installed, and CI=true: .ci/run installs it");
        }
        eprintln!("SKIPPED: no openarena-server (apt-get install openarena-server); the real Quake 3 server test did not run");
    }
    found
}

/// A free UDP port on loopback (bound and released: the server binds it next).
fn free_udp_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The running server, killed (and its log shown on failure) when dropped.
struct Server {
    child: Child,
    log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            eprintln!("openarena-server's last lines:");
            for line in tail.iter().rev() {
                eprintln!("  {line}");
            }
        }
    }
}

/// Starts the server in `dir` on `port` with the test's configuration.
fn start(binary: &Path, dir: &Path, port: u16) -> Server {
    let home = dir.join("home");
    std::fs::create_dir_all(home.join("baseoa")).unwrap();
    std::fs::write(
        home.join("baseoa/gsq-test.cfg"),
        format!(
            "set sv_hostname \"{HOSTNAME}\"\nset sv_maxclients {MAX_CLIENTS}\n\
             set g_gametype {GAME_TYPE}\nset bot_enable 1\nset bot_minplayers 0\n\
             set sv_pure 0\nset g_needpass 0\nset rconpassword \"{RCON_PASSWORD}\"\n\
             map {MAP}\n"
        ),
    )
    .unwrap();
    let log = dir.join("server.log");
    let child = Command::new(binary)
        .env("HOME", dir)
        .args(["+set", "dedicated", "1", "+set", "net_ip", "127.0.0.1"])
        .args([
            "+set",
            "net_port",
            &port.to_string(),
            "+set",
            "net_enabled",
            "1",
        ])
        .args([
            "+set",
            "sv_master1",
            "",
            "+set",
            "sv_master2",
            "",
            "+set",
            "sv_master3",
            "",
        ])
        .args([
            "+set",
            "fs_homepath",
            home.to_str().unwrap(),
            "+set",
            "ttycon",
            "0",
        ])
        // `addbot` once the map has loaded: the config's `map`, then a few frames.
        .args(["+exec", "gsq-test.cfg", "+wait", "20", "+addbot", BOT, "1"])
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(Stdio::from(
            std::fs::File::create(dir.join("stderr.log")).unwrap(),
        ))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
    Server { child, log }
}

/// `gsq query quake3 ADDRESS --json` once: the status, or `None` without an answer.
fn query(port: u16) -> Option<Value> {
    let output = Command::cargo_bin("gsq")
        .unwrap()
        .args(["query", "quake3", &format!("127.0.0.1:{port}"), "--json"])
        .args(["--timeout", "500ms", "--retries", "1"])
        .output()
        .unwrap();
    if !output.status.success() {
        return None;
    }
    Some(serde_json::from_slice(&output.stdout).expect("gsq --json prints JSON"))
}

#[test]
fn gsq_reads_a_real_openarena_server_as_configured() {
    let Some(binary) = server_binary() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let port = free_udp_port();
    let mut server = start(&binary, dir.path(), port);

    // The server answers once its map is loaded; the bot joins a moment later.
    let started = Instant::now();
    let status = loop {
        if let Some(exit) = server.child.try_wait().unwrap() {
            panic!("openarena-server exited early: {exit}");
        }
        match query(port) {
            Some(status) if !status["players"].as_array().unwrap().is_empty() => break status,
            _ if started.elapsed() > STARTUP => {
                panic!("no status listing the bot within {STARTUP:?}")
            }
            _ => std::thread::sleep(Duration::from_millis(300)),
        }
    };

    assert_eq!(status["protocol"], "quake3");
    assert_eq!(status["name"], "gsq real arena", "colour codes removed");
    assert_eq!(status["raw"]["hostname"], HOSTNAME, "and kept in raw");
    assert_eq!(status["map"], MAP);
    assert_eq!(status["max_players"], MAX_CLIENTS);
    assert_eq!(status["game_type"], GAME_TYPE);
    assert_eq!(status["password"], false);
    assert_eq!(status["complete"], true);
    assert_eq!(status["num_players"], 1);
    let players = status["players"].as_array().unwrap();
    assert_eq!(players.len(), 1, "{players:?}");
    assert_eq!(players[0]["name"], BOT);
    assert!(players[0]["score"].is_i64(), "{players:?}");
    assert!(players[0]["ping"].is_u64(), "{players:?}");
    assert_eq!(status["rules"]["gamename"], "baseoa");
    assert_eq!(status["rules"]["sv_maxclients"], MAX_CLIENTS.to_string());
    assert!(
        status["version"].as_str().unwrap().starts_with("ioq3"),
        "{}",
        status["version"]
    );

    // The remote console: `status` lists the bot; a wrong password is the auth exit code.
    let rcon = |password: &str| {
        Command::cargo_bin("gsq")
            .unwrap()
            .args(["rcon", "quake3", &format!("127.0.0.1:{port}"), "status"])
            .env("GSQ_RCON_PASSWORD", password)
            .output()
            .unwrap()
    };
    let output = rcon(RCON_PASSWORD);
    assert!(output.status.success(), "{output:?}");
    let console = String::from_utf8(output.stdout).unwrap();
    assert!(console.contains(&format!("map: {MAP}")), "{console}");
    assert!(console.contains(BOT), "{console}");
    let output = rcon("wrong");
    assert_eq!(output.status.code(), Some(11), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("Bad rconpassword"));
    drop(server);
}
