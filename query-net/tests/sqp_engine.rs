//! SQP without sockets: the client session and the responder driven with explicit times.

mod sqp_support;

use std::net::SocketAddr;
use std::time::{Duration, Instant, UNIX_EPOCH};

use query_net::clock::Now;
use query_net::engine::{ClientSession, DropReason, ReplySink, Responder, Verdict};
use query_net::engines::sqp::{requested_chunks, SqpClient, SqpResponder, SqpResponderConfig};
use query_net::state::{RuleValue, ServerState, SharedState, TeamState};
use query_net::{Options, QueryError, ServerStatus};
use query_specs::sqp::{
    ChallengeResponse, ChunkSet, Chunks, QueryRequest, QueryResponse, QueryResponseFragment,
    Request, Response, ServerInfo, Table, Value,
};
use query_wire::{Decode, Encode};
use sqp_support::{comparable, expected, player, sample_state};

const TIMEOUT: Duration = Duration::from_millis(500);

fn server() -> SocketAddr {
    "127.0.0.1:7779".parse().unwrap()
}

fn client_addr() -> SocketAddr {
    "127.0.0.1:50000".parse().unwrap()
}

/// Every chunk: the responder here serves them all.
fn options(retries: u32) -> Options {
    Options {
        timeout: TIMEOUT,
        retries,
        sqp_chunks: ChunkSet::all(),
        ..Options::default()
    }
}

fn start() -> Now {
    Now {
        instant: Instant::now(),
        wall: UNIX_EPOCH + Duration::from_secs(1_740_000_000),
    }
}

/// Runs `session` against `responder` in memory. `lose(n)` says whether the n-th datagram
/// the client sends (from 1) is lost. Replies arrive 2 ms after their request.
fn run(
    session: &mut SqpClient,
    responder: &mut SqpResponder,
    mut now: Now,
    mut lose: impl FnMut(u32) -> bool,
) -> (Result<ServerStatus, QueryError>, Vec<Vec<u8>>) {
    let mut sink = ReplySink::new(1400);
    let mut sent = Vec::new();
    for _ in 0..100 {
        while let Some(datagram) = session.poll_transmit(now.instant) {
            let datagram = datagram.to_vec();
            sent.push(datagram.clone());
            if lose(sent.len() as u32) {
                continue;
            }
            sink.clear();
            responder.handle(client_addr(), &datagram, now, &mut sink);
            let replies: Vec<Vec<u8>> = sink.datagrams().map(<[u8]>::to_vec).collect();
            for reply in replies {
                session.handle_datagram(server(), &reply, now.instant + Duration::from_millis(2));
            }
        }
        if let Some(result) = session.poll_result() {
            return (result, sent);
        }
        let deadline = session
            .poll_timeout()
            .expect("a pending session has a deadline");
        now = now.after(deadline.saturating_duration_since(now.instant));
        session.handle_timeout(deadline);
    }
    panic!("the session did not finish in 100 steps");
}

#[test]
fn happy_path_maps_every_field() {
    let state = sample_state();
    let mut responder = SqpResponder::new(SharedState::new(state.clone()));
    let mut session = SqpClient::new(server(), &options(2));
    let (result, sent) = run(&mut session, &mut responder, start(), |_| false);
    let status = result.unwrap();
    assert_eq!(sent.len(), 2, "one challenge request, one query");
    assert_eq!(sent[0], [0, 0, 0, 0, 0]);
    assert_eq!(sent[1].len(), 8);
    assert!((status.ping_ms - 2.0).abs() < 1e-6, "{}", status.ping_ms);
    assert_eq!(status.raw["server_info"]["port"], 7777);
    assert_eq!(comparable(status), expected(&state, server()));
}

