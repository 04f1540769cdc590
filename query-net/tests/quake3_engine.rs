//! The Quake 3 status session without sockets (datagrams joined in any order, resends,
//! duplicates, garbage and other sources, with explicit instants), and the client against the
//! responder over loopback UDP, through a lossy link too.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use query_net::driver;
use query_net::engine::ClientSession;
use query_net::engines::quake3::{Quake3Config, Quake3Responder, Quake3Session, SPLIT_HINT};
use query_net::service::Service;
use query_net::state::{PlayerState, RuleValue, ServerState, SharedState};
use query_net::testing::lossy::{Impairments, LossyProxy};
use query_net::{Options, Protocol, QueryError};
use tokio::net::UdpSocket;
use tokio_util::sync::CancellationToken;

const TIMEOUT: Duration = Duration::from_millis(100);
const HEADER: &[u8] = b"\xff\xff\xff\xffstatusResponse\n";

fn target() -> SocketAddr {
    "127.0.0.1:27960".parse().unwrap()
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

fn session(t0: Instant) -> Quake3Session {
    let mut session = Quake3Session::new(target(), &options());
    let sent = session.poll_transmit(t0).map(<[u8]>::to_vec);
    assert_eq!(sent.as_deref(), Some(&b"\xff\xff\xff\xffgetstatus\n"[..]));
    assert!(session.poll_transmit(t0).is_none());
    session
}

/// A reply datagram: the header, then `body`.
fn datagram(body: &[u8]) -> Vec<u8> {
    [HEADER, body].concat()
}

/// A first datagram of a split reply: the pair line, padded with a long rule so that it
/// reaches [`SPLIT_HINT`], then `players` lines.
fn long_first(players: std::ops::Range<usize>) -> Vec<u8> {
    let mut body =
        b"\\sv_hostname\\^1Big ^7Server\\mapname\\q3dm17\\sv_maxclients\\64\\pad\\".to_vec();
    body.extend(std::iter::repeat_n(b'x', SPLIT_HINT));
    body.push(b'\n');
    for i in players {
        body.extend(format!("{i} 50 \"p{i}\"\n").bytes());
    }
    datagram(&body)
}

/// A continuation: player lines only.
fn continuation(players: std::ops::Range<usize>) -> Vec<u8> {
    let mut body = Vec::new();
    for i in players {
        body.extend(format!("{i} 50 \"p{i}\"\n").bytes());
    }
    datagram(&body)
}

fn names(status: &query_net::ServerStatus) -> Vec<String> {
    status.players.iter().map(|p| p.name.clone()).collect()
}

fn expected_names(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("p{i}")).collect()
}

#[test]
fn a_short_reply_is_whole_and_ends_the_query_at_once() {
    let t0 = Instant::now();
    let mut s = session(t0);
    let reply = datagram(
        b"\\sv_hostname\\^1Caf\xe9 ^7Arena\\mapname\\q3dm6\\g_gametype\\0\\sv_maxclients\\16\
          \\g_needpass\\1\\version\\ioq3 1.36\\fraglimit\\20\n\
          12 48 \"^2Zo\xeb\"\n-1 0 \"bot\"\n",
    );
    s.handle_datagram(target(), &reply, t0 + ms(9));
    let status = s.poll_result().unwrap().unwrap();
    assert_eq!(status.protocol, Protocol::Quake3);
    assert_eq!(status.ping_ms, 9.0);
    assert_eq!(status.name, "Café Arena", "colour codes removed");
    assert_eq!(status.raw["hostname"], "^1Café ^7Arena", "and kept in raw");
    assert_eq!(status.map.as_deref(), Some("q3dm6"));
    assert_eq!(status.game_type.as_deref(), Some("0"));
    assert_eq!(status.version.as_deref(), Some("ioq3 1.36"));
    assert_eq!((status.num_players, status.max_players), (2, 16));
    assert_eq!(status.password, Some(true));
    assert_eq!(names(&status), ["Zoë", "bot"]);
    assert_eq!(status.players[0].score, Some(12));
    assert_eq!(status.players[1].ping, Some(0));
    assert_eq!(status.raw["players"][0]["name"], "^2Zoë");
    assert_eq!(status.rules["fraglimit"], "20");
    assert!(status.complete);
    assert!(s.poll_timeout().is_none(), "finished");
}

