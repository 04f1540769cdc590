//! The Teeworlds / DDNet client against the responder, sans I/O: DDNet's extended reply over
//! several datagrams in any order, a lost datagram, a forged token, a 0.6 server's `inf3`,
//! 0.7's token exchange (a 0.7 server, forged and foreign tokens both ways, a server that
//! answers both generations); and the Mumble ping's echo.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use query_net::clock::Now;
use query_net::engine::{ClientSession, ReplySink, Responder};
use query_net::engine::{DropReason, Verdict};
use query_net::engines::mumble::{self, MumbleConfig, MumbleResponder};
use query_net::engines::teeworlds::{TeeworldsConfig, TeeworldsResponder, TeeworldsSession};
use query_net::state::{PlayerState, ServerState, SharedState};
use query_net::{Options, ServerStatus};
use query_specs::teeworlds::{seven, Reply, Request};
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
    // The 0.7 token request that goes beside it: a 0.6 server drops it.
    while session.poll_transmit(t0).is_some() {}
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
        while session.poll_transmit(now).is_some() {}
    }
}

/// Runs `session` to its end on a virtual clock, each request it sends answered by `serve`
/// a millisecond later (nothing, for a request the server drops).
fn converse<S: ClientSession<Output = ServerStatus>>(
    session: &mut S,
    mut serve: impl FnMut(&[u8]) -> Vec<Vec<u8>>,
) -> Result<ServerStatus, query_net::QueryError> {
    let mut now = Instant::now();
    loop {
        while let Some(request) = session.poll_transmit(now) {
            let request = request.to_vec();
            for datagram in serve(&request) {
                session.handle_datagram(server(), &datagram, now + Duration::from_millis(1));
            }
        }
        if let Some(result) = session.poll_result() {
            return result;
        }
        now = session.poll_timeout().expect("a wake-up").max(now);
        session.handle_timeout(now);
    }
}

/// Whether `request` is one of 0.7's (its first byte says so).
fn is_seven(request: &[u8]) -> bool {
    seven::Request::from_bytes(request).is_ok()
}

#[test]
fn a_seven_server_answers_after_the_token_exchange() {
    let mut responder = TeeworldsResponder::new(state(5), TeeworldsConfig::default());
    let mut session = TeeworldsSession::new(server(), &options()).unwrap();
    let mut sent = Vec::new();
    let status = converse(&mut session, |request| {
        sent.push(request.to_vec());
        // A 0.7 server drops the 0.6 request.
        if is_seven(request) {
            answer(&mut responder, request)
        } else {
            Vec::new()
        }
    })
    .unwrap();
    assert_eq!(status.raw["reply"], "inf3 0.7");
    assert_eq!(status.name, "Big Tee Server");
    assert_eq!((status.num_players, status.max_players), (5, 128));
    assert_eq!(status.players.len(), 5);
    assert_eq!(status.players[4].name, "tee number 4");
    assert_eq!(status.players[4].score, Some(12));
    assert_eq!(status.players[4].extra["is_player"], "1");
    assert_eq!(status.rules["skill_level"], "1");
    assert!(status.complete);
    // The 0.6 request, the 0.7 token request (520 bytes), the 0.7 info request.
    assert_eq!(sent.len(), 3, "{sent:02x?}");
    assert_eq!(sent[1].len(), seven::TOKEN_REQUEST_LEN);
    assert!(matches!(
        seven::Request::from_bytes(&sent[2]).unwrap(),
        seven::Request::Info(_)
    ));
}

#[test]
fn a_server_that_speaks_both_is_read_through_ddnets_extended_reply() {
    let mut responder = TeeworldsResponder::new(state(40), TeeworldsConfig::default());
    let mut session = TeeworldsSession::new(server(), &options()).unwrap();
    let status = converse(&mut session, |request| answer(&mut responder, request)).unwrap();
    assert_eq!(status.raw["reply"], "iext");
    assert_eq!(status.players.len(), 40);
    assert!(status.complete);
}

#[test]
fn seven_replies_with_another_clients_token_are_ignored() {
    let mut responder = TeeworldsResponder::new(state(2), TeeworldsConfig::default());
    let mut session = TeeworldsSession::new(server(), &options()).unwrap();
    let error = converse(&mut session, |request| {
        if !is_seven(request) {
            return Vec::new();
        }
        // Every reply is for another client: its token has one bit changed.
        answer(&mut responder, request)
            .into_iter()
            .map(|datagram| {
                let mut reply = seven::Reply::from_bytes(&datagram).unwrap();
                match &mut reply {
                    seven::Reply::Token(token) => token.client_token ^= 1,
                    seven::Reply::Info(info) => info.client_token ^= 1,
                }
                reply.to_vec().unwrap()
            })
            .collect()
    })
    .unwrap_err();
    assert!(error.to_string().contains("server info request"), "{error}");
}

#[test]
fn a_seven_server_that_stops_after_the_token_is_named_in_the_timeout() {
    let mut responder = TeeworldsResponder::new(state(2), TeeworldsConfig::default());
    let mut session = TeeworldsSession::new(server(), &options()).unwrap();
    let error = converse(&mut session, |request| {
        match seven::Request::from_bytes(request) {
            Ok(seven::Request::Token(_)) => answer(&mut responder, request),
            _ => Vec::new(),
        }
    })
    .unwrap_err();
    assert!(
        error.to_string().contains("0.7 server info request"),
        "{error}"
    );
}

