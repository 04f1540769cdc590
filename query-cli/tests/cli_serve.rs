//! `gsq serve`: startup lines, state-file reloads, logging of dropped sources, clean stops.

mod cli_support;

use std::net::UdpSocket;
use std::time::Duration;

use serde_json::Value;

use cli_support::{poll, run, Server, StateDir, SAMPLE_STATE};

/// The server name `gsq query` sees now, if it answers.
fn served_name(protocol: &str, address: &str) -> Option<String> {
    let ran = run(&[
        "query", protocol, address, "--json", "-t", "300ms", "-r", "1",
    ]);
    if ran.code != Some(0) {
        return None;
    }
    let status: Value = serde_json::from_str(ran.stdout.trim()).ok()?;
    status["name"].as_str().map(str::to_owned)
}

fn state_named(name: &str) -> String {
    SAMPLE_STATE.replace("name = \"Café Zoë\"", &format!("name = \"{name}\""))
}

#[test]
fn startup_prints_one_line_per_protocol_with_the_bound_address() {
    let server = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &["--sqp", "127.0.0.1:0", "--samp", "127.0.0.1:0"],
        &["sqp", "samp"],
    );
    assert_eq!(server.addresses.len(), 2);
    for (protocol, address) in &server.addresses {
        assert!(address.ip().is_loopback(), "{protocol} {address}");
        assert_ne!(address.port(), 0, "{protocol}: the real port is printed");
    }
    assert_ne!(server.addresses["sqp"], server.addresses["samp"]);

    let all = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &["--all", "127.0.0.1:0"],
        &["sqp", "onequery", "samp", "gamespy1", "a2s"],
    );
    let ports: Vec<u16> = all.addresses.values().map(|a| a.port()).collect();
    assert!(
        ports.iter().all(|p| *p == ports[0]),
        "one port for all: {:?}",
        all.addresses
    );
}

#[test]
fn a_changed_state_file_is_served_after_reload() {
    let server = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &["--sqp", "127.0.0.1:0", "--samp", "127.0.0.1:0"],
        &["sqp", "samp"],
    );
    let sqp = server.addr("sqp");
    let samp = server.addr("samp");
    assert_eq!(served_name("sqp", &sqp).as_deref(), Some("Café Zoë"));

    // An editor-style save: a new file renamed over the old one.
    server.state.replace(&state_named("Renamed Server"));
    let seen = poll(Duration::from_secs(10), || {
        (served_name("sqp", &sqp).as_deref() == Some("Renamed Server")).then_some(())
    });
    assert!(
        seen.is_some(),
        "the new name was never served; log: {:?}",
        server.stderr_lines()
    );
    assert_eq!(
        served_name("samp", &samp).as_deref(),
        Some("Renamed Server")
    );
    assert!(
        server
            .wait_for_log(Duration::from_secs(2), |l| l.contains("reloaded")
                && l.contains("Renamed Server"))
            .is_some(),
        "{:?}",
        server.stderr_lines()
    );

    // An in-place overwrite, as `echo > state.toml` does.
    server.state.overwrite(&state_named("Third Name"));
    let seen = poll(Duration::from_secs(10), || {
        (served_name("samp", &samp).as_deref() == Some("Third Name")).then_some(())
    });
    assert!(seen.is_some(), "log: {:?}", server.stderr_lines());
}

#[test]
fn an_invalid_state_file_keeps_the_old_state_and_says_why_once() {
    let server = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &["--samp", "127.0.0.1:0"],
        &["samp"],
    );
    let samp = server.addr("samp");
    server.state.replace("name = \"Broken\nmax_players = 16\n");
    let warning = server.wait_for_log(Duration::from_secs(10), |l| {
        l.contains("keeping the previous state")
    });
    let warning = warning.unwrap_or_else(|| panic!("no warning; log: {:?}", server.stderr_lines()));
    assert!(warning.contains("state.toml"), "{warning}");
    assert!(warning.contains("line 1"), "{warning}");
    assert_eq!(served_name("samp", &samp).as_deref(), Some("Café Zoë"));

    // Unknown keys are refused too, and each new reason gets its line.
    server.state.replace("nmae = \"typo\"\n");
    let typo = server.wait_for_log(Duration::from_secs(10), |l| {
        l.contains("keeping the previous state") && l.contains("nmae")
    });
    assert!(typo.is_some(), "{:?}", server.stderr_lines());
    assert_eq!(served_name("samp", &samp).as_deref(), Some("Café Zoë"));
    let warnings = server
        .stderr_lines()
        .iter()
        .filter(|l| l.contains("keeping the previous state"))
        .count();
    assert_eq!(
        warnings,
        2,
        "one line per bad content: {:?}",
        server.stderr_lines()
    );

    // Fixing the file publishes it.
    server.state.replace(&state_named("Fixed"));
    let fixed = poll(Duration::from_secs(10), || {
        (served_name("samp", &samp).as_deref() == Some("Fixed")).then_some(())
    });
    assert!(fixed.is_some(), "{:?}", server.stderr_lines());
}