#[test]
fn a_long_reply_waits_for_continuations_in_any_order() {
    let t0 = Instant::now();
    let mut s = session(t0);
    // A continuation before the first datagram is kept; then the first; then another.
    s.handle_datagram(target(), &continuation(10..20), t0 + ms(4));
    assert!(s.poll_result().is_none());
    s.handle_datagram(target(), &long_first(0..10), t0 + ms(5));
    assert!(
        s.poll_result().is_none(),
        "a long first datagram may have more"
    );
    s.handle_datagram(target(), &continuation(20..25), t0 + ms(6));
    // The first datagram again (the answer to a resend) adds nothing, nor does a
    // continuation duplicated on the way.
    s.handle_datagram(target(), &continuation(10..20), t0 + ms(6));
    s.handle_datagram(target(), &long_first(0..10), t0 + ms(7));
    let until = s.poll_timeout().expect("waits for more");
    assert!(
        until > t0 + ms(6) && until <= t0 + TIMEOUT + ms(50),
        "{:?}",
        until - t0
    );
    s.handle_timeout(until);
    let status = s.poll_result().unwrap().unwrap();
    assert_eq!(status.name, "Big Server");
    let mut got = names(&status);
    got.sort_by_key(|n| n[1..].parse::<usize>().unwrap());
    assert_eq!(got, expected_names(0..25));
    assert_eq!(status.raw["datagrams"], 3);
    assert_eq!(status.ping_ms, 5.0, "the round trip of the first datagram");
}

#[test]
fn a_lost_request_is_sent_again_and_the_late_answer_counts() {
    let t0 = Instant::now();
    let mut s = session(t0);
    let first_timeout = s.poll_timeout().unwrap();
    assert_eq!(first_timeout, t0 + TIMEOUT);
    s.handle_timeout(first_timeout);
    assert!(s.poll_result().is_none());
    assert!(s.poll_transmit(first_timeout).is_some(), "sent again");
    s.handle_datagram(
        target(),
        &datagram(b"\\sv_hostname\\again\n"),
        first_timeout + ms(3),
    );
    let status = s.poll_result().unwrap().unwrap();
    assert_eq!(status.name, "again");
    assert_eq!(status.ping_ms, 3.0, "measured from the resend");
}

#[test]
fn silence_is_a_timeout_after_every_attempt() {
    let t0 = Instant::now();
    let mut s = session(t0);
    let mut sent = 1;
    let mut now = t0;
    while let Some(at) = s.poll_timeout() {
        now = at;
        s.handle_timeout(now);
        sent += usize::from(s.poll_transmit(now).is_some());
    }
    assert_eq!(sent, 3, "one send and two retries");
    assert!(matches!(
        s.poll_result(),
        Some(Err(QueryError::Timeout { .. }))
    ));
    assert_eq!(now, t0 + 3 * TIMEOUT);
}

#[test]
fn garbage_and_other_sources_are_ignored_and_garbage_is_named_if_nothing_else_came() {
    let t0 = Instant::now();
    let mut s = session(t0);
    let other: SocketAddr = "127.0.0.1:27961".parse().unwrap();
    s.handle_datagram(other, &datagram(b"\\sv_hostname\\forged\n"), t0 + ms(1));
    s.handle_datagram(
        target(),
        b"\xff\xff\xff\xffinfoResponse\n\\x\\y",
        t0 + ms(2),
    );
    s.handle_datagram(target(), b"garbage", t0 + ms(3));
    assert!(s.poll_result().is_none(), "none of those is an answer");
    while let Some(at) = s.poll_timeout() {
        s.handle_timeout(at);
        let _ = s.poll_transmit(at);
    }
    match s.poll_result() {
        Some(Err(QueryError::Malformed(e))) => assert_eq!(e.offset(), 0, "{e}"),
        other => panic!("expected the garbage named, got {other:?}"),
    }
}

#[test]
fn giving_up_keeps_what_arrived() {
    let t0 = Instant::now();
    let mut s = session(t0);
    s.handle_datagram(target(), &long_first(0..3), t0 + ms(2));
    let status = s
        .give_up(QueryError::protocol("deadline"), t0 + ms(3))
        .unwrap();
    assert_eq!(names(&status), expected_names(0..3));
    assert!(!status.complete, "the wait for continuations was cut");
    assert!(
        status.raw["incomplete"][0]
            .as_str()
            .unwrap()
            .contains("waiting for more datagrams"),
        "{}",
        status.raw
    );
    let mut silent = session(t0);
    assert!(silent
        .give_up(QueryError::protocol("deadline"), t0 + ms(3))
        .is_err());
}

