//! GameSpy 3/4 client session (sans-I/O, on a virtual clock) and the client against the
//! responder over loopback UDP.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use query_net::driver;
use query_net::engine::ClientSession;
use query_net::engines;
use query_net::engines::gamespy3::{GameSpy3Config, GameSpy3Responder, GameSpy3Session};
use query_net::learned::{Learned, ServerMemory};
use query_net::service::Service;
use query_net::state::{PlayerState, ServerState, SharedState, TeamState};
use query_net::{Options, Protocol, ServerStatus};
use query_specs::gamespy3::{
    split_reply, ChallengeReply, JoinedColumn, KeyValue, ReplyContent, Request, Table, FLAGS_SPLIT,
    SECTION_PLAYERS,
};
use query_wire::{Decode, Encode, Text};
use tokio::net::UdpSocket;
use tokio_util::sync::CancellationToken;

const ID: u32 = 0x0102_0304;

fn target() -> SocketAddr {
    "127.0.0.1:29900".parse().unwrap()
}

fn options() -> Options {
    Options {
        timeout: Duration::from_millis(500),
        retries: 1,
        ..Options::default()
    }
}

/// A reply with `n` players, cut into 200-byte parts carrying session id `id`.
fn parts(id: u32, n: usize) -> Vec<Vec<u8>> {
    let names: Vec<String> = (0..n).map(|i| format!("player number {i}")).collect();
    let content = ReplyContent {
        details: vec![
            KeyValue::new("hostname", "Karkand"),
            KeyValue::new("mapname", "Strike"),
            KeyValue::new("maxplayers", "64"),
        ],
        tables: vec![Table {
            kind: SECTION_PLAYERS,
            columns: vec![JoinedColumn {
                name: Text::from_bytes(b"player_"),
                values: names
                    .iter()
                    .map(|s| Text::from_bytes(s.as_bytes()))
                    .collect(),
            }],
        }],
    };
    split_reply(&content, id, 200)
        .unwrap()
        .iter()
        .map(|p| p.to_vec().unwrap())
        .collect()
}

/// Sends what is due, returns it.
fn sent(session: &mut GameSpy3Session, now: Instant) -> Option<Vec<u8>> {
    session.poll_transmit(now).map(<[u8]>::to_vec)
}

fn run_out(session: &mut GameSpy3Session, mut now: Instant) -> ServerStatus {
    for _ in 0..100 {
        if let Some(result) = session.poll_result() {
            return result.unwrap();
        }
        let _ = session.poll_transmit(now);
        if let Some(wake) = session.poll_timeout() {
            now = wake;
            session.handle_timeout(now);
        }
    }
    panic!("the session did not end");
}

fn names(status: &ServerStatus) -> Vec<String> {
    status.players.iter().map(|p| p.name.clone()).collect()
}

#[test]
fn parts_in_any_order_with_duplicates_and_forgeries_join() {
    let t0 = Instant::now();
    let mut s =
        GameSpy3Session::with_session_id(target(), &options(), Protocol::GameSpy3, ID, false);
    let first = sent(&mut s, t0).unwrap();
    assert_eq!(
        Request::from_bytes(&first).unwrap(),
        Request::Query(query_specs::gamespy3::QueryRequest::new(
            ID,
            None,
            query_specs::gamespy3::FLAGS_SPLIT
        ))
    );
    let mut reply = parts(ID, 40);
    assert!(reply.len() >= 3, "{} parts", reply.len());
    // A forged reply from the right address with another session id, and garbage.
    for forged in parts(ID + 1, 1) {
        s.on_reply(&forged, t0);
    }
    s.on_reply(b"\xffgarbage", t0);
    reply.reverse();
    let dup = reply[0].clone();
    for part in &reply {
        s.on_reply(part, t0 + Duration::from_millis(5));
        s.on_reply(&dup, t0 + Duration::from_millis(5));
    }
    let status = s.poll_result().unwrap().unwrap();
    assert!(status.complete);
    assert_eq!(status.name, "Karkand");
    assert_eq!(status.map.as_deref(), Some("Strike"));
    assert_eq!(status.max_players, 64);
    let expected: Vec<String> = (0..40).map(|i| format!("player number {i}")).collect();
    assert_eq!(names(&status), expected);
}

