//! The Teeworlds / DDNet client against the responder, sans I/O: DDNet's extended reply over
//! several datagrams in any order, a lost datagram, a forged token, a 0.6 server's `inf3`;
//! and the Mumble ping's echo.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use query_net::clock::Now;
use query_net::engine::{ClientSession, ReplySink, Responder};
use query_net::engines::mumble::{MumbleConfig, MumbleResponder, MumbleSession};
use query_net::engines::teeworlds::{TeeworldsConfig, TeeworldsResponder, TeeworldsSession};
use query_net::state::{PlayerState, ServerState, SharedState};
use query_net::{Options, ServerStatus};
use query_specs::teeworlds::{Reply, Request};
use query_wire::{Decode, Encode};

fn state(players: usize) -> SharedState {
    SharedState::new(ServerState {
        name: "Big Tee Server".into(),
        map: "ctf5".into(),
        game_type: "CTF".into(),
        max_players: 128,
        players: (0..players)
            .map(|i| PlayerState {
                name: format!("tee number {i}"),
                score: i as i64 * 3,
                ..PlayerState::default()
            })
            .collect(),
        ..ServerState::default()
    })
}

fn server() -> SocketAddr {
    "127.0.0.1:8303".parse().unwrap()
}

fn options() -> Options {
    Options {
        timeout: Duration::from_millis(500),
        retries: 0,
        ..Options::default()
    }
}

/// The responder's replies to `request`.
fn answer(responder: &mut impl Responder, request: &[u8]) -> Vec<Vec<u8>> {
    let mut sink = ReplySink::new(1400);
    let from: SocketAddr = "127.0.0.1:50000".parse().unwrap();
    responder.handle(from, request, Now::system(), &mut sink);
    sink.datagrams().map(<[u8]>::to_vec).collect()
}

/// Runs `session` to its end, delivering `deliver(replies)` at `t0` and then waking it when
/// it asks.
fn run<S: ClientSession<Output = ServerStatus>>(
    session: &mut S,
    t0: Instant,
    deliver: impl FnOnce(Vec<u8>) -> Vec<Vec<u8>>,
) -> Result<ServerStatus, query_net::QueryError> {
    let request = session.poll_transmit(t0).expect("a request").to_vec();
    for datagram in deliver(request) {
        session.handle_datagram(server(), &datagram, t0 + Duration::from_millis(2));
    }
    let mut now = t0;
    loop {
        if let Some(result) = session.poll_result() {
            return result;
        }
        now = session.poll_timeout().expect("a wake-up").max(now);
        session.handle_timeout(now);
    }
}

#[test]
fn an_extended_reply_of_several_datagrams_is_joined_in_any_order() {
    let mut responder = TeeworldsResponder::new(state(128), TeeworldsConfig::default());
    let mut session = TeeworldsSession::new(server(), &options()).unwrap();
    let mut datagrams = Vec::new();
    let status = run(&mut session, Instant::now(), |request| {
        datagrams = answer(&mut responder, &request);
        let mut shuffled = datagrams.clone();
        shuffled.reverse();
        shuffled
    })
    .unwrap();
    assert!(datagrams.len() >= 3, "{} datagrams", datagrams.len());
    assert!(datagrams.iter().all(|d| d.len() <= 1400));
    assert!(matches!(
        Reply::from_bytes(&datagrams[0]).unwrap(),
        Reply::Extended(_)
    ));
    assert!(status.complete, "{}", status.raw);
    assert_eq!(status.players.len(), 128);
    assert_eq!(status.players[127].name, "tee number 127");
    assert_eq!(status.players[127].score, Some(381));
    assert_eq!((status.num_players, status.max_players), (128, 128));
    assert_eq!(status.name, "Big Tee Server");
    assert_eq!(status.raw["datagrams"], datagrams.len());
}

#[test]
fn a_lost_datagram_leaves_the_status_incomplete_and_says_so() {
    let mut responder = TeeworldsResponder::new(state(128), TeeworldsConfig::default());
    let mut session = TeeworldsSession::new(server(), &options()).unwrap();
    let t0 = Instant::now();
    let status = run(&mut session, t0, |request| {
        let mut datagrams = answer(&mut responder, &request);
        datagrams.remove(1);
        datagrams
    })
    .unwrap();
    assert!(!status.complete);
    assert!(status.players.len() < 128);
    assert_eq!(
        status.raw["players_missing"],
        128 - status.players.len(),
        "{}",
        status.raw
    );
    assert!(status.raw["incomplete"][0]
        .as_str()
        .unwrap()
        .contains("[1]"));
}

#[test]
fn a_reply_with_another_token_is_ignored() {
    let mut responder = TeeworldsResponder::new(state(3), TeeworldsConfig::default());
    let mut session = TeeworldsSession::new(server(), &options()).unwrap();
    let error = run(&mut session, Instant::now(), |request| {
        let Request::Extended {
            extra_token, token, ..
        } = Request::from_bytes(&request).unwrap()
        else {
            panic!("the client asks for the extended info");
        };
        let forged = Request::extended(((u32::from(extra_token) << 8) | u32::from(token)) ^ 1);
        answer(&mut responder, &forged.to_vec().unwrap())
    })
    .unwrap_err();
    assert!(error.to_string().contains("server info request"), "{error}");
}

#[test]
fn a_vanilla_server_answers_with_inf3_and_its_first_sixteen() {
    let mut responder = TeeworldsResponder::new(state(20), TeeworldsConfig::default());
    let mut session = TeeworldsSession::new(server(), &options()).unwrap();
    let status = run(&mut session, Instant::now(), |request| {
        // A 0.6 server reads only the token's low byte.
        let token = Request::from_bytes(&request).unwrap().token();
        let vanilla = Request::vanilla((token & 0xff) as u8).to_vec().unwrap();
        answer(&mut responder, &vanilla)
    })
    .unwrap();
    assert_eq!(status.raw["reply"], "inf3");
    assert_eq!(status.players.len(), 16);
    // Counted as DDNet counts for 0.6 clients: no more than 16.
    assert_eq!(status.rules["num_clients"], "16");
    assert!(status.complete);
}

#[test]
fn a_mumble_pong_echoes_the_ping() {
    let state = SharedState::new(ServerState {
        version: "1.3.4".into(),
        max_players: 50,
        players: vec![PlayerState::default(); 3],
        ..ServerState::default()
    });
    let mut responder = MumbleResponder::new(state, MumbleConfig::default());
    let mut session = MumbleSession::new(server(), &options()).unwrap();
    let status = run(&mut session, Instant::now(), |request| {
        let pong = answer(&mut responder, &request);
        assert_eq!(pong[0].len(), 2 * request.len());
        // A pong for another ping first: ignored.
        let mut other = pong[0].clone();
        other[11] ^= 1;
        vec![other, pong[0].clone()]
    })
    .unwrap();
    assert_eq!(status.version.as_deref(), Some("1.3.4"));
    assert_eq!((status.num_players, status.max_players), (3, 50));
    assert_eq!(status.rules["bandwidth"], "558000");
}