#[test]
fn only_the_chunks_asked_for_are_requested() {
    // The defaults ask for ServerInfo alone; `players` and `rules` (on by default for the
    // other protocols) add no SQP chunk.
    let opts = Options {
        timeout: TIMEOUT,
        retries: 0,
        players: true,
        rules: true,
        ..Options::default()
    };
    assert_eq!(requested_chunks(&opts), ChunkSet::SERVER_INFO);
    assert_eq!(
        requested_chunks(&Options {
            sqp_chunks: ChunkSet::SERVER_RULES | ChunkSet::METRICS,
            ..Options::default()
        }),
        ChunkSet::SERVER_RULES | ChunkSet::METRICS
    );
    let state = sample_state();
    let mut responder = SqpResponder::new(SharedState::new(state.clone()));
    let mut session = SqpClient::new(server(), &opts);
    let (result, sent) = run(&mut session, &mut responder, start(), |_| false);
    let Ok(Request::Query(query)) = Request::from_bytes(&sent[1]) else {
        panic!("not a query request: {:?}", sent[1]);
    };
    assert_eq!(query.requested, ChunkSet::SERVER_INFO);
    let status = result.unwrap();
    assert!(status.players.is_empty() && status.rules.is_empty() && status.teams.is_empty());
    assert_eq!(status.num_players, 3);
}

#[test]
fn a_lost_query_starts_a_new_round_with_a_fresh_challenge() {
    let state = sample_state();
    let mut responder = SqpResponder::new(SharedState::new(state.clone()));
    let mut session = SqpClient::new(server(), &options(2));
    // Lose the first query request: resending it would be useless, its challenge is spent.
    let (result, sent) = run(&mut session, &mut responder, start(), |n| n == 2);
    assert_eq!(comparable(result.unwrap()), expected(&state, server()));
    assert_eq!(sent.len(), 4);
    assert_eq!(sent[2], [0, 0, 0, 0, 0], "a new challenge request");
    assert_ne!(sent[1][1..5], sent[3][1..5], "with a new challenge");
}

#[test]
fn a_lost_challenge_request_is_resent() {
    let state = sample_state();
    let mut responder = SqpResponder::new(SharedState::new(state.clone()));
    let mut session = SqpClient::new(server(), &options(1));
    let (result, sent) = run(&mut session, &mut responder, start(), |n| n == 1);
    assert_eq!(comparable(result.unwrap()), expected(&state, server()));
    assert_eq!(sent.len(), 3);
}

#[test]
fn timeouts_name_the_step_that_went_unanswered() {
    let mut responder = SqpResponder::new(SharedState::new(sample_state()));
    let mut session = SqpClient::new(server(), &options(2));
    let t0 = start();
    let (result, sent) = run(&mut session, &mut responder, t0, |_| true);
    match result {
        Err(QueryError::Timeout {
            waiting_for: "challenge request",
            attempts: 3,
            after,
        }) => assert_eq!(after, TIMEOUT * 3),
        other => panic!("{other:?}"),
    }
    assert_eq!(sent.len(), 3);

    // Challenges answered, queries lost: the query step is named.
    let mut session = SqpClient::new(server(), &options(1));
    let (result, sent) = run(&mut session, &mut responder, t0, |n| n % 2 == 0);
    assert!(
        matches!(
            result,
            Err(QueryError::Timeout {
                waiting_for: "query request",
                attempts: 2,
                ..
            })
        ),
        "{result:?}"
    );
    assert_eq!(sent.len(), 4);
}

/// Drives a session by hand up to the query step; returns the challenge it proves.
fn at_query_step(session: &mut SqpClient, now: Instant, challenge: u32) -> Vec<u8> {
    assert_eq!(session.poll_transmit(now), Some(&[0u8; 5][..]));
    let reply = Response::Challenge(ChallengeResponse { challenge })
        .to_vec_with(ChunkSet::empty())
        .unwrap();
    session.handle_datagram(server(), &reply, now);
    session
        .poll_transmit(now)
        .expect("the query request")
        .to_vec()
}

fn reply_bytes(challenge: u32, requested: ChunkSet, name: &str) -> Vec<u8> {
    let chunks = Chunks {
        server_info: Some(ServerInfo {
            current_players: 1,
            max_players: 2,
            server_name: name,
            game_type: "g",
            build_id: "b",
            map: "m",
            port: 1,
        }),
        ..Chunks::default()
    };
    Response::Query(QueryResponse {
        challenge,
        version: 1,
        current_packet: 0,
        last_packet: 0,
        chunks,
    })
    .to_vec_with(requested)
    .unwrap()
}

fn info_only() -> Options {
    Options {
        sqp_chunks: ChunkSet::SERVER_INFO,
        ..options(2)
    }
}

