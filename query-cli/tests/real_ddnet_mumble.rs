//! `gsq query` against real servers from Debian's packages: DDNet (`ddnet-server`), Teeworlds
//! 0.7 (`teeworlds-server`) and Murmur (`mumble-server`). Each test writes the server's configuration, starts it on
//! loopback, queries it with `gsq`, compares what `gsq` reads with the configuration, and
//! stops the server; each server runs a few seconds at most.
//!
//! The tests install nothing: `.ci/run` installs the packages. Without a server's binary a
//! test prints that it skips; under `CI=true` it fails instead, so CI never passes by
//! skipping.

mod cli_support;

use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use cli_support::{poll, run, run_with_stdin};

/// How long a server may take to answer its first query.
const STARTUP: Duration = Duration::from_secs(15);

/// A server process, killed and reaped when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `name` on `PATH` or in the directories Debian installs servers to.
fn find_binary(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/games".into(), "/usr/sbin".into()])
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// A missing server: a skip locally, a failure under `CI=true`.
fn server_missing(what: &str) {
    let hint = "apt-get install ddnet-server teeworlds-server mumble-server, as .ci/run does";
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{what} is missing; CI=true requires it ({hint})");
    }
    eprintln!("skipping: {what} is missing ({hint})");
}

/// A UDP port free on loopback a moment ago.
fn free_udp_port() -> u16 {
    let socket = UdpSocket::bind("127.0.0.1:0").expect("bind an ephemeral port");
    socket.local_addr().unwrap().port()
}

/// A directory for one server's files, writable by the account the server may switch to
/// (Murmur started as root runs as `mumble-server`), removed when dropped.
struct ServerDir(PathBuf);

