//! The SA:MP status and RCON sessions without sockets: datagrams and explicit instants in,
//! datagrams and results out. Replies come from the real responder unless a test forges them.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use query_net::clock::Now;
use query_net::engine::{ClientSession, ReplySink, Responder};
use query_net::engines::samp::{
    rcon_session, OpenMpInfo, SampConfig, SampResponder, SampSession, BAD_RCON_PASSWORD,
};
use query_net::state::{PlayerState, ServerState, SharedState};
use query_net::{Options, QueryError, RconCommand, ServerStatus};
use query_specs::samp::{Reply, ReplyBody, Request, RequestBody};
use query_wire::Decode;

const TIMEOUT: Duration = Duration::from_millis(100);

fn target() -> SocketAddr {
    "127.0.0.1:7777".parse().unwrap()
}

fn client_addr() -> SocketAddr {
    "127.0.0.1:50000".parse().unwrap()
}

fn options() -> Options {
    Options {
        timeout: TIMEOUT,
        retries: 2,
        ..Options::default()
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn player(name: &str, score: i64, ping: u32, id: Option<u32>) -> PlayerState {
    PlayerState {
        name: name.to_owned(),
        score,
        ping,
        id,
        ..PlayerState::default()
    }
}

fn state() -> ServerState {
    ServerState {
        name: "Café Los Santos".into(),
        game_type: "Freeroam".into(),
        language: "Español".into(),
        map: "San Andreas".into(),
        version: "0.3.7-R2".into(),
        max_players: 50,
        password: true,
        players: vec![
            player("Jürgen", 12, 40, Some(3)),
            player("Åsa", -7, 85, Some(9)),
            player("Ñandú", 0, 120, None),
        ],
        rules: [("weather", "10"), ("worldtime", "12:00")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.into()))
            .collect(),
        ..ServerState::default()
    }
}

fn responder(state: ServerState, config: SampConfig) -> SampResponder {
    SampResponder::new(SharedState::new(state), config)
}

/// Everything the session wants to send at `now`.
fn drain<S: ClientSession>(session: &mut S, now: Instant) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while let Some(datagram) = session.poll_transmit(now) {
        out.push(datagram.to_vec());
    }
    out
}

/// The responder's replies to one request.
fn answer(responder: &mut SampResponder, request: &[u8]) -> Vec<Vec<u8>> {
    let mut sink = ReplySink::default();
    responder.handle(client_addr(), request, Now::system(), &mut sink);
    sink.datagrams().map(<[u8]>::to_vec).collect()
}

fn opcodes(datagrams: &[Vec<u8>]) -> Vec<u8> {
    datagrams.iter().map(|d| d[10]).collect()
}

/// Answers every request with the responder, delivering the replies at `at`.
fn serve_all<S: ClientSession>(
    session: &mut S,
    responder: &mut SampResponder,
    requests: &[Vec<u8>],
    at: Instant,
) {
    for request in requests {
        for reply in answer(responder, request) {
            session.handle_datagram(target(), &reply, at);
        }
    }
}

/// Runs timeouts until the session finishes; fails if it asks to send anything meanwhile.
fn run_out<S: ClientSession>(session: &mut S) -> Result<S::Output, QueryError> {
    for _ in 0..100 {
        if let Some(result) = session.poll_result() {
            return result;
        }
        let deadline = session.poll_timeout().expect("a deadline while unfinished");
        session.handle_timeout(deadline);
        assert!(drain(session, deadline).is_empty(), "unexpected resend");
    }
    panic!("the session never finished");
}