#[test]
fn a_part_that_never_comes_leaves_the_status_incomplete() {
    let t0 = Instant::now();
    let mut s =
        GameSpy3Session::with_session_id(target(), &options(), Protocol::GameSpy3, ID, false);
    sent(&mut s, t0).unwrap();
    let reply = parts(ID, 40);
    for part in reply.iter().skip(1) {
        s.on_reply(part, t0);
    }
    let status = run_out(&mut s, t0);
    assert!(!status.complete);
    assert_eq!(status.raw["missing_parts"], serde_json::json!([0]));
    // The later parts' rows continue rows that never came: they are left out and named,
    // never padded with empty rows.
    assert!(status.players.is_empty());
    let gaps = status.raw["column_gaps"].as_array().unwrap();
    assert!(!gaps.is_empty());
    assert!(gaps[0].as_str().unwrap().contains("player_"), "{gaps:?}");
}

#[test]
fn lost_query_is_resent_then_a_challenge_is_asked_for() {
    let t0 = Instant::now();
    let mut s =
        GameSpy3Session::with_session_id(target(), &options(), Protocol::GameSpy3, ID, false);
    sent(&mut s, t0).unwrap();
    let wake = s.poll_timeout().unwrap();
    s.handle_timeout(wake);
    // No answer to the query alone: the server may want a challenge.
    let challenge_request = sent(&mut s, wake).unwrap();
    assert_eq!(challenge_request, b"\xfe\xfd\x09\x01\x02\x03\x04");
    let reply = ChallengeReply {
        session_id: ID,
        digits: "9513307",
    }
    .to_vec()
    .unwrap();
    // A challenge with another session id is ignored.
    let other = ChallengeReply {
        session_id: 7,
        digits: "1",
    }
    .to_vec()
    .unwrap();
    s.on_reply(&other, wake);
    assert!(sent(&mut s, wake).is_none());
    s.on_reply(&reply, wake);
    let query = sent(&mut s, wake).unwrap();
    let Request::Query(q) = Request::from_bytes(&query).unwrap() else {
        panic!()
    };
    assert_eq!(q.challenge(), Some(9_513_307));
    for part in parts(ID, 3) {
        s.on_reply(&part, wake);
    }
    assert!(s.poll_result().unwrap().unwrap().complete);
}

/// Real servers send any 32-bit challenge, signed (Minecraft) or unsigned; the query echoes
/// its 32 bits big-endian.
#[test]
fn any_32_bit_challenge_is_echoed_as_its_bits() {
    for (digits, bits) in [
        ("-2147483648", 0x8000_0000_u32),
        ("-4026", 0xFFFF_F046),
        ("4294967295", 0xFFFF_FFFF),
        ("2147483647", 0x7FFF_FFFF),
        ("123456", 123_456),
    ] {
        let t0 = Instant::now();
        let mut s =
            GameSpy3Session::with_session_id(target(), &options(), Protocol::GameSpy3, ID, true);
        assert_eq!(sent(&mut s, t0).unwrap(), b"\xfe\xfd\x09\x01\x02\x03\x04");
        let reply = ChallengeReply {
            session_id: ID,
            digits,
        }
        .to_vec()
        .unwrap();
        s.on_reply(&reply, t0);
        let query = sent(&mut s, t0).unwrap();
        assert_eq!(query[7..11], bits.to_be_bytes(), "{digits}");
        assert_eq!(query[11..], FLAGS_SPLIT, "{digits}");
    }
}