#[test]
fn json_state_files_are_served() {
    let state = StateDir::new(
        "json",
        r#"{"name": "From JSON", "map": "Dust", "max_players": 8,
            "players": [{"name": "Ann", "score": 3}], "rules": {"mode": "ctf"}}"#,
    );
    let server = Server::start(state, &["--sqp", "127.0.0.1:0"], &["sqp"]);
    let status = run(&["query", "sqp", &server.addr("sqp"), "--json"]).json();
    assert_eq!(status["name"], "From JSON");
    assert_eq!(status["map"], "Dust");
    assert_eq!(status["players"][0]["name"], "Ann");
    assert_eq!(status["rules"]["mode"], "ctf");
}

/// The reply `request` gets from `server` on a fresh socket, if any within a second.
fn raw_reply(server: &str, request: &[u8]) -> Option<Vec<u8>> {
    let client = UdpSocket::bind("127.0.0.1:0").unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(1)))
        .unwrap();
    client.send_to(request, server).unwrap();
    let mut buf = [0u8; 2048];
    let (len, _) = client.recv_from(&mut buf).ok()?;
    Some(buf[..len].to_vec())
}

const A2S_INFO: &[u8] = b"\xff\xff\xff\xffTSource Engine Query\0";

#[test]
fn a2s_is_served_alone_and_on_the_all_port_behind_its_challenge() {
    let server = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &[
            "--a2s",
            "127.0.0.1:0",
            "--all",
            "127.0.0.1:0",
            "--a2s-folder",
            "tdm",
            "--a2s-keywords",
            "casual,eu",
        ],
        &["a2s", "sqp"],
    );
    let all = server.addr("sqp");
    for address in [server.addr("a2s"), all.clone()] {
        let status = run(&["query", "a2s", &address, "--json"]).json();
        assert_eq!(status["name"], "Café Zoë", "{address}");
        assert_eq!(status["game_type"], "Team Deathmatch");
        assert_eq!(status["max_players"], 16);
        assert_eq!(status["players"][1]["name"], "Jürgen");
        assert_eq!(status["players"][1]["score"], 17);
        assert_eq!(status["rules"]["round_time"], "300");
        assert_eq!(status["raw"]["folder"], "tdm");
        assert_eq!(status["raw"]["keywords"], "casual,eu");
        assert_eq!(status["raw"]["port"], 7777);
        assert_eq!(status["complete"], true);
        // A request without a challenge gets only the 9-byte challenge.
        let reply = raw_reply(&address, A2S_INFO).expect("a challenge");
        assert_eq!((reply.len(), &reply[..5]), (9, &b"\xff\xff\xff\xffA"[..]));
        let reply = raw_reply(&address, b"\xff\xff\xff\xffU\xff\xff\xff\xff").expect("a challenge");
        assert_eq!(reply.len(), 9);
    }
    // The other protocols still answer on the shared port.
    assert_eq!(served_name("sqp", &all).as_deref(), Some("Café Zoë"));
}

#[test]
fn a2s_info_can_be_answered_without_a_challenge() {
    let server = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &["--a2s", "127.0.0.1:0", "--a2s-no-info-challenge"],
        &["a2s"],
    );
    let reply = raw_reply(&server.addr("a2s"), A2S_INFO).expect("an INFO reply");
    assert_eq!(&reply[..5], b"\xff\xff\xff\xffI");
    // PLAYER still needs one.
    let reply =
        raw_reply(&server.addr("a2s"), b"\xff\xff\xff\xffU\xff\xff\xff\xff").expect("a challenge");
    assert_eq!(&reply[..5], b"\xff\xff\xff\xffA");
}