#[test]
fn three_requests_leave_at_once_and_the_status_has_every_field() {
    let t0 = Instant::now();
    let mut session = SampSession::new(target(), &options()).unwrap();
    let requests = drain(&mut session, t0);
    assert_eq!(opcodes(&requests), b"ird");
    let sizes: Vec<usize> = requests.iter().map(Vec::len).collect();
    assert_eq!(sizes, [11, 11, 11]);
    for request in &requests {
        let decoded = Request::from_bytes(request).unwrap();
        assert_eq!(decoded.header.address, [127, 0, 0, 1]);
        assert_eq!(decoded.header.port, 7777);
    }

    let mut server = responder(state(), SampConfig::default());
    let at = t0 + ms(10);
    serve_all(&mut session, &mut server, &requests, at);
    // Nothing optional was asked, so nothing is waited for.
    let status = session.poll_result().unwrap().unwrap();
    assert_eq!(session.poll_timeout(), None);
    assert!(drain(&mut session, at + TIMEOUT * 4).is_empty());
    assert!(session.poll_result().is_none(), "the result comes once");

    assert_eq!(status.name, "Café Los Santos");
    assert_eq!(status.game_type.as_deref(), Some("Freeroam"));
    assert_eq!(status.map.as_deref(), Some("San Andreas"));
    assert_eq!(status.version.as_deref(), Some("0.3.7-R2"));
    assert_eq!((status.num_players, status.max_players), (3, 50));
    assert_eq!(status.password, Some(true));
    assert!(status.complete);
    assert_eq!(status.ping_ms, 10.0);
    let players: Vec<_> = status
        .players
        .iter()
        .map(|p| (p.name.as_str(), p.score, p.ping, p.id))
        .collect();
    assert_eq!(
        players,
        [
            ("Jürgen", Some(12), Some(40), Some(3)),
            ("Åsa", Some(-7), Some(85), Some(9)),
            ("Ñandú", Some(0), Some(120), Some(2)),
        ]
    );
    let rules: Vec<_> = status
        .rules
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        rules,
        [
            ("mapname", "San Andreas"),
            ("version", "0.3.7-R2"),
            ("weather", "10"),
            ("worldtime", "12:00"),
        ]
    );
    assert_eq!(status.raw["info"]["language"], "Español");
    assert_eq!(status.raw["open_mp"], false);
    assert_eq!(status.raw["player_list"], "d");
    assert_eq!(status.raw["encoding"], "Windows-1252");
    // The raw bytes of non-ASCII text stay available.
    assert_eq!(
        status.raw["text_hex"]["hostname"],
        "436166e9204c6f732053616e746f73"
    );
    assert_eq!(status.raw["text_hex"]["language"], "45737061f16f6c");
    assert_eq!(status.raw["text_hex"]["players"]["0"], "4afc7267656e");
    assert!(status.raw["text_hex"].get("gamemode").is_none());
}

#[test]
fn a_lost_request_is_sent_again_after_its_timeout_and_only_it() {
    let t0 = Instant::now();
    let mut session = SampSession::new(target(), &options()).unwrap();
    let requests = drain(&mut session, t0);
    let mut server = responder(state(), SampConfig::default());
    // Everything but `i` is answered.
    let (info, rest) = requests.split_first().unwrap();
    serve_all(&mut session, &mut server, rest, t0 + ms(5));
    assert!(session.poll_result().is_none());
    assert_eq!(session.poll_timeout(), Some(t0 + TIMEOUT));
    session.handle_timeout(t0 + TIMEOUT);
    // `i` goes again, identical, and nothing else.
    let resent = drain(&mut session, t0 + TIMEOUT);
    assert_eq!(resent, std::slice::from_ref(info));
    serve_all(&mut session, &mut server, &resent, t0 + TIMEOUT + ms(7));
    let status = session.poll_result().unwrap().unwrap();
    assert_eq!(status.name, "Café Los Santos");
    assert_eq!(status.players.len(), 3);
    assert_eq!(status.ping_ms, 5.0);
}