#[test]
fn minecraft_asks_for_the_challenge_first_and_accepts_the_masked_echo() {
    let t0 = Instant::now();
    let id = 0x1234_5678;
    let mut s =
        GameSpy3Session::with_session_id(target(), &options(), Protocol::MinecraftQuery, id, true);
    assert_eq!(sent(&mut s, t0).unwrap()[..3], *b"\xfe\xfd\x09");
    let masked = id & query_specs::gamespy3::MINECRAFT_SESSION_MASK;
    let reply = ChallengeReply {
        session_id: masked,
        digits: "-4026",
    }
    .to_vec()
    .unwrap();
    s.on_reply(&reply, t0);
    let query = sent(&mut s, t0).unwrap();
    assert_eq!(query.len(), 15);
    for part in parts(masked, 2) {
        s.on_reply(&part, t0);
    }
    let status = s.poll_result().unwrap().unwrap();
    assert_eq!(status.protocol, Protocol::MinecraftQuery);
    assert_eq!(names(&status), ["player number 0", "player number 1"]);
}

#[test]
fn nothing_at_all_is_a_timeout() {
    let t0 = Instant::now();
    let mut s =
        GameSpy3Session::with_session_id(target(), &options(), Protocol::GameSpy3, ID, false);
    let mut now = t0;
    let result = loop {
        let _ = s.poll_transmit(now);
        if let Some(result) = s.poll_result() {
            break result;
        }
        now = s.poll_timeout().unwrap();
        s.handle_timeout(now);
    };
    assert!(result.is_err());
}

fn served_state(n: usize) -> ServerState {
    ServerState {
        name: "Café Karkand".into(),
        map: "Strike at Karkand".into(),
        game_type: "gpm_cq".into(),
        version: "1.5".into(),
        max_players: 64,
        port: 16567,
        players: (0..n)
            .map(|i| PlayerState {
                name: format!("Jürgen {i}"),
                score: i as i64 - 3,
                ping: 20 + i as u32,
                team: Some(if i % 2 == 0 { "MEC" } else { "USMC" }.into()),
                ..PlayerState::default()
            })
            .collect(),
        teams: vec![
            TeamState {
                name: "MEC".into(),
                score: 120,
            },
            TeamState {
                name: "USMC".into(),
                score: 80,
            },
        ],
        ..ServerState::default()
    }
}

async fn loopback(protocol: Protocol, n: usize) -> ServerStatus {
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = socket.local_addr().unwrap();
    let token = CancellationToken::new();
    let stop = token.clone();
    let state = served_state(n);
    let task = tokio::spawn(async move {
        // Each protocol's default encoding on both sides.
        let encoding = match protocol {
            Protocol::MinecraftQuery => query_net::engines::gamespy3::MINECRAFT_ENCODING,
            _ => query_net::engines::gamespy3::DEFAULT_ENCODING,
        };
        let config = GameSpy3Config {
            encoding,
            ..GameSpy3Config::default()
        };
        let responder = GameSpy3Responder::new(SharedState::new(state), config);
        let mut service = Service::new(responder).rate_limit(None);
        driver::serve(&socket, &mut service, &token).await
    });
    let status = driver::query(protocol, &addr.to_string(), &options())
        .await
        .unwrap();
    stop.cancel();
    task.await.unwrap().unwrap();
    status
}

#[tokio::test]
async fn loopback_every_field_comes_back_through_the_challenge() {
    for protocol in [Protocol::GameSpy3, Protocol::MinecraftQuery] {
        let n = 150;
        let status = loopback(protocol, n).await;
        let state = served_state(n);
        assert!(status.complete, "{protocol}");
        assert_eq!(status.protocol, protocol);
        assert_eq!(status.name, state.name);
        assert_eq!(status.map.as_deref(), Some(state.map.as_str()));
        assert_eq!(status.game_type.as_deref(), Some("gpm_cq"));
        assert_eq!(status.version.as_deref(), Some("1.5"));
        assert_eq!(status.max_players, 64);
        assert_eq!(status.num_players, n as u32);
        assert_eq!(status.password, Some(false));
        assert_eq!(status.players.len(), n);
        for (got, want) in status.players.iter().zip(&state.players) {
            assert_eq!(got.name, want.name);
            assert_eq!(got.score, Some(want.score));
            assert_eq!(got.ping, Some(want.ping));
            assert_eq!(got.team, want.team);
        }
        let teams: Vec<(String, Option<i64>)> = status
            .teams
            .iter()
            .map(|t| (t.name.clone(), t.score))
            .collect();
        assert_eq!(
            teams,
            [("MEC".to_owned(), Some(120)), ("USMC".to_owned(), Some(80))]
        );
        assert_eq!(status.rules["hostport"], "16567");
    }
}