/// A server like Unity's SDK, which implements ServerInfo only: whatever chunks a query asks
/// for, the reply carries ServerInfo alone, with `version` in its header.
fn server_info_only_reply(datagram: &[u8], version: u16) -> Option<Vec<u8>> {
    match Request::from_bytes(datagram).ok()? {
        Request::Challenge(_) => Some(
            Response::Challenge(ChallengeResponse { challenge: 77 })
                .to_vec_with(ChunkSet::empty())
                .unwrap(),
        ),
        Request::Query(query) if query.challenge == 77 => {
            let mut reply = reply_bytes(77, ChunkSet::SERVER_INFO, "info only");
            reply[5..7].copy_from_slice(&version.to_be_bytes());
            Some(reply)
        }
        Request::Query(_) => None,
    }
}

/// Runs `session` against [`server_info_only_reply`]; returns the result and how many
/// datagrams the session sent.
fn against_server_info_only(
    mut session: SqpClient,
    version: u16,
) -> (Result<ServerStatus, QueryError>, usize) {
    let mut now = Instant::now();
    let mut sent = 0;
    for _ in 0..20 {
        while let Some(datagram) = session.poll_transmit(now) {
            sent += 1;
            let datagram = datagram.to_vec();
            if let Some(reply) = server_info_only_reply(&datagram, version) {
                session.handle_datagram(server(), &reply, now + Duration::from_millis(1));
            }
        }
        if let Some(result) = session.poll_result() {
            return (result, sent);
        }
        now = session.poll_timeout().expect("a deadline");
        session.handle_timeout(now);
    }
    panic!("the session did not finish");
}

#[test]
fn a_server_with_server_info_only_answers_any_chunk_set() {
    let defaults = Options {
        timeout: TIMEOUT,
        ..Options::default()
    };
    let (status, sent) = against_server_info_only(SqpClient::new(server(), &defaults), 1);
    let status = status.unwrap();
    assert_eq!(sent, 2);
    assert_eq!(status.name, "info only");
    assert!(status.complete);
    assert_eq!((status.num_players, status.max_players), (1, 2));
    assert_eq!(status.raw["missing_chunks"], serde_json::json!([]));

    // Asked for every chunk, it sends the one it has: no retry, the rest named as missing.
    let (status, sent) = against_server_info_only(SqpClient::new(server(), &options(2)), 1);
    let status = status.unwrap();
    assert_eq!(sent, 2, "no second round");
    assert_eq!(status.name, "info only");
    assert!(status.complete);
    assert_eq!(
        status.raw["missing_chunks"],
        serde_json::json!(["rules", "players", "teams", "metrics"])
    );
    assert_eq!(status.raw["version"], 1);
    assert!(status.players.is_empty() && status.rules.is_empty());
}