#[test]
fn an_unanswered_required_request_fails_naming_it() {
    let t0 = Instant::now();
    let mut session = SampSession::new(target(), &options()).unwrap();
    let requests = drain(&mut session, t0);
    let mut server = responder(state(), SampConfig::default());
    // The rules request never gets through.
    let others: Vec<_> = requests.iter().filter(|r| r[10] != b'r').cloned().collect();
    serve_all(&mut session, &mut server, &others, t0 + ms(5));
    let mut rules_sent = 1;
    let mut now = t0;
    let err = loop {
        if let Some(result) = session.poll_result() {
            break result.unwrap_err();
        }
        now = session.poll_timeout().unwrap();
        session.handle_timeout(now);
        let resent = drain(&mut session, now);
        assert!(resent.iter().all(|r| r[10] == b'r'), "only `r` is resent");
        rules_sent += resent.len();
    };
    match err {
        QueryError::Timeout {
            waiting_for,
            attempts,
            after,
        } => {
            assert_eq!(waiting_for, "rules request");
            assert_eq!(attempts, 3);
            assert_eq!(after, TIMEOUT * 3);
        }
        other => panic!("unexpected {other}"),
    }
    assert_eq!(rules_sent, 3);
    assert_eq!(now, t0 + TIMEOUT * 3);
    assert!(session.poll_timeout().is_none());
    assert!(drain(&mut session, now + TIMEOUT).is_empty());
}