#[test]
fn the_responder_answers_a_seven_info_request_only_with_the_token_it_gave_that_address() {
    let mut responder = TeeworldsResponder::new(state(3), TeeworldsConfig::default());
    let me: SocketAddr = "127.0.0.1:50000".parse().unwrap();
    let other: SocketAddr = "192.0.2.7:50000".parse().unwrap();
    let token_request = seven::Request::token(0xabcd_ef01).to_vec().unwrap();
    let replies = answer(&mut responder, &token_request);
    assert_eq!(replies.len(), 1);
    // 12 bytes for 520: the exchange amplifies nothing.
    assert_eq!(replies[0].len(), 12);
    let seven::Reply::Token(token) = seven::Reply::from_bytes(&replies[0]).unwrap() else {
        panic!("not a token reply");
    };
    assert_eq!(token.client_token, 0xabcd_ef01);
    assert_eq!(
        token.server_token,
        responder.token(me, std::time::SystemTime::now())
    );

    let ask = |server_token: u32, from: SocketAddr, responder: &mut TeeworldsResponder| {
        let request = seven::Request::info(server_token, 0xabcd_ef01, 77)
            .to_vec()
            .unwrap();
        let mut sink = ReplySink::new(1400);
        let verdict = responder.handle(from, &request, Now::system(), &mut sink);
        (
            verdict,
            sink.datagrams().map(<[u8]>::to_vec).collect::<Vec<_>>(),
        )
    };
    let (verdict, replies) = ask(token.server_token, me, &mut responder);
    assert!(matches!(verdict, Verdict::Answered));
    let seven::Reply::Info(info) = seven::Reply::from_bytes(&replies[0]).unwrap() else {
        panic!("not an info reply");
    };
    assert_eq!((info.client_token, info.token), (0xabcd_ef01, 77));
    assert_eq!(info.clients.len(), 3);
    // The same token from another address, a made-up one, and none: dropped, no reply.
    for (server_token, from) in [
        (token.server_token, other),
        (token.server_token ^ 1, me),
        (seven::TOKEN_NONE, me),
    ] {
        let (verdict, replies) = ask(server_token, from, &mut responder);
        assert!(
            matches!(verdict, Verdict::Dropped(DropReason::BadChallenge)),
            "{verdict:?}"
        );
        assert!(replies.is_empty());
    }
}

#[test]
fn a_seven_reply_lists_the_players_that_fit_in_one_datagram_and_counts_all() {
    let mut responder = TeeworldsResponder::new(state(100), TeeworldsConfig::default());
    let mut session = TeeworldsSession::new(server(), &options()).unwrap();
    let status = converse(&mut session, |request| {
        if is_seven(request) {
            let replies = answer(&mut responder, request);
            assert!(replies.iter().all(|d| d.len() <= 1400));
            replies
        } else {
            Vec::new()
        }
    })
    .unwrap();
    assert_eq!(status.raw["reply"], "inf3 0.7");
    assert_eq!(status.num_players, 100);
    assert!(status.players.len() < 100 && status.players.len() > 30);
    assert!(!status.complete, "{}", status.raw);
    assert_eq!(status.raw["players_missing"], 100 - status.players.len());
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
    let mut session = mumble::session(server(), &options()).unwrap();
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

/// Debian's teeworlds-server 0.7.5 answering a token request and an info request: one client
/// connecting, 10 player slots, 12 client slots.
const REAL_TOKEN_REPLY: &[u8] = b"\x04\x00\x00\x11\x22\x33\x44\x05\x5c\xc5\x8b\x9d";
const REAL_INFO_REPLY: &[u8] = b"\x21\x11\x22\x33\x44\x5c\xc5\x8b\x9d\xff\xff\xff\xffinf3\x07\
    0.7.5\x00gsq test seven\x00\x00ctf2\x00DM\x00\x00\x01\x00\x0a\x01\x0c(connecting)\x00\x00\x40\x00\x01";

#[test]
fn a_real_seven_exchange_replays_to_its_status() {
    use query_net::{replay, Protocol};
    for replies in [
        vec![REAL_TOKEN_REPLY.to_vec(), REAL_INFO_REPLY.to_vec()],
        // The info reply alone: its header holds the server's token.
        vec![REAL_INFO_REPLY.to_vec()],
    ] {
        let status =
            replay::status_from_replies(Protocol::Teeworlds, server(), &replies, &options())
                .unwrap();
        assert_eq!(status.raw["reply"], "inf3 0.7");
        assert_eq!(status.name, "gsq test seven");
        assert_eq!(status.map.as_deref(), Some("ctf2"));
        assert_eq!(status.game_type.as_deref(), Some("DM"));
        assert_eq!(status.version.as_deref(), Some("0.7.5"));
        assert_eq!((status.num_players, status.max_players), (0, 10));
        assert_eq!(status.rules["num_clients"], "1");
        assert_eq!(status.rules["max_clients"], "12");
        assert_eq!(status.players.len(), 1);
        assert_eq!(status.players[0].name, "(connecting)");
        assert_eq!(status.players[0].extra["country"], "-1");
        assert_eq!(status.players[0].extra["is_player"], "0");
        assert_eq!(status.password, Some(false));
        assert!(status.complete);
    }
}