/// Runs the session's timers until it ends, and returns its status.
fn run_out(s: &mut Quake3Session) -> query_net::ServerStatus {
    while let Some(at) = s.poll_timeout() {
        s.handle_timeout(at);
        let _ = s.poll_transmit(at);
    }
    s.poll_result().unwrap().unwrap()
}

/// The reasons a status gives for being incomplete.
fn reasons(status: &query_net::ServerStatus) -> Vec<String> {
    status.raw["incomplete"]
        .as_array()
        .map(|r| r.iter().map(|r| r.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

#[test]
fn real_two_number_lines_and_three_number_lines_both_decode() {
    let t0 = Instant::now();
    let mut s = session(t0);
    // ioquake3 / OpenArena: `score ping "name"`; some engines add a team before the name.
    let reply =
        datagram(b"\\sv_hostname\\x\n12 48 \"ioq3\"\n7 30 2 \"teamed\"\n0 999 1 4 \"four\"\n");
    s.handle_datagram(target(), &reply, t0 + ms(1));
    let status = s.poll_result().unwrap().unwrap();
    assert!(status.complete, "{}", status.raw);
    assert_eq!(names(&status), ["ioq3", "teamed", "four"]);
    assert_eq!(status.players[1].score, Some(7));
    assert_eq!(status.players[1].ping, Some(30));
    assert!(status.raw["players"][0].get("more").is_none());
    assert_eq!(status.raw["players"][1]["more"], serde_json::json!([2]));
    assert_eq!(status.raw["players"][2]["more"], serde_json::json!([1, 4]));
}

#[test]
fn a_cut_last_line_keeps_the_lines_before_it_and_says_so() {
    let t0 = Instant::now();
    let mut s = session(t0);
    let reply = datagram(b"\\sv_hostname\\x\n1 2 \"a\"\n3 4 \"b\"\n5 6 \"cu");
    s.handle_datagram(target(), &reply, t0 + ms(1));
    let status = s.poll_result().unwrap().unwrap();
    assert_eq!(names(&status), ["a", "b"]);
    assert!(!status.complete);
    let why = reasons(&status);
    assert_eq!(why.len(), 1, "{why:?}");
    assert!(why[0].contains("players[2]"), "{why:?}");
}

#[test]
fn one_bad_line_or_an_overflowing_number_costs_that_line_only() {
    let t0 = Instant::now();
    let mut s = session(t0);
    let reply = datagram(
        b"\\sv_hostname\\x\n1 2 \"a\"\n99999999999999999999 4 \"big\"\nnot a player\n\n7 8 \"z\"\n",
    );
    s.handle_datagram(target(), &reply, t0 + ms(1));
    let status = s.poll_result().unwrap().unwrap();
    assert_eq!(names(&status), ["a", "z"]);
    assert!(!status.complete);
    let why = reasons(&status);
    assert_eq!(why.len(), 2, "{why:?}");
    assert!(why[0].contains("players[1].score"), "{why:?}");
    assert!(why[1].contains("players[2]"), "{why:?}");
}

#[test]
fn replies_are_held_by_bytes_not_by_datagram_count() {
    // Sixty continuations, far more than the sixteen datagrams once held: all kept.
    let t0 = Instant::now();
    let mut s = session(t0);
    s.handle_datagram(target(), &long_first(0..5), t0 + ms(1));
    for i in 0..60 {
        let lines = 5 + i * 10..15 + i * 10;
        s.handle_datagram(target(), &continuation(lines), t0 + ms(2));
    }
    let status = run_out(&mut s);
    assert!(status.complete, "{}", status.raw);
    assert_eq!(names(&status), expected_names(0..605));

    // Under a byte cap, what does not fit is dropped and named.
    let options = Options {
        max_reply_bytes: 4000,
        ..options()
    };
    let mut s = Quake3Session::new(target(), &options);
    let _ = s.poll_transmit(t0);
    s.handle_datagram(target(), &long_first(0..5), t0 + ms(1));
    for i in 0..60 {
        let lines = 5 + i * 10..15 + i * 10;
        s.handle_datagram(target(), &continuation(lines), t0 + ms(2));
    }
    let status = run_out(&mut s);
    assert!(!status.complete);
    assert!(status.players.len() < 605 && status.players.len() >= 5);
    let why = reasons(&status);
    assert!(why[0].contains("--max-reply-bytes"), "{why:?}");
}

// ---------------------------------------------------------------------------------------------
// Over loopback

fn state(players: usize) -> ServerState {
    ServerState {
        name: "^1Loop^7back — Zoë".to_owned(),
        map: "q3dm17".to_owned(),
        game_type: "ctf".to_owned(),
        version: "ioq3 1.36".to_owned(),
        max_players: 200,
        password: true,
        players: (0..players)
            .map(|i| PlayerState {
                name: format!("^{}Pläyer {i}", i % 10),
                score: i as i64 - 5,
                ping: (i % 300) as u32,
                ..PlayerState::default()
            })
            .collect(),
        rules: [
            ("fraglimit".to_owned(), RuleValue::Integer(20)),
            ("weather".to_owned(), RuleValue::Text("Café fog".to_owned())),
        ]
        .into_iter()
        .collect(),
        ..ServerState::default()
    }
}

async fn serve(state: ServerState) -> (SocketAddr, CancellationToken, tokio::task::JoinHandle<()>) {
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = socket.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let token = shutdown.clone();
    let task = tokio::spawn(async move {
        let responder = Quake3Responder::new(SharedState::new(state), Quake3Config::default());
        let mut service = Service::new(responder).rate_limit(None);
        driver::serve(&socket, &mut service, &token).await.unwrap();
    });
    (addr, shutdown, task)
}

/// Every player served comes back, colour codes removed, from a reply of several datagrams.
/// The order of players across datagrams is the order they arrived in: Quake 3 numbers no
/// datagram, so a reordered continuation moves its lines; `in_order` says none was.
fn check_status(status: &query_net::ServerStatus, served: &ServerState, in_order: bool) {
    assert_eq!(status.name, "Loopback — Zoë");
    assert_eq!(status.map.as_deref(), Some("q3dm17"));
    assert_eq!(status.game_type.as_deref(), Some("ctf"));
    assert_eq!(status.max_players, 200);
    assert_eq!(status.password, Some(true));
    assert_eq!(status.rules["weather"], "Café fog");
    assert_eq!(status.rules["fraglimit"], "20");
    let mut got: Vec<(String, Option<i64>, Option<u32>)> = status
        .players
        .iter()
        .map(|p| (p.name.clone(), p.score, p.ping))
        .collect();
    let want: Vec<(String, Option<i64>, Option<u32>)> = served
        .players
        .iter()
        .map(|p| {
            (
                format!("Pläyer {}", p.score + 5),
                Some(p.score),
                Some(p.ping),
            )
        })
        .collect();
    if !in_order {
        got.sort_by_key(|(_, score, _)| *score);
    }
    assert_eq!(got, want);
}

#[tokio::test]
async fn a_reply_of_several_datagrams_comes_back_whole() {
    let served = state(150);
    let (addr, shutdown, task) = serve(served.clone()).await;
    let status = driver::query(Protocol::Quake3, &addr.to_string(), &options())
        .await
        .unwrap();
    assert!(
        status.raw["datagrams"].as_u64().unwrap() >= 2,
        "{}",
        status.raw
    );
    check_status(&status, &served, true);
    shutdown.cancel();
    task.await.unwrap();
}

/// gsq's own client reads gsq's own responder whole: a thousand players over some twenty
/// datagrams, all of them back and `complete: true`.
#[tokio::test]
async fn a_thousand_players_come_back_whole() {
    let served = state(1000);
    let (addr, shutdown, task) = serve(served.clone()).await;
    let status = driver::query(Protocol::Quake3, &addr.to_string(), &options())
        .await
        .unwrap();
    assert!(status.complete, "{}", status.raw["incomplete"]);
    assert!(status.raw["datagrams"].as_u64().unwrap() > 16);
    check_status(&status, &served, true);
    shutdown.cancel();
    task.await.unwrap();
}

/// A hostile server on loopback: a long first datagram whose last line is cut and which
/// holds an overflowing score, then never the rest. The query keeps the lines it could read
/// and says what it left out, by its deadline.
#[tokio::test]
async fn a_hostile_server_gets_an_honest_incomplete_status() {
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = socket.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let mut buf = [0u8; 64];
        let (_, from) = socket.recv_from(&mut buf).await.unwrap();
        let mut reply = long_first(0..3);
        reply.extend(b"99999999999999999999 1 \"overflow\"\n4 5 \"cut");
        socket.send_to(&reply, from).await.unwrap();
    });
    let options = Options {
        deadline: Duration::from_millis(400),
        ..options()
    };
    let started = Instant::now();
    let status = driver::query(Protocol::Quake3, &addr.to_string(), &options)
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(names(&status), expected_names(0..3));
    assert!(!status.complete);
    assert_eq!(reasons(&status).len(), 2, "{}", status.raw);
    server.await.unwrap();
}

#[tokio::test]
async fn through_a_lossy_reordering_link_the_answer_is_whole_or_a_timeout() {
    let served = state(150);
    let (addr, shutdown, task) = serve(served.clone()).await;
    let proxy = LossyProxy::start(
        addr,
        Impairments {
            drop: 0.2,
            duplicate: 0.2,
            reorder: 0.3,
            ..Impairments::default()
        },
        7,
    )
    .await
    .unwrap();
    let options = Options {
        timeout: Duration::from_millis(300),
        retries: 4,
        ..Options::default()
    };
    let mut whole = 0;
    for _ in 0..10 {
        match driver::query(Protocol::Quake3, &proxy.addr().to_string(), &options).await {
            Ok(status) if status.players.len() == served.players.len() => {
                check_status(&status, &served, false);
                whole += 1;
            }
            // A lost continuation leaves fewer lines: never other lines than those served.
            Ok(status) => {
                assert_eq!(status.name, "Loopback — Zoë");
                assert!(status.players.len() < served.players.len());
                for p in &status.players {
                    assert_eq!(p.name, format!("Pläyer {}", p.score.unwrap() + 5));
                }
            }
            Err(QueryError::Timeout { .. }) => {}
            Err(e) => panic!("{e}"),
        }
    }
    assert!(whole > 0, "no whole answer in 10 queries");
    shutdown.cancel();
    task.await.unwrap();
}

// ---------------------------------------------------------------------------------------------
// The responder alone

fn answers(state: ServerState, request: &[u8]) -> Vec<Vec<u8>> {
    let responder = Quake3Responder::new(SharedState::new(state), Quake3Config::default());
    let mut service = Service::new(responder).rate_limit(None);
    let from: SocketAddr = "192.0.2.1:5000".parse().unwrap();
    service.handle(from, request).map(<[u8]>::to_vec).collect()
}

#[test]
fn the_responder_echoes_a_challenge_and_answers_getinfo_with_the_count() {
    let served = state(3);
    let status = answers(served.clone(), b"\xff\xff\xff\xffgetstatus 99\n");
    assert_eq!(status.len(), 1);
    assert!(
        status[0].starts_with(b"\xff\xff\xff\xffstatusResponse\n\\challenge\\99\\sv_hostname\\"),
        "{:?}",
        String::from_utf8_lossy(&status[0])
    );
    let info = answers(served, b"\xff\xff\xff\xffgetinfo abc\0");
    assert_eq!(info.len(), 1);
    let text = query_wire::TextEncoding::Windows1252.decode_lossy(&info[0]);
    assert!(
        text.starts_with("\u{ff}\u{ff}\u{ff}\u{ff}infoResponse\n\\challenge\\abc\\"),
        "{text}"
    );
    assert!(text.contains("\\clients\\3"), "{text}");
    assert!(
        !text.contains("Pläyer"),
        "no player lines in getinfo: {text}"
    );
}

#[test]
fn the_responder_drops_what_is_not_a_request() {
    for request in [
        &b"\xff\xff\xff\xffgetstatusX\n"[..],
        b"\xff\xff\xff\xffgetstatus\nsecond line",
        b"\xff\xff\xff\xffgetstatus a\\b\n",
        b"\xff\xff\xff\xffgetchallenge\n",
        b"getstatus\n",
        b"",
    ] {
        assert!(answers(state(3), request).is_empty(), "{request:?}");
    }
}

#[test]
fn every_datagram_of_a_large_reply_fits_the_cap_and_the_lines_stop_at_64_kib() {
    let datagrams = answers(state(5000), b"\xff\xff\xff\xffgetstatus\n");
    assert!(datagrams.len() > 5);
    assert!(datagrams
        .iter()
        .all(|d| d.len() <= 1400 && d.starts_with(HEADER)));
    let lines: usize = datagrams
        .iter()
        .map(|d| d[HEADER.len()..].iter().filter(|&&b| b == b'\n').count())
        .sum();
    // The pair line, then players up to 64 KiB of lines (about 20 bytes each here).
    assert!(lines > 2000 && lines < 5000, "{lines} lines");
}