#[test]
fn version_0_is_read_as_version_1_and_other_versions_end_the_query() {
    let (status, _) = against_server_info_only(SqpClient::new(server(), &options(2)), 0);
    let status = status.unwrap();
    assert_eq!(status.name, "info only");
    assert_eq!(status.raw["version"], 0);

    let (result, sent) = against_server_info_only(SqpClient::new(server(), &options(2)), 2);
    assert_eq!(sent, 2, "the server's own reply is not waited out");
    match result {
        Err(QueryError::ServerReply(inner)) => {
            assert!(matches!(*inner, QueryError::Protocol(_)), "{inner}");
            assert!(inner.to_string().contains("version 2"), "{inner}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_reply_of_several_equally_good_chunk_sets_is_refused() {
    // An empty table alone reads as a player table and as a team table.
    let t0 = Instant::now();
    let mut session = SqpClient::with_chunks(
        server(),
        &options(2),
        ChunkSet::PLAYER_INFO | ChunkSet::TEAM_INFO,
    );
    at_query_step(&mut session, t0, 3);
    let reply = Response::Query(QueryResponse {
        challenge: 3,
        version: 1,
        current_packet: 0,
        last_packet: 0,
        chunks: Chunks {
            player_info: Some(Table::default()),
            ..Chunks::default()
        },
    })
    .to_vec_with(ChunkSet::PLAYER_INFO)
    .unwrap();
    session.handle_datagram(server(), &reply, t0);
    match session.poll_result() {
        Some(Err(QueryError::ServerReply(inner))) => {
            let text = inner.to_string();
            assert!(text.contains("players") && text.contains("teams"), "{text}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_reply_with_another_challenge_or_from_another_port_is_ignored() {
    let t0 = Instant::now();
    let mut session = SqpClient::new(server(), &info_only());
    let query = at_query_step(&mut session, t0, 0xdead_beef);
    assert_eq!(
        Request::from_bytes(&query).unwrap(),
        Request::Query(QueryRequest {
            challenge: 0xdead_beef,
            version: 1,
            requested: ChunkSet::SERVER_INFO
        })
    );
    let forged = reply_bytes(0x1234_5678, ChunkSet::SERVER_INFO, "forged");
    session.handle_datagram(server(), &forged, t0);
    let real = reply_bytes(0xdead_beef, ChunkSet::SERVER_INFO, "real");
    session.handle_datagram("127.0.0.1:7780".parse().unwrap(), &real, t0);
    session.handle_datagram("127.0.0.2:7779".parse().unwrap(), &real, t0);
    // A late duplicate of the challenge changes nothing either.
    let late = Response::Challenge(ChallengeResponse { challenge: 9 })
        .to_vec_with(ChunkSet::empty())
        .unwrap();
    session.handle_datagram(server(), &late, t0);
    assert!(session.poll_result().is_none());
    session.handle_datagram(server(), &real, t0 + Duration::from_millis(3));
    let status = session.poll_result().unwrap().unwrap();
    assert_eq!(status.name, "real");
}

#[test]
fn garbage_is_ignored_while_attempts_remain_and_reported_when_they_run_out() {
    let t0 = Instant::now();
    let mut session = SqpClient::new(server(), &info_only());
    at_query_step(&mut session, t0, 7);
    // Too short to show a challenge, or not a query response at all: anyone could send these.
    session.handle_datagram(server(), &[1, 0, 0], t0);
    session.handle_datagram(server(), b"\x05garbage", t0);
    // A broken reply echoing another challenge is not this round's.
    let mut other = reply_bytes(8, ChunkSet::SERVER_INFO, "cut");
    other.truncate(other.len() - 1);
    session.handle_datagram(server(), &other, t0);
    assert!(session.poll_result().is_none());
    session.handle_datagram(server(), &reply_bytes(7, ChunkSet::SERVER_INFO, "ok"), t0);
    assert_eq!(session.poll_result().unwrap().unwrap().name, "ok");

    // Only garbage, every round: the error says what was wrong, not just "timeout".
    let mut session = SqpClient::new(server(), &info_only());
    let mut now = t0;
    for round in 0..3u32 {
        at_query_step(&mut session, now, round);
        session.handle_datagram(server(), &[1, 0], now);
        now = session.poll_timeout().unwrap();
        session.handle_timeout(now);
    }
    match session.poll_result() {
        Some(Err(QueryError::Malformed(e))) => {
            assert!(e.to_string().contains("QueryResponseHead"), "{e}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_broken_reply_echoing_the_challenge_ends_the_query_at_once() {
    let t0 = Instant::now();
    let mut session = SqpClient::new(server(), &info_only());
    at_query_step(&mut session, t0, 7);
    let mut bad = reply_bytes(7, ChunkSet::SERVER_INFO, "cut");
    bad.truncate(bad.len() - 1);
    session.handle_datagram(server(), &bad, t0);
    match session.poll_result() {
        Some(Err(QueryError::ServerReply(inner))) => match *inner {
            QueryError::Malformed(e) => {
                assert!(e.to_string().contains("QueryResponseFragment"), "{e}");
            }
            other => panic!("{other}"),
        },
        other => panic!("{other:?}"),
    }
    assert_eq!(session.poll_transmit(t0), None, "nothing more is sent");
}

#[test]
fn split_replies_are_reassembled_in_any_order_and_duplicates_ignored() {
    let state = sample_state();
    let requested = requested_chunks(&options(0));
    // The whole reply from the responder, cut into three parts.
    let mut responder = SqpResponder::new(SharedState::new(state.clone()));
    let mut sink = ReplySink::new(1400);
    let now = start();
    responder.handle(client_addr(), &[0; 5], now, &mut sink);
    let Ok(Response::Challenge(ChallengeResponse { challenge })) =
        Response::from_bytes_with(sink.datagrams().next().unwrap(), ChunkSet::empty())
    else {
        panic!("no challenge");
    };
    let query = Request::Query(QueryRequest {
        challenge,
        version: 1,
        requested,
    })
    .to_vec()
    .unwrap();
    sink.clear();
    assert_eq!(
        responder.handle(client_addr(), &query, now, &mut sink),
        Verdict::Answered
    );
    let whole = sink.datagrams().next().unwrap().to_vec();
    let single = QueryResponseFragment::from_bytes(&whole).unwrap();
    let payload = single.payload;
    let cuts = [0, payload.len() / 3, payload.len() * 2 / 3, payload.len()];
    let part = |i: usize| {
        QueryResponseFragment {
            challenge: 42,
            version: 1,
            current_packet: i as u8,
            last_packet: 2,
            payload: &payload[cuts[i]..cuts[i + 1]],
        }
        .to_vec()
        .unwrap()
    };

    let t0 = Instant::now();
    let mut session = SqpClient::new(server(), &options(0));
    at_query_step(&mut session, t0, 42);
    session.handle_datagram(server(), &part(2), t0);
    session.handle_datagram(server(), &part(0), t0);
    // A duplicate whose bytes differ: the first copy of a part wins.
    let mut altered = part(0);
    let last = altered.len() - 1;
    altered[last] ^= 0xff;
    session.handle_datagram(server(), &altered, t0);
    assert!(session.poll_result().is_none());
    session.handle_datagram(server(), &part(1), t0);
    let status = session.poll_result().unwrap().unwrap();
    assert_eq!(comparable(status), expected(&state, server()));
}

#[test]
fn parts_that_disagree_end_the_query_at_once() {
    let t0 = Instant::now();
    let mut session = SqpClient::new(server(), &options(0));
    at_query_step(&mut session, t0, 5);
    for (current, last) in [(0u8, 2u8), (1, 3)] {
        let part = QueryResponseFragment {
            challenge: 5,
            version: 1,
            current_packet: current,
            last_packet: last,
            payload: b"xx",
        };
        session.handle_datagram(server(), &part.to_vec().unwrap(), t0);
    }
    match session.poll_result() {
        Some(Err(QueryError::ServerReply(inner))) => {
            assert!(inner.to_string().contains("disagree"), "{inner}");
        }
        other => panic!("{other:?}"),
    }
}

// --- The responder on its own ---

fn handle(
    responder: &mut SqpResponder,
    from: SocketAddr,
    datagram: &[u8],
    now: Now,
) -> (Verdict, Vec<Vec<u8>>) {
    let mut sink = ReplySink::new(1400);
    let verdict = responder.handle(from, datagram, now, &mut sink);
    (verdict, sink.datagrams().map(<[u8]>::to_vec).collect())
}

fn challenge_of(reply: &[u8]) -> u32 {
    match Response::from_bytes_with(reply, ChunkSet::empty()) {
        Ok(Response::Challenge(c)) => c.challenge,
        other => panic!("not a challenge: {other:?}"),
    }
}

fn query_bytes(challenge: u32, version: u16, requested: ChunkSet) -> Vec<u8> {
    Request::Query(QueryRequest {
        challenge,
        version,
        requested,
    })
    .to_vec()
    .unwrap()
}

#[test]
fn the_challenge_reply_is_no_larger_than_its_request() {
    let mut responder = SqpResponder::new(SharedState::new(sample_state()));
    let now = start();
    let (verdict, replies) = handle(&mut responder, client_addr(), &[0, 1, 2, 3, 4], now);
    assert_eq!(verdict, Verdict::Answered);
    assert_eq!(replies.len(), 1);
    assert_eq!(replies[0].len(), 5);
    assert_eq!(replies[0][0], 0);
    for short_or_long in [&[0u8][..], &[0, 0, 0, 0], &[0, 0, 0, 0, 0, 0]] {
        let (verdict, replies) = handle(&mut responder, client_addr(), short_or_long, now);
        assert_eq!(verdict, Verdict::Dropped(DropReason::Malformed));
        assert!(replies.is_empty());
    }
}

#[test]
fn a_challenge_is_single_use_bound_to_its_source_and_expires() {
    let mut responder = SqpResponder::with_config(
        SharedState::new(sample_state()),
        SqpResponderConfig {
            challenge_ttl: Duration::from_secs(5),
            max_challenges: 64,
        },
    );
    let now = start();
    let all = ChunkSet::all();
    let (_, replies) = handle(&mut responder, client_addr(), &[0; 5], now);
    let challenge = challenge_of(&replies[0]);

    let other_port: SocketAddr = "127.0.0.1:50001".parse().unwrap();
    let (verdict, _) = handle(
        &mut responder,
        other_port,
        &query_bytes(challenge, 1, all),
        now,
    );
    assert_eq!(verdict, Verdict::Dropped(DropReason::BadChallenge));
    let (verdict, _) = handle(
        &mut responder,
        client_addr(),
        &query_bytes(challenge ^ 1, 1, all),
        now,
    );
    assert_eq!(verdict, Verdict::Dropped(DropReason::BadChallenge));
    let (verdict, _) = handle(
        &mut responder,
        client_addr(),
        &query_bytes(challenge, 2, all),
        now,
    );
    assert_eq!(verdict, Verdict::Dropped(DropReason::Unsupported));
    // None of the failures above used the challenge up.
    let (verdict, replies) = handle(
        &mut responder,
        client_addr(),
        &query_bytes(challenge, 1, all),
        now,
    );
    assert_eq!(verdict, Verdict::Answered);
    assert_eq!(replies.len(), 1);
    let (verdict, _) = handle(
        &mut responder,
        client_addr(),
        &query_bytes(challenge, 1, all),
        now,
    );
    assert_eq!(
        verdict,
        Verdict::Dropped(DropReason::BadChallenge),
        "single use"
    );

    // Expiry.
    let (_, replies) = handle(&mut responder, client_addr(), &[0; 5], now);
    let challenge = challenge_of(&replies[0]);
    let later = now.after(Duration::from_secs(5));
    let (verdict, _) = handle(
        &mut responder,
        client_addr(),
        &query_bytes(challenge, 1, all),
        later,
    );
    assert_eq!(verdict, Verdict::Dropped(DropReason::BadChallenge));

    // A new challenge replaces the source's previous one.
    let (_, replies) = handle(&mut responder, client_addr(), &[0; 5], now);
    let first = challenge_of(&replies[0]);
    let (_, replies) = handle(&mut responder, client_addr(), &[0; 5], now);
    let second = challenge_of(&replies[0]);
    if first != second {
        let (verdict, _) = handle(
            &mut responder,
            client_addr(),
            &query_bytes(first, 1, all),
            now,
        );
        assert_eq!(verdict, Verdict::Dropped(DropReason::BadChallenge));
    }
    let (verdict, _) = handle(
        &mut responder,
        client_addr(),
        &query_bytes(second, 1, all),
        now,
    );
    assert_eq!(verdict, Verdict::Answered);
}

#[test]
fn a_flood_of_sources_never_grows_the_challenge_table_or_breaks_a_fresh_challenge() {
    let mut responder = SqpResponder::with_config(
        SharedState::new(sample_state()),
        SqpResponderConfig {
            challenge_ttl: Duration::from_secs(5),
            max_challenges: 1024,
        },
    );
    let now = start();
    for i in 0..20_000u32 {
        let from = SocketAddr::from(([10, (i >> 16) as u8, (i >> 8) as u8, i as u8], 1000));
        handle(&mut responder, from, &[0; 5], now);
    }
    let (_, replies) = handle(&mut responder, client_addr(), &[0; 5], now);
    let challenge = challenge_of(&replies[0]);
    let (verdict, _) = handle(
        &mut responder,
        client_addr(),
        &query_bytes(challenge, 1, ChunkSet::SERVER_INFO),
        now,
    );
    assert_eq!(verdict, Verdict::Answered);
}

/// Asks `responder` for `requested` with a fresh challenge and decodes the reply.
fn query_reply(responder: &mut SqpResponder, requested: ChunkSet, sink_size: usize) -> Vec<u8> {
    let now = start();
    let (_, replies) = handle(responder, client_addr(), &[0; 5], now);
    let challenge = challenge_of(&replies[0]);
    let mut sink = ReplySink::new(sink_size);
    let verdict = responder.handle(
        client_addr(),
        &query_bytes(challenge, 1, requested),
        now,
        &mut sink,
    );
    assert_eq!(verdict, Verdict::Answered);
    assert_eq!(sink.len(), 1);
    let reply = sink.datagrams().next().unwrap().to_vec();
    reply
}

#[test]
fn chunks_come_in_bit_order_with_typed_rules() {
    let mut responder = SqpResponder::new(SharedState::new(sample_state()));
    let requested = ChunkSet::all();
    let bytes = query_reply(&mut responder, requested, 1400);
    let Ok(Response::Query(reply)) = Response::from_bytes_with(&bytes, requested) else {
        panic!("undecodable reply");
    };
    let chunks = reply.chunks;
    let rules: Vec<(&str, &Value<'_>)> = chunks
        .server_rules
        .as_ref()
        .unwrap()
        .iter()
        .map(|r| (r.key, &r.value))
        .collect();
    assert_eq!(
        rules,
        [
            ("friendly_fire", &Value::Byte(0)),
            ("round_time", &Value::U32(300)),
            ("big", &Value::U64(1 << 40)),
            ("debt", &Value::Str("-12")),
            ("gravity", &Value::F32(9.81)),
            ("greeting", &Value::Str("grüß dich")),
        ]
    );
    let players = chunks.player_info.as_ref().unwrap();
    let columns: Vec<(&str, u8)> = players
        .fields
        .as_ref()
        .unwrap()
        .iter()
        .map(|f| (f.name, f.kind))
        .collect();
    // A negative score makes the score column text; a team makes a team column.
    assert_eq!(
        columns,
        [("name", 4), ("score", 4), ("ping", 1), ("team", 4)]
    );
    assert_eq!(chunks.metrics.as_ref().unwrap().values, Vec::<f32>::new());
    // Asking for unknown bits gets the known chunks only.
    let bytes = query_reply(&mut responder, ChunkSet::from_bits_retain(0xe1), 1400);
    assert!(Response::from_bytes_with(&bytes, ChunkSet::SERVER_INFO).is_ok());
}

#[test]
fn long_strings_are_cut_at_a_character_boundary() {
    // 2 × 150 = 300 bytes; byte 255 is the middle of an "é".
    let long = "é".repeat(150);
    let state = ServerState {
        name: long.clone(),
        map: "🚀".repeat(70),
        players: vec![player(&long, 1, 1, Some(&long))],
        teams: vec![TeamState {
            name: long.clone(),
            score: 0,
        }],
        rules: [(long.clone(), RuleValue::Text(long.clone()))]
            .into_iter()
            .collect(),
        ..ServerState::default()
    };
    let mut responder = SqpResponder::new(SharedState::new(state));
    let requested = ChunkSet::all();
    // 4 KiB: at 1400 bytes, the cut name, rule, and a row with a cut name and team would not
    // all fit, and the row would be left out.
    let bytes = query_reply(&mut responder, requested, 4096);
    let Ok(Response::Query(reply)) = Response::from_bytes_with(&bytes, requested) else {
        panic!("undecodable reply");
    };
    let status = query_net::engines::sqp::status_from_chunks(server(), &reply.chunks);
    let cut = &long[..254];
    assert_eq!(status.name, cut);
    assert_eq!(status.map.as_deref(), Some("🚀".repeat(63).as_str()));
    assert_eq!(status.players[0].name, cut);
    assert_eq!(status.players[0].team.as_deref(), Some(cut));
    assert_eq!(status.teams[0].name, cut);
    assert_eq!(status.rules.get(cut).map(String::as_str), Some(cut));
}

#[test]
fn a_reply_never_exceeds_the_datagram_cap_and_keeps_every_chunk() {
    let state = ServerState {
        name: "big".to_owned(),
        players: (0..2000)
            .map(|i| player(&format!("player number {i}"), i, 20, None))
            .collect(),
        teams: (0..300)
            .map(|i| TeamState {
                name: format!("team {i}"),
                score: i,
            })
            .collect(),
        ..ServerState::default()
    };
    let mut responder = SqpResponder::new(SharedState::new(state));
    let requested = ChunkSet::all();
    for cap in [1400, 9000] {
        let bytes = query_reply(&mut responder, requested, cap);
        assert!(bytes.len() <= cap, "{} > {cap}", bytes.len());
        assert!(
            bytes.len() > cap - 40,
            "uses the room it has: {}",
            bytes.len()
        );
        let Ok(Response::Query(reply)) = Response::from_bytes_with(&bytes, requested) else {
            panic!("undecodable reply at cap {cap}");
        };
        let status = query_net::engines::sqp::status_from_chunks(server(), &reply.chunks);
        assert_eq!(status.num_players, 2000);
        assert!(!status.players.is_empty() && status.players.len() < 2000);
        assert_eq!(status.players[5].name, "player number 5");
        assert!(reply.chunks.team_info.is_some() && reply.chunks.metrics.is_some());
    }
}