/// A challenge reply to `session`'s query.
fn challenge_for(session: &GameSpy3Session) -> Vec<u8> {
    ChallengeReply {
        session_id: session.session_id(),
        digits: "42",
    }
    .to_vec()
    .unwrap()
}

#[test]
fn a_target_that_needed_a_challenge_is_asked_for_it_first_by_the_next_session_that_learns_of_it() {
    let t0 = Instant::now();
    let memory = ServerMemory::new();
    let remembered: SocketAddr = "127.0.0.1:29911".parse().unwrap();
    let mut first = GameSpy3Session::learning(remembered, &options(), memory.of(remembered));
    let query = sent(&mut first, t0).unwrap();
    assert_eq!(query.len(), 11, "the query alone first");
    first.on_reply(&challenge_for(&first), t0);
    assert_eq!(sent(&mut first, t0).unwrap().len(), 15);
    // The next query of the same target with the same memory starts with the challenge request.
    let mut second = GameSpy3Session::learning(remembered, &options(), memory.of(remembered));
    assert_eq!(sent(&mut second, t0).unwrap()[..3], *b"\xfe\xfd\x09");
    // Another target does not.
    let other: SocketAddr = "127.0.0.1:29912".parse().unwrap();
    let mut third = GameSpy3Session::learning(other, &options(), memory.of(other));
    assert_eq!(sent(&mut third, t0).unwrap().len(), 11);
}

#[test]
fn two_sessions_of_one_target_in_one_process_do_not_influence_each_other() {
    let t0 = Instant::now();
    let server: SocketAddr = "127.0.0.1:29913".parse().unwrap();
    // Two callers of the same target, each with what it learned; they run side by side.
    let (mine, theirs) = (Learned::new(), Learned::new());
    let mut a = GameSpy3Session::learning(server, &options(), mine.clone());
    let mut b = GameSpy3Session::learning(server, &options(), theirs.clone());
    assert_eq!(sent(&mut a, t0).unwrap().len(), 11);
    assert_eq!(sent(&mut b, t0).unwrap().len(), 11);
    a.on_reply(&challenge_for(&a), t0);
    assert!(mine.wants_challenge());
    assert!(!theirs.wants_challenge(), "b learned nothing from a");
    // b's answer comes without a challenge, and b's next query goes out the same way.
    for part in parts(b.session_id(), 1) {
        b.on_reply(&part, t0);
    }
    assert!(b.poll_result().unwrap().is_ok());
    let mut b_again = GameSpy3Session::learning(server, &options(), theirs);
    assert_eq!(sent(&mut b_again, t0).unwrap().len(), 11);
    // A's next query asks for the challenge first; a one-off query and the generic
    // constructor know nothing of either.
    let mut a_again = GameSpy3Session::learning(server, &options(), mine);
    assert_eq!(sent(&mut a_again, t0).unwrap()[..3], *b"\xfe\xfd\x09");
    let mut fresh = GameSpy3Session::new(server, &options());
    assert_eq!(sent(&mut fresh, t0).unwrap().len(), 11);
    let mut generic = engines::new_session(Protocol::GameSpy3, server, &options()).unwrap();
    assert_eq!(generic.poll_transmit(t0).unwrap().len(), 11);
    // Through the generic constructor with the memory, the memory is used.
    let memory = ServerMemory::new();
    memory.of(server).note_wants_challenge();
    let mut remembering =
        engines::new_session_learning(Protocol::GameSpy3, server, &options(), &memory.of(server))
            .unwrap();
    assert_eq!(
        remembering.poll_transmit(t0).unwrap()[..3],
        *b"\xfe\xfd\x09"
    );
}