impl ServerDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("gsq-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        }
        ServerDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ServerDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `gsq query PROTOCOL ADDRESS --json`, repeated until the server answers or `STARTUP` passes.
fn query_until_answered(protocol: &str, address: &str) -> serde_json::Value {
    poll(STARTUP, || {
        let ran = run(&[
            "query",
            protocol,
            address,
            "--json",
            "--timeout",
            "300ms",
            "--retries",
            "1",
        ]);
        (ran.code == Some(0)).then(|| ran.json())
    })
    .unwrap_or_else(|| panic!("{protocol} at {address} never answered gsq"))
}

#[test]
fn gsq_reads_a_real_ddnet_server() {
    let Some(binary) = find_binary("DDNet-Server") else {
        return server_missing("DDNet-Server (Debian's ddnet-server)");
    };
    let dir = ServerDir::new("ddnet");
    let port = free_udp_port();
    // More than 16 slots: DDNet's extended info is the only form that counts them all.
    let config = format!(
        "sv_name \"gsq test tee\"\nsv_map ctf2\nsv_max_clients 24\nsv_spectator_slots 4\n\
         sv_register 0\nsv_port {port}\nbindaddr 127.0.0.1\nsv_ipv4only 1\n"
    );
    std::fs::write(dir.path().join("gsq.cfg"), config).unwrap();
    let child = Command::new(&binary)
        .args(["-f", "gsq.cfg"])
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
    let _server = Running(child);

    let status = query_until_answered("teeworlds", &format!("127.0.0.1:{port}"));
    assert_eq!(status["protocol"], "teeworlds");
    assert_eq!(status["name"], "gsq test tee");
    assert_eq!(status["map"], "ctf2");
    // 24 clients, 4 of them only as spectators.
    assert_eq!(status["max_players"], 20, "{status:#}");
    assert_eq!(status["rules"]["max_clients"], "24", "{status:#}");
    assert_eq!(status["num_players"], 0);
    assert_eq!(status["password"], false);
    assert_eq!(
        status["raw"]["reply"], "iext",
        "DDNet answers the extended form"
    );
    assert!(
        status["version"].as_str().unwrap().starts_with("0.6.4, "),
        "{status:#}"
    );
    assert_eq!(status["complete"], true);
}

/// Connects to the Teeworlds 0.7 server at `server` as far as its first step, so that it
/// lists a client: the token exchange, then the control message `CONNECT` (`01`) with the
/// server's token and ours, padded as the real client pads it. The server answers
/// `CONNECTACCEPT` (`02`) and lists the client as `(connecting)` until it times out.
/// Returns the socket, which must stay open while the client is to be listed.
fn connect_seven_client(server: SocketAddr) -> UdpSocket {
    use query_specs::teeworlds::seven::{Reply, Request};
    use query_wire::{Decode, Encode};

    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let client_token: u32 = 0x7e57_7ee5;
    let mut buf = [0u8; 1500];
    let server_token = poll(STARTUP, || {
        socket
            .send_to(&Request::token(client_token).to_vec().unwrap(), server)
            .unwrap();
        let (n, _) = socket.recv_from(&mut buf).ok()?;
        match Reply::from_bytes(&buf[..n]).ok()? {
            Reply::Token(token) if token.client_token == client_token => Some(token.server_token),
            _ => None,
        }
    })
    .expect("the 0.7 server never answered the token request");
    // A control packet, no acknowledgement, no chunks, the server's token, CONNECT, our
    // token, then zeros to 512 bytes of message, as the token request.
    let mut connect = vec![0x04, 0x00, 0x00];
    connect.extend_from_slice(&server_token.to_be_bytes());
    connect.push(0x01);
    connect.extend_from_slice(&client_token.to_be_bytes());
    connect.resize(query_specs::teeworlds::seven::TOKEN_REQUEST_LEN, 0);
    socket.send_to(&connect, server).unwrap();
    let (n, _) = socket.recv_from(&mut buf).expect("no answer to CONNECT");
    let mut accept = vec![0x04, 0x00, 0x00];
    accept.extend_from_slice(&client_token.to_be_bytes());
    accept.push(0x02);
    assert_eq!(&buf[..n], &accept[..], "not CONNECTACCEPT");
    socket
}

#[test]
fn gsq_reads_a_real_teeworlds_07_server() {
    let Some(binary) = find_binary("teeworlds-server") else {
        return server_missing("teeworlds-server (Debian's teeworlds-server, 0.7)");
    };
    let dir = ServerDir::new("teeworlds07");
    let port = free_udp_port();
    let config = format!(
        "sv_name \"gsq test seven\"\nsv_map ctf2\nsv_gametype ctf\nsv_max_clients 12\n\
         sv_player_slots 10\nsv_register 0\nsv_port {port}\nbindaddr 127.0.0.1\n"
    );
    std::fs::write(dir.path().join("gsq.cfg"), config).unwrap();
    let child = Command::new(&binary)
        .args(["-f", "gsq.cfg"])
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
    let _server = Running(child);
    let address = format!("127.0.0.1:{port}");

    let status = query_until_answered("teeworlds", &address);
    assert_eq!(status["protocol"], "teeworlds");
    assert_eq!(status["raw"]["reply"], "inf3 0.7", "{status:#}");
    assert_eq!(status["name"], "gsq test seven");
    assert_eq!(status["map"], "ctf2");
    assert_eq!(status["game_type"], "CTF");
    assert_eq!(status["version"], "0.7.5");
    assert_eq!(status["max_players"], 10, "{status:#}");
    assert_eq!(status["rules"]["max_clients"], "12", "{status:#}");
    assert_eq!(status["num_players"], 0);
    assert_eq!(status["password"], false);
    assert_eq!(status["complete"], true);

    // gsq bulk runs the same session.
    let ran = run_with_stdin(
        &["bulk", "-", "--timeout", "1s"],
        &format!("teeworlds {address}\n"),
    );
    let results = ran.json_lines();
    assert_eq!(results.len(), 1, "{ran:#?}");
    assert_eq!(results[0]["name"], "gsq test seven", "{ran:#?}");
    assert_eq!(results[0]["raw"]["reply"], "inf3 0.7");

    // A client half-way through connecting is listed as a spectator.
    let _client = connect_seven_client(address.parse().unwrap());
    let status = query_until_answered("teeworlds", &address);
    assert_eq!(status["rules"]["num_clients"], "1", "{status:#}");
    assert_eq!(status["num_players"], 0);
    let players = status["players"].as_array().unwrap();
    assert_eq!(players.len(), 1, "{status:#}");
    assert_eq!(players[0]["name"], "(connecting)");
    assert_eq!(players[0]["extra"]["is_player"], "0");
    assert_eq!(status["complete"], true);
}

/// Murmur's version, as `murmurd -version` prints it (`... -- 1.3.4-4`): `1.3.4`.
fn murmur_version(binary: &Path) -> String {
    let output = Command::new(binary).arg("-version").output().unwrap();
    let text = String::from_utf8_lossy(&output.stderr).into_owned()
        + &String::from_utf8_lossy(&output.stdout);
    let after = text
        .split("-- ")
        .nth(1)
        .unwrap_or_else(|| panic!("no version in {text:?}"));
    after
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .next()
        .unwrap()
        .to_owned()
}

#[test]
fn gsq_reads_a_real_murmur_server() {
    let Some(binary) = find_binary("murmurd") else {
        return server_missing("murmurd (Debian's mumble-server)");
    };
    let dir = ServerDir::new("murmur");
    let port = free_udp_port();
    let config = format!(
        "database={db}\nlogfile={log}\nhost=127.0.0.1\nport={port}\nusers=42\n\
         bandwidth=72000\nregisterName=gsq test voice\nbonjour=false\n",
        db = dir.path().join("murmur.sqlite").display(),
        log = dir.path().join("murmur.log").display(),
    );
    let ini = dir.path().join("murmur.ini");
    std::fs::write(&ini, config).unwrap();
    let child = Command::new(&binary)
        .arg("-fg")
        .arg("-ini")
        .arg(&ini)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
    let _server = Running(child);

    let status = query_until_answered("mumble", &format!("127.0.0.1:{port}"));
    assert_eq!(status["protocol"], "mumble");
    assert_eq!(status["max_players"], 42, "{status:#}");
    assert_eq!(status["num_players"], 0);
    assert_eq!(status["rules"]["bandwidth"], "72000");
    assert_eq!(status["version"], murmur_version(&binary).as_str());
    assert_eq!(status["complete"], true);
}
