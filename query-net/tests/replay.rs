//! `replay::status_from_replies` against the real sessions: the replies a responder sent,
//! given back in another order, make the same status the live query made; missing ones make
//! what the client makes of a lossy network.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use query_net::clock::Now;
use query_net::engine::{ClientSession, ReplySink, Responder};
use query_net::engines;
use query_net::engines::all::{self, AllProtocols};
use query_net::state::{PlayerState, ServerState, SharedState};
use query_net::{replay, Options, Protocol, QueryError, ServerStatus};
use query_specs::sqp::ChunkSet;

fn target() -> SocketAddr {
    "127.0.0.1:7779".parse().unwrap()
}

fn client() -> SocketAddr {
    "127.0.0.1:50000".parse().unwrap()
}

fn options() -> Options {
    Options {
        timeout: Duration::from_millis(300),
        retries: 1,
        sqp_chunks: ChunkSet::all(),
        ..Options::default()
    }
}

fn state(players: usize) -> ServerState {
    ServerState {
        name: "Replayed".into(),
        map: "dust".into(),
        max_players: 300,
        players: (0..players)
            .map(|i| PlayerState {
                name: format!("player number {i:03} with a long name"),
                score: i as i64,
                ..PlayerState::default()
            })
            .collect(),
        ..ServerState::default()
    }
}

/// Queries `protocol` live against an in-memory responder; returns the status and every
/// datagram the responder sent.
fn live(protocol: Protocol, state: ServerState) -> (ServerStatus, Vec<Vec<u8>>) {
    let mut responder = AllProtocols::new(SharedState::new(state));
    let mut session = engines::new_session(protocol, target(), &options()).unwrap();
    let mut sink = ReplySink::new(65_507);
    let mut sent = Vec::new();
    let now = Now::system();
    let mut instant = Instant::now();
    for _ in 0..100 {
        while let Some(request) = session.poll_transmit(instant) {
            let request = request.to_vec();
            sink.clear();
            responder.handle(client(), &request, now, &mut sink);
            let replies: Vec<Vec<u8>> = sink.datagrams().map(<[u8]>::to_vec).collect();
            for reply in replies {
                session.handle_datagram(target(), &reply, instant);
                sent.push(reply);
            }
        }
        if let Some(result) = session.poll_result() {
            return (result.unwrap(), sent);
        }
        instant = session.poll_timeout().unwrap();
        session.handle_timeout(instant);
    }
    panic!("the live session did not finish");
}

fn without_ping(mut status: ServerStatus) -> ServerStatus {
    status.ping_ms = 0.0;
    status
}

/// The status with its players in id order where the protocol numbers no part of a list:
/// Unreal 2's client keeps the players in the order their datagrams arrived (nothing else
/// orders them), so the same datagrams given in another order list the same players in
/// another order.
fn in_id_order(mut status: ServerStatus) -> ServerStatus {
    if status.protocol == Protocol::Unreal2 {
        status.players.sort_by_key(|player| player.id);
        if let Some(serde_json::Value::Array(names)) = status.raw.get_mut("players") {
            names.sort_by_key(|name| name.as_str().map(str::to_owned));
        }
    }
    status
}

#[test]
fn replies_in_reverse_order_make_the_live_status_for_every_routed_protocol() {
    for protocol in all::ROUTED {
        let (status, mut replies) = live(protocol, state(60));
        if protocol == Protocol::GameSpy2 {
            // One datagram, never split: 60 long names do not fit, the list is cut.
            assert!(!status.complete && status.players.len() < 60, "{protocol}");
        } else {
            assert!(status.complete, "{protocol}");
        }
        replies.reverse();
        let replayed = replay::status_from_replies(protocol, target(), &replies, &options())
            .unwrap_or_else(|e| panic!("{protocol}: {e}"));
        assert_eq!(
            in_id_order(without_ping(replayed)),
            in_id_order(without_ping(status)),
            "{protocol}"
        );
    }
}

#[test]
fn onequery_player_pages_answer_the_request_for_their_offset() {
    let (status, mut replies) = live(Protocol::OneQuery, state(250));
    assert_eq!(status.players.len(), 250);
    assert!(replies.len() > 3, "several pages: {}", replies.len());
    replies.rotate_left(2);
    let replayed =
        replay::status_from_replies(Protocol::OneQuery, target(), &replies, &options()).unwrap();
    assert_eq!(replayed.players, status.players);
}

#[test]
fn a_missing_gamespy_part_gives_an_incomplete_status() {
    let (status, mut replies) = live(Protocol::GameSpy1, state(120));
    assert!(replies.len() >= 3, "{} parts", replies.len());
    replies.remove(1);
    let replayed =
        replay::status_from_replies(Protocol::GameSpy1, target(), &replies, &options()).unwrap();
    assert!(!replayed.complete);
    assert!(replayed.players.len() < status.players.len());
    assert_eq!(replayed.name, "Replayed");
}

#[test]
fn sqp_without_its_challenge_reply_is_the_clients_timeout() {
    let (_, replies) = live(Protocol::Sqp, state(3));
    let query_reply_only: Vec<Vec<u8>> = replies.into_iter().filter(|r| r[0] == 1).collect();
    let err = replay::status_from_replies(Protocol::Sqp, target(), &query_reply_only, &options())
        .unwrap_err();
    assert!(matches!(err, QueryError::Timeout { .. }), "{err}");
    assert!(err.to_string().contains("challenge request"), "{err}");
}

#[test]
fn no_datagrams_at_all_time_out_and_garbage_answers_nothing() {
    for protocol in Protocol::DATAGRAM {
        let err = replay::status_from_replies(protocol, target(), &[], &options()).unwrap_err();
        assert!(
            matches!(err, QueryError::Timeout { .. }),
            "{protocol}: {err}"
        );
    }
    // GameSpy v1 parts echo nothing of the request, so every datagram goes to its client.
    for protocol in [Protocol::Sqp, Protocol::OneQuery, Protocol::Samp] {
        let garbage = vec![b"\x01garbage that answers nothing".to_vec(), Vec::new()];
        let result = replay::status_from_replies(protocol, target(), &garbage, &options());
        assert!(result.is_err(), "{protocol}: {result:?}");
    }
}