#[test]
fn silence_is_a_timeout_of_the_info_request() {
    let t0 = Instant::now();
    let mut session = SampSession::new(target(), &options()).unwrap();
    drain(&mut session, t0);
    let err = loop {
        if let Some(result) = session.poll_result() {
            break result.unwrap_err();
        }
        let now = session.poll_timeout().unwrap();
        session.handle_timeout(now);
        drain(&mut session, now);
    };
    assert!(
        matches!(
            err,
            QueryError::Timeout {
                waiting_for: "info request",
                attempts: 3,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn replies_with_another_header_or_echo_are_ignored_and_the_real_ones_accepted() {
    let t0 = Instant::now();
    let mut session = SampSession::new(target(), &options()).unwrap();
    let requests = drain(&mut session, t0);
    let mut server = responder(state(), SampConfig::default());
    let mut evil = responder(
        ServerState {
            name: "EVIL".into(),
            ..state()
        },
        SampConfig::default(),
    );
    for request in &requests {
        for forged in answer(&mut evil, request) {
            // Every byte of the header matters: address, port and opcode.
            for at in [4, 7, 8, 9, 10] {
                let mut other = forged.clone();
                other[at] ^= 0x01;
                session.handle_datagram(target(), &other, t0 + ms(1));
            }
            // The right header from the wrong address is dropped before the engine sees it.
            session.handle_datagram(client_addr(), &forged, t0 + ms(1));
        }
    }
    assert!(session.poll_result().is_none());

    serve_all(&mut session, &mut server, &requests, t0 + ms(10));
    let status = session.poll_result().unwrap().unwrap();
    assert_eq!(status.name, "Café Los Santos");
    assert_eq!(status.ping_ms, 10.0);
}

#[test]
fn a_reply_that_does_not_decode_is_the_error_if_no_good_one_follows() {
    let t0 = Instant::now();
    let mut session = SampSession::new(target(), &options()).unwrap();
    let requests = drain(&mut session, t0);
    let mut server = responder(state(), SampConfig::default());
    let mut info = answer(&mut server, &requests[0]).remove(0);
    info.truncate(info.len() - 3);
    let mut now = t0;
    let err = loop {
        session.handle_datagram(target(), &info, now + ms(1));
        if let Some(result) = session.poll_result() {
            break result.unwrap_err();
        }
        now = session.poll_timeout().unwrap();
        session.handle_timeout(now);
        drain(&mut session, now);
    };
    match err {
        QueryError::Malformed(e) => {
            assert!(e.path_string().starts_with("Reply.body"), "{e}");
            assert_eq!(e.offset(), info.len() - 4);
        }
        other => panic!("unexpected {other}"),
    }
}

#[test]
fn a_lagging_detailed_list_gives_way_to_the_client_list() {
    let t0 = Instant::now();
    let mut session = SampSession::new(target(), &options()).unwrap();
    let requests = drain(&mut session, t0);
    let mut server = responder(
        state(),
        SampConfig {
            detailed_players: false,
            ..SampConfig::default()
        },
    );
    serve_all(&mut session, &mut server, &requests, t0 + ms(10));
    // `i` and `r` took 10 ms: a `d` missing 20 ms later is not coming.
    assert!(session.poll_result().is_none());
    assert_eq!(session.poll_timeout(), Some(t0 + ms(30)));
    session.handle_timeout(t0 + ms(30));
    let sent = drain(&mut session, t0 + ms(30));
    assert_eq!(opcodes(&sent), b"co", "`c`, and `o` in case it is open.mp");
    assert!(sent.iter().all(|r| r.len() == 11));
    serve_all(&mut session, &mut server, &sent, t0 + ms(33));
    // A SA:MP server never answers `o`: a short grace period, not a whole timeout.
    let status = run_out(&mut session).unwrap();
    assert!(status.complete);
    assert_eq!(status.raw["player_list"], "c");
    assert_eq!(status.raw["open_mp"], false);
    let players: Vec<_> = status
        .players
        .iter()
        .map(|p| (p.name.as_str(), p.score, p.ping, p.id))
        .collect();
    assert_eq!(
        players,
        [
            ("Jürgen", Some(12), None, None),
            ("Åsa", Some(-7), None, None),
            ("Ñandú", Some(0), None, None),
        ]
    );
}

#[test]
fn a_detailed_list_that_comes_after_all_is_taken() {
    let t0 = Instant::now();
    let mut session = SampSession::new(target(), &options()).unwrap();
    let requests = drain(&mut session, t0);
    let mut server = responder(state(), SampConfig::default());
    let (status_requests, detailed) = requests.split_at(2);
    serve_all(&mut session, &mut server, status_requests, t0 + ms(5));
    session.handle_timeout(session.poll_timeout().unwrap());
    let sent = drain(&mut session, t0 + ms(25));
    assert_eq!(opcodes(&sent), b"co");
    // The slow `d` arrives before `c`: it is the list, with ids and pings.
    serve_all(&mut session, &mut server, detailed, t0 + ms(40));
    let status = run_out(&mut session).unwrap();
    assert_eq!(status.raw["player_list"], "d");
    assert_eq!(status.players[0].ping, Some(40));
}

#[test]
fn an_empty_server_is_not_asked_for_its_list_twice() {
    let t0 = Instant::now();
    let mut session = SampSession::new(target(), &options()).unwrap();
    let requests = drain(&mut session, t0);
    let empty = ServerState {
        players: Vec::new(),
        ..state()
    };
    let mut server = responder(
        empty,
        SampConfig {
            detailed_players: false,
            ..SampConfig::default()
        },
    );
    serve_all(&mut session, &mut server, &requests, t0 + ms(10));
    let status = session.poll_result().unwrap().unwrap();
    assert!(status.complete);
    assert!(status.players.is_empty());
    assert!(status.raw["player_list"].is_null());
    assert!(drain(&mut session, t0 + TIMEOUT * 4).is_empty());
}

#[test]
fn above_100_players_the_list_is_absent_without_waiting_or_failing() {
    let t0 = Instant::now();
    let mut session = SampSession::new(target(), &options()).unwrap();
    let requests = drain(&mut session, t0);
    let crowded = ServerState {
        players: (0..150)
            .map(|i| player(&format!("p{i}"), i, 10, None))
            .collect(),
        max_players: 200,
        ..state()
    };
    let mut server = responder(crowded, SampConfig::default());
    for request in &requests {
        let replies = answer(&mut server, request);
        if matches!(request[10], b'c' | b'd') {
            assert!(replies.is_empty(), "no list above 100 players");
        }
    }
    serve_all(&mut session, &mut server, &requests, t0 + ms(10));
    let status = run_out(&mut session).unwrap();
    assert_eq!(status.num_players, 150);
    assert!(status.players.is_empty());
    assert!(!status.complete);
    assert_eq!(
        status.raw["player_list_missing"],
        "the server lists players only up to 100"
    );
    assert!(status.raw["player_list"].is_null());
}

#[test]
fn a_list_that_never_comes_is_absent_not_a_failure() {
    let t0 = Instant::now();
    let mut session = SampSession::new(target(), &options()).unwrap();
    let requests = drain(&mut session, t0);
    let mut server = responder(state(), SampConfig::default());
    let mut now = t0;
    let mut pending = requests;
    loop {
        // Lists get lost, everything else is answered.
        let answered: Vec<_> = pending
            .iter()
            .filter(|r| !matches!(r[10], b'c' | b'd'))
            .cloned()
            .collect();
        serve_all(&mut session, &mut server, &answered, now + ms(2));
        if let Some(result) = session.poll_result() {
            let status = result.unwrap();
            assert!(!status.complete);
            assert!(status.players.is_empty());
            assert_eq!(status.num_players, 3);
            assert!(status.raw["player_list_missing"]
                .as_str()
                .unwrap()
                .contains("neither"));
            break;
        }
        now = session.poll_timeout().unwrap();
        session.handle_timeout(now);
        pending = drain(&mut session, now);
    }
    // `c` left 20 ms after `i` and `r` were in; it and `d` each had three attempts.
    assert_eq!(now, t0 + ms(22) + TIMEOUT * 3);
}

fn open_mp_extra() -> OpenMpInfo {
    OpenMpInfo {
        discord: "discord.gg/x".into(),
        light_banner: "https://example.com/light.png".into(),
        dark_banner: "https://example.com/dark.png".into(),
        logo: String::new(),
    }
}

fn assert_open_mp(status: &ServerStatus) {
    assert_eq!(status.raw["open_mp"], true);
    assert_eq!(status.raw["open_mp_extra"]["discord"], "discord.gg/x");
    assert_eq!(
        status.raw["open_mp_extra"]["dark_banner"],
        "https://example.com/dark.png"
    );
    assert_eq!(status.raw["open_mp_extra"]["logo"], "");
    assert_eq!(status.raw["player_list"], "c");
    assert_eq!(status.players.len(), 3);
    assert!(status.complete);
}

#[test]
fn an_open_mp_server_named_in_the_rules_is_asked_for_the_client_list_at_once() {
    for version in ["omp 1.4.0.2779", "0.3.7-R2 open.mp"] {
        let t0 = Instant::now();
        let mut session = SampSession::new(target(), &options()).unwrap();
        let requests = drain(&mut session, t0);
        let open_mp = ServerState {
            version: version.into(),
            ..state()
        };
        let mut server = responder(open_mp, SampConfig::open_mp(open_mp_extra()));
        serve_all(&mut session, &mut server, &requests, t0 + ms(10));
        let sent = drain(&mut session, t0 + ms(10));
        assert_eq!(opcodes(&sent), b"co", "{version}: no waiting for `d`");
        serve_all(&mut session, &mut server, &sent, t0 + ms(20));
        let status = session.poll_result().unwrap().unwrap();
        assert_open_mp(&status);
    }
}

#[test]
fn an_open_mp_server_that_does_not_say_so_is_found_by_its_missing_detailed_list() {
    let t0 = Instant::now();
    let mut session = SampSession::new(target(), &options()).unwrap();
    let requests = drain(&mut session, t0);
    let mut server = responder(state(), SampConfig::open_mp(open_mp_extra()));
    serve_all(&mut session, &mut server, &requests, t0 + ms(10));
    assert!(drain(&mut session, t0 + ms(10)).is_empty());
    session.handle_timeout(t0 + ms(30));
    let sent = drain(&mut session, t0 + ms(30));
    assert_eq!(opcodes(&sent), b"co");
    serve_all(&mut session, &mut server, &sent, t0 + ms(40));
    let status = session.poll_result().unwrap().unwrap();
    assert_open_mp(&status);
}

#[test]
fn players_and_rules_are_not_asked_when_not_wanted() {
    let t0 = Instant::now();
    let mut session = SampSession::new(
        target(),
        &Options {
            players: false,
            rules: false,
            ..options()
        },
    )
    .unwrap();
    let requests = drain(&mut session, t0);
    assert_eq!(opcodes(&requests), b"i");
    let mut server = responder(state(), SampConfig::default());
    serve_all(&mut session, &mut server, &requests, t0 + ms(4));
    let status = session.poll_result().unwrap().unwrap();
    assert!(status.complete);
    assert!(status.players.is_empty() && status.rules.is_empty());
    assert_eq!(status.map, None);
}

#[test]
fn the_ping_is_the_fastest_round_trip() {
    let t0 = Instant::now();
    let mut session = SampSession::new(target(), &options()).unwrap();
    let requests = drain(&mut session, t0);
    let mut server = responder(state(), SampConfig::default());
    for (request, delay) in requests.iter().zip([8, 7, 9]) {
        serve_all(
            &mut session,
            &mut server,
            std::slice::from_ref(request),
            t0 + ms(delay),
        );
    }
    let status = session.poll_result().unwrap().unwrap();
    assert_eq!(status.ping_ms, 7.0);
    assert!(status.raw.get("ping_source").is_none());
}

#[test]
fn text_is_decoded_in_the_chosen_encoding() {
    let t0 = Instant::now();
    let cyrillic = ServerState {
        name: "Сервер".into(),
        players: vec![player("Иван", 1, 1, None)],
        ..ServerState::default()
    };
    let mut server = responder(
        cyrillic,
        SampConfig {
            encoding: query_wire::TextEncoding::Windows1251,
            ..SampConfig::default()
        },
    );
    for (encoding, name) in [
        (Some(query_wire::TextEncoding::Windows1251), "Сервер"),
        (None, "Ñåðâåð"),
    ] {
        let mut session = SampSession::new(
            target(),
            &Options {
                encoding,
                ..options()
            },
        )
        .unwrap();
        let requests = drain(&mut session, t0);
        serve_all(&mut session, &mut server, &requests, t0 + ms(1));
        let status = run_out(&mut session).unwrap();
        assert_eq!(status.name, name);
        assert_eq!(status.raw["text_hex"]["hostname"], "d1e5f0e2e5f0");
    }
}

fn rcon(password: &str, command: &str) -> RconCommand {
    RconCommand {
        password: password.into(),
        command: command.into(),
    }
}

fn rcon_server() -> SampResponder {
    responder(
        state(),
        SampConfig {
            rcon_password: Some("s3cret".into()),
            ..SampConfig::default()
        },
    )
    .with_rcon_handler(|command, state| match command {
        "players" => state.players.iter().map(|p| p.name.clone()).collect(),
        "silent" => Vec::new(),
        other => vec![format!("Unknown command or variable: {other}")],
    })
}

#[test]
fn rcon_lines_are_collected_until_the_server_goes_quiet() {
    let t0 = Instant::now();
    let mut session = rcon_session(target(), &rcon("s3cret", "players"), &options())
        .unwrap()
        .with_quiet_period(ms(50));
    let sent = drain(&mut session, t0);
    assert_eq!(opcodes(&sent), b"xi");
    let Request {
        body: RequestBody::Rcon { password, command },
        ..
    } = Request::from_bytes(&sent[0]).unwrap()
    else {
        panic!("not an RCON request");
    };
    assert_eq!(
        (password.as_bytes(), command.as_bytes()),
        (&b"s3cret"[..], &b"players"[..])
    );

    let mut server = rcon_server();
    let lines = answer(&mut server, &sent[0]);
    assert_eq!(lines.len(), 3);
    session.handle_datagram(target(), &lines[0], t0 + ms(5));
    session.handle_datagram(target(), &lines[1], t0 + ms(30));
    serve_all(&mut session, &mut server, &sent[1..], t0 + ms(31));
    assert_eq!(session.poll_timeout(), Some(t0 + ms(80)));
    session.handle_datagram(target(), &lines[2], t0 + ms(70));
    assert_eq!(session.poll_timeout(), Some(t0 + ms(120)));
    session.handle_timeout(t0 + ms(119));
    assert!(session.poll_result().is_none());
    session.handle_timeout(t0 + ms(120));
    assert_eq!(
        session.poll_result().unwrap().unwrap(),
        ["Jürgen", "Åsa", "Ñandú"]
    );
}

#[test]
fn a_wrong_rcon_password_is_an_authentication_error_at_once() {
    let t0 = Instant::now();
    let mut session = rcon_session(target(), &rcon("guess", "gmx"), &options()).unwrap();
    let sent = drain(&mut session, t0);
    let mut server = rcon_server();
    let replies = answer(&mut server, &sent[0]);
    assert_eq!(replies.len(), 1);
    let Reply {
        body: ReplyBody::Rcon(line),
        ..
    } = Reply::from_bytes(&replies[0]).unwrap()
    else {
        panic!("not an RCON line");
    };
    assert_eq!(line.as_bytes(), BAD_RCON_PASSWORD.as_bytes());
    session.handle_datagram(target(), &replies[0], t0 + ms(3));
    match session.poll_result().unwrap().unwrap_err() {
        QueryError::AuthRequired(message) => assert_eq!(message, BAD_RCON_PASSWORD),
        other => panic!("unexpected {other}"),
    }
}

#[test]
fn an_rcon_command_is_never_resent_and_a_silent_one_returns_no_lines() {
    let t0 = Instant::now();
    let mut session = rcon_session(target(), &rcon("s3cret", "silent"), &options()).unwrap();
    let sent = drain(&mut session, t0);
    let mut server = rcon_server();
    assert!(answer(&mut server, &sent[0]).is_empty());
    // The probe is lost once, then answered.
    session.handle_timeout(t0 + TIMEOUT);
    let resent = drain(&mut session, t0 + TIMEOUT);
    assert_eq!(opcodes(&resent), b"i", "the command itself is not resent");
    serve_all(&mut session, &mut server, &resent, t0 + TIMEOUT + ms(2));
    // The server is up, and nothing was printed within a timeout of the command.
    assert_eq!(
        session.poll_result().unwrap().unwrap(),
        Vec::<String>::new()
    );

    // Answered at once, the probe still leaves the command a whole timeout to print.
    let mut session = rcon_session(target(), &rcon("s3cret", "silent"), &options()).unwrap();
    let sent = drain(&mut session, t0);
    serve_all(&mut session, &mut server, &sent, t0 + ms(2));
    assert_eq!(session.poll_timeout(), Some(t0 + TIMEOUT));
    assert_eq!(run_out(&mut session).unwrap(), Vec::<String>::new());
}

#[test]
fn rcon_to_a_silent_server_times_out() {
    let t0 = Instant::now();
    let mut session = rcon_session(target(), &rcon("s3cret", "players"), &options()).unwrap();
    let mut sent = drain(&mut session, t0).len();
    let err = loop {
        if let Some(result) = session.poll_result() {
            break result.unwrap_err();
        }
        let now = session.poll_timeout().unwrap();
        session.handle_timeout(now);
        sent += drain(&mut session, now).len();
    };
    assert!(
        matches!(err, QueryError::Timeout { attempts: 3, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("RCON command"), "{err}");
    assert_eq!(sent, 4, "one command, three probes");
}

#[test]
fn rcon_lines_with_another_header_are_ignored() {
    let t0 = Instant::now();
    let mut session = rcon_session(target(), &rcon("s3cret", "players"), &options())
        .unwrap()
        .with_quiet_period(ms(50));
    let sent = drain(&mut session, t0);
    let mut server = rcon_server();
    let mut forged = answer(&mut server, &sent[0]).remove(0);
    forged[5] ^= 1;
    session.handle_datagram(target(), &forged, t0 + ms(1));
    let real = answer(&mut server, &sent[0]);
    session.handle_datagram(target(), &real[0], t0 + ms(2));
    session.handle_timeout(t0 + ms(52));
    assert_eq!(session.poll_result().unwrap().unwrap(), ["Jürgen"]);
}