#[test]
fn dropped_sources_are_logged_once_per_interval() {
    let server = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &[
            "--samp",
            "127.0.0.1:0",
            "--rate-limit",
            "1",
            "--burst",
            "1",
            "--log-interval",
            "60s",
        ],
        &["samp"],
    );
    let client = UdpSocket::bind("127.0.0.1:0").unwrap();
    for _ in 0..30 {
        client.send_to(b"not a query", server.addr("samp")).unwrap();
    }
    let first = server.wait_for_log(Duration::from_secs(5), |l| {
        l.contains("dropped a request from 127.0.0.1")
    });
    assert!(first.is_some(), "{:?}", server.stderr_lines());
    // Give the rest of the datagrams time to be handled, then count.
    std::thread::sleep(Duration::from_millis(300));
    let lines: Vec<String> = server
        .stderr_lines()
        .into_iter()
        .filter(|l| l.contains("dropped a request"))
        .collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("malformed request"), "{lines:?}");

    let (status, log) = server.stop_with("INT");
    assert!(status.success(), "{status:?} {log:?}");
    let stopped = log
        .iter()
        .find(|l| l.contains("stopped:"))
        .expect("a closing line");
    assert!(stopped.contains("30 requests"), "{stopped}");
    assert!(stopped.contains("29 rate-limited"), "{stopped}");
    assert!(stopped.contains("1 malformed"), "{stopped}");
}

#[test]
fn rate_limit_applies_per_source_and_can_be_turned_off() {
    let limited = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &["--sqp", "127.0.0.1:0", "--rate-limit", "1", "--burst", "2"],
        &["sqp"],
    );
    // A query takes two requests: the first uses the burst, the next is refused.
    assert_eq!(
        served_name("sqp", &limited.addr("sqp")).as_deref(),
        Some("Café Zoë")
    );
    let ran = run(&[
        "query",
        "sqp",
        &limited.addr("sqp"),
        "--json",
        "-t",
        "200ms",
        "-r",
        "0",
    ]);
    assert_eq!(
        ran.code,
        Some(8),
        "rate-limited means no reply, a timeout: {ran:#?}"
    );
    assert!(limited
        .wait_for_log(Duration::from_secs(2), |l| l.contains("rate-limited"))
        .is_some());

    let open = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &["--sqp", "127.0.0.1:0", "--no-rate-limit"],
        &["sqp"],
    );
    for _ in 0..15 {
        assert_eq!(
            served_name("sqp", &open.addr("sqp")).as_deref(),
            Some("Café Zoë")
        );
    }
}

/// With `--gso` a reply of several datagrams leaves as one segmented message; the client
/// still gets every datagram on its own and joins the whole reply.
#[test]
fn replies_in_several_datagrams_arrive_whole_with_gso() {
    let mut state = SAMPLE_STATE.to_owned();
    for i in 0..60 {
        state.push_str(&format!(
            "\n[[players]]\nname = \"player {i:02} of a crowded server\"\nscore = {i}\nping = 0\n"
        ));
    }
    let server = Server::start(
        StateDir::new("toml", &state),
        &[
            "--gso",
            "--gamespy1",
            "127.0.0.1:0",
            "--quake3",
            "127.0.0.1:0",
            "--no-rate-limit",
            "--no-byte-budget",
        ],
        &["gamespy1", "quake3"],
    );
    for protocol in ["gamespy1", "quake3"] {
        let ran = run(&[
            "query",
            protocol,
            &server.addr(protocol),
            "--json",
            "-t",
            "1s",
        ]);
        assert_eq!(ran.code, Some(0), "{protocol}: {ran:#?}");
        let status: Value = serde_json::from_str(ran.stdout.trim()).unwrap();
        assert_eq!(status["complete"], true, "{protocol}: {status}");
        let players = status["players"].as_array().unwrap();
        assert_eq!(players.len(), 62, "{protocol}: {status}");
        assert_eq!(players[61]["name"], "player 59 of a crowded server");
    }
}

#[test]
fn ctrl_c_and_sigterm_stop_cleanly() {
    for signal in ["INT", "TERM"] {
        let server = Server::start(
            StateDir::new("toml", SAMPLE_STATE),
            &["--sqp", "127.0.0.1:0", "--onequery", "127.0.0.1:0"],
            &["sqp", "onequery"],
        );
        assert_eq!(
            served_name("sqp", &server.addr("sqp")).as_deref(),
            Some("Café Zoë")
        );
        let (status, log) = server.stop_with(signal);
        assert_eq!(status.code(), Some(0), "SIG{signal}: {log:?}");
        assert!(log.iter().any(|l| l.contains("stopped:")), "{log:?}");
        assert!(!log.iter().any(|l| l.contains("panicked")), "{log:?}");
    }
}

#[test]
fn a_signal_right_after_the_startup_lines_still_stops_cleanly() {
    let server = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &["--gamespy1", "127.0.0.1:0"],
        &["gamespy1"],
    );
    let (status, log) = server.stop_with("INT");
    assert_eq!(status.code(), Some(0), "{log:?}");
    assert!(
        log.iter().any(|l| l.contains("stopped: 0 requests")),
        "{log:?}"
    );
}
