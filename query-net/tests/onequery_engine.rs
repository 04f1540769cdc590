//! OneQuery without sockets: the client session and the responder driven with explicit times.

mod onequery_support;

use std::net::SocketAddr;
use std::time::{Duration, Instant, UNIX_EPOCH};

use onequery_support::{comparable, expected, players, sample_state};
use query_net::clock::Now;
use query_net::engine::{ClientSession, DropReason, ReplySink, Responder, Verdict};
use query_net::engines::onequery::token::TokenKey;
use query_net::engines::onequery::{
    Access, AuthSecret, OneQueryClient, OneQueryResponder, Permissions, MAX_PAGES,
    PLAYER_PAGE_BUDGET,
};
use query_net::state::{PlayerState, ServerState, SharedState};
use query_net::{Options, QueryError, ServerStatus};
use query_specs::onequery::{
    ChallengeReply, Family, Payload, Player as WirePlayer, PlayerList, Query, QueryReply, Reply,
    ReplyBody, ReplyFamily, ReplyFlags, Request, RequestFlags, ServerInfo, KIND_BASIC,
    KIND_PLAYERS, MAX_DATAGRAM,
};
use query_wire::{Decode, Encode, Reserved, Uuid};

const TIMEOUT: Duration = Duration::from_millis(500);

fn server() -> SocketAddr {
    "127.0.0.1:5520".parse().unwrap()
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

/// The start of a 30-second token window.
fn start() -> Now {
    Now {
        instant: Instant::now(),
        wall: UNIX_EPOCH + Duration::from_secs(58_000_000 * 30),
    }
}

fn key() -> TokenKey {
    TokenKey::from_secret(&[7; 32])
}

/// Runs `session` against `responder` in memory; `lose(n)` drops the n-th request (from 1).
/// Replies arrive 1 ms after their request.
fn run(
    session: &mut OneQueryClient,
    responder: &mut OneQueryResponder,
    mut now: Now,
    mut lose: impl FnMut(u32, &[u8]) -> bool,
) -> (Result<ServerStatus, QueryError>, Vec<Vec<u8>>) {
    let mut sink = ReplySink::new(65_507);
    let mut sent = Vec::new();
    for _ in 0..1000 {
        while let Some(datagram) = session.poll_transmit(now.instant) {
            let datagram = datagram.to_vec();
            sent.push(datagram.clone());
            if lose(sent.len() as u32, &datagram) {
                continue;
            }
            sink.clear();
            responder.handle(client_addr(), &datagram, now, &mut sink);
            let replies: Vec<Vec<u8>> = sink.datagrams().map(<[u8]>::to_vec).collect();
            for reply in replies {
                assert!(reply.len() <= MAX_DATAGRAM, "{} bytes", reply.len());
                session.handle_datagram(server(), &reply, now.instant + Duration::from_millis(1));
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
    panic!("the session did not finish in 1000 steps");
}

fn responder(state: ServerState) -> OneQueryResponder {
    OneQueryResponder::new(SharedState::new(state)).with_key(key())
}

#[test]
fn happy_path_maps_every_field() {
    let state = sample_state();
    let mut responder = responder(state.clone());
    let mut session = OneQueryClient::new(server(), &options()).unwrap();
    let (result, sent) = run(&mut session, &mut responder, start(), |_, _| false);
    let status = result.unwrap();
    assert_eq!(sent.len(), 3, "challenge, BASIC, one PLAYERS page");
    assert_eq!(sent[0], b"ONEQUERY\x00");
    assert!(sent[1..].iter().all(|s| s.len() == 51), "full layout");
    assert!((status.ping_ms - 1.0).abs() < 1e-6);
    let info = &status.raw["server_info"];
    assert_eq!(info["motd"], "Willkommen, Wanderer!");
    assert_eq!(info["protocol_version"], 7);
    assert_eq!(info["protocol_hash"], "c0ffee");
    assert_eq!(info["host"], "play.example.com");
    assert_eq!(info["port"], 5520);
    assert_eq!(status.raw["is_network"], false);
    assert_eq!(comparable(status), expected(&state, server()));
}

#[test]
fn without_players_only_basic_is_asked() {
    let state = sample_state();
    let mut responder = responder(state.clone());
    let opts = Options {
        players: false,
        ..options()
    };
    let mut session = OneQueryClient::new(server(), &opts).unwrap();
    let (result, sent) = run(&mut session, &mut responder, start(), |_, _| false);
    assert_eq!(sent.len(), 2);
    let status = result.unwrap();
    assert!(status.players.is_empty() && status.complete);
    assert_eq!(status.num_players, 2);
}

#[test]
fn lost_requests_are_resent_and_a_timeout_names_its_step() {
    let state = sample_state();
    let mut responder = responder(state.clone());
    let mut session = OneQueryClient::new(server(), &options()).unwrap();
    // Lose the first BASIC request and the first PLAYERS request.
    let (result, sent) = run(&mut session, &mut responder, start(), |n, _| {
        n == 2 || n == 4
    });
    assert_eq!(comparable(result.unwrap()), expected(&state, server()));
    assert_eq!(sent.len(), 5);
    assert_eq!(sent[1], sent[2], "a resend is the same request");

    let mut session = OneQueryClient::new(server(), &options()).unwrap();
    let (result, sent) = run(&mut session, &mut responder, start(), |_, d| {
        d.len() > 9 && d[8] == KIND_PLAYERS
    });
    match result {
        Err(QueryError::Timeout {
            waiting_for: "players request",
            attempts: 3,
            after,
        }) => assert_eq!(after, TIMEOUT * 3),
        other => panic!("{other:?}"),
    }
    assert_eq!(sent.len(), 5);

    let mut session = OneQueryClient::new(server(), &options()).unwrap();
    let (result, _) = run(&mut session, &mut responder, start(), |_, _| true);
    assert!(
        matches!(
            result,
            Err(QueryError::Timeout {
                waiting_for: "challenge request",
                ..
            })
        ),
        "{result:?}"
    );
}

fn challenge_reply(family: ReplyFamily) -> Vec<u8> {
    Reply {
        family,
        body: ReplyBody::Challenge(ChallengeReply {
            token: [9; 32],
            reserved: Reserved,
        }),
    }
    .to_vec()
    .unwrap()
}

fn basic_reply(family: ReplyFamily, request_id: u32, flags: ReplyFlags, name: &str) -> Vec<u8> {
    Reply {
        family,
        body: ReplyBody::Query(QueryReply {
            flags,
            request_id,
            payload: vec![Payload::ServerInfo(ServerInfo {
                server_name: name,
                motd: "",
                player_count: 1,
                max_players: 2,
                version: "v",
                protocol_version: 1,
                protocol_hash: "h",
                host: None,
                port: None,
            })],
        }),
    }
    .to_vec()
    .unwrap()
}

fn decode_query(datagram: &[u8]) -> (u8, Query<'_>) {
    let request = Request::from_bytes(datagram).unwrap();
    (
        request.kind,
        request.query.expect("a query, not a challenge"),
    )
}

#[test]
fn replies_with_another_request_id_or_family_are_ignored() {
    let t0 = Instant::now();
    let opts = Options {
        players: false,
        ..options()
    };
    let mut session = OneQueryClient::new(server(), &opts).unwrap();
    session.poll_transmit(t0).unwrap();
    session.handle_datagram(server(), &challenge_reply(ReplyFamily::HyReply2), t0);
    assert!(session.poll_transmit(t0).is_none(), "wrong family ignored");
    session.handle_datagram(server(), &challenge_reply(ReplyFamily::OneReply), t0);
    let (kind, query) = decode_query(session.poll_transmit(t0).unwrap());
    assert_eq!((kind, query.token), (KIND_BASIC, [9; 32]));
    let id = query.request_id;
    let flags = ReplyFlags::empty();
    for spoof in [
        basic_reply(ReplyFamily::OneReply, id.wrapping_add(1), flags, "wrong id"),
        basic_reply(ReplyFamily::HyReply2, id, flags, "wrong family"),
        challenge_reply(ReplyFamily::OneReply),
        b"ONEREPLY\x01garbage".to_vec(),
    ] {
        session.handle_datagram(server(), &spoof, t0);
    }
    let real = basic_reply(ReplyFamily::OneReply, id, flags, "real");
    session.handle_datagram("127.0.0.1:5521".parse().unwrap(), &real, t0);
    assert!(session.poll_result().is_none());
    session.handle_datagram(server(), &real, t0);
    assert_eq!(session.poll_result().unwrap().unwrap().name, "real");
}

/// Before any BASIC or PLAYERS request is out, no query reply can match, even one with the
/// id a fresh session would start from, and one that claims FLAG_AUTH_REQUIRED.
#[test]
fn query_replies_during_the_challenge_are_ignored_whatever_their_id() {
    let t0 = Instant::now();
    let mut session = OneQueryClient::new(server(), &options()).unwrap();
    assert_eq!(session.poll_transmit(t0).unwrap(), b"ONEQUERY\x00");
    for id in [0, 1, u32::MAX] {
        for flags in [ReplyFlags::AUTH_REQUIRED, ReplyFlags::empty()] {
            let forged = basic_reply(ReplyFamily::OneReply, id, flags, "forged");
            session.handle_datagram(server(), &forged, t0);
        }
    }
    assert!(
        session.poll_result().is_none(),
        "a forged reply ended the query"
    );
    assert!(session.poll_transmit(t0).is_none(), "nothing new to send");

    // The genuine exchange still goes through.
    session.handle_datagram(server(), &challenge_reply(ReplyFamily::OneReply), t0);
    let (kind, query) = decode_query(session.poll_transmit(t0).unwrap());
    assert_eq!(kind, KIND_BASIC);
    let id = query.request_id;
    // A forged AUTH_REQUIRED with another id is still ignored now that BASIC is out.
    let forged = basic_reply(
        ReplyFamily::OneReply,
        id.wrapping_add(1),
        ReplyFlags::AUTH_REQUIRED,
        "forged",
    );
    session.handle_datagram(server(), &forged, t0);
    assert!(session.poll_result().is_none());
    let real = basic_reply(ReplyFamily::OneReply, id, ReplyFlags::empty(), "real");
    session.handle_datagram(server(), &real, t0);
    let (kind, _) = decode_query(session.poll_transmit(t0).unwrap());
    assert_eq!(kind, KIND_PLAYERS);
}

#[test]
fn a_query_in_the_second_family_is_answered_in_it() {
    let state = sample_state();
    let mut responder = responder(state.clone());
    let mut session = OneQueryClient::with_family(server(), &options(), Family::HyQuery2).unwrap();
    let (result, sent) = run(&mut session, &mut responder, start(), |_, _| false);
    assert!(sent.iter().all(|s| s.starts_with(b"HYQUERY2")));
    assert_eq!(comparable(result.unwrap()), expected(&state, server()));
}

#[test]
fn garbage_only_is_reported_as_malformed() {
    let t0 = Instant::now();
    let mut session = OneQueryClient::new(server(), &options()).unwrap();
    let mut now = t0;
    for _ in 0..3 {
        session.poll_transmit(now).unwrap();
        session.handle_datagram(server(), b"ONEREPLY\x00short", now);
        now = session.poll_timeout().unwrap();
        session.handle_timeout(now);
    }
    match session.poll_result() {
        Some(Err(QueryError::Malformed(e))) => assert!(e.to_string().contains("Reply"), "{e}"),
        other => panic!("{other:?}"),
    }
}

fn restricted() -> Access {
    Access {
        public: Permissions::BASIC,
        secrets: vec![AuthSecret {
            secret: "s3cret".to_owned(),
            grants: Permissions::PLAYERS,
        }],
    }
}

#[test]
fn auth_required_is_a_clear_error_and_a_token_unlocks_players() {
    let state = sample_state();
    let mut responder = responder(state.clone()).with_access(restricted());

    // BASIC is public, PLAYERS needs the secret: the status comes back without players,
    // marked incomplete, and says why.
    let mut session = OneQueryClient::new(server(), &options()).unwrap();
    let (result, sent) = run(&mut session, &mut responder, start(), |_, _| false);
    assert_eq!(
        sent.len(),
        3,
        "challenge, BASIC, one refused PLAYERS request"
    );
    let status = result.unwrap();
    assert!(!status.complete);
    assert!(status.players.is_empty());
    let message = status.raw["players_error"].as_str().unwrap();
    assert!(message.contains("player list"), "{message}");
    assert!(message.contains("none was given"), "{message}");
    let mut want = expected(&state, server());
    want.players.clear();
    want.complete = false;
    assert_eq!(comparable(status), want);

    let wrong = Options {
        auth_token: Some("guess".to_owned()),
        ..options()
    };
    let mut session = OneQueryClient::new(server(), &wrong).unwrap();
    let (result, _) = run(&mut session, &mut responder, start(), |_, _| false);
    let status = result.unwrap();
    assert!(!status.complete && status.players.is_empty());
    let message = status.raw["players_error"].as_str().unwrap();
    assert!(message.contains("refused"), "{message}");

    // When BASIC itself needs the secret, there is no status to give: the query fails.
    let mut private = self::responder(state.clone()).with_access(Access {
        public: Permissions::empty(),
        secrets: restricted().secrets,
    });
    let mut session = OneQueryClient::new(server(), &options()).unwrap();
    let (result, _) = run(&mut session, &mut private, start(), |_, _| false);
    match result {
        Err(QueryError::AuthRequired(message)) => {
            assert!(message.contains("its status"), "{message}");
            assert!(message.contains("none was given"), "{message}");
        }
        other => panic!("{other:?}"),
    }

    let basic_only = Options {
        players: false,
        ..options()
    };
    let mut session = OneQueryClient::new(server(), &basic_only).unwrap();
    let (result, _) = run(&mut session, &mut responder, start(), |_, _| false);
    assert_eq!(result.unwrap().name, state.name);

    let right = Options {
        auth_token: Some("s3cret".to_owned()),
        ..options()
    };
    let mut session = OneQueryClient::new(server(), &right).unwrap();
    let (result, sent) = run(&mut session, &mut responder, start(), |_, _| false);
    assert_eq!(comparable(result.unwrap()), expected(&state, server()));
    let (_, query) = decode_query(&sent[2]);
    assert_eq!(query.flags, RequestFlags::HAS_AUTH_TOKEN);
    assert_eq!(query.auth_token, Some("s3cret"));
}

/// Sends `kind` with a fresh token and returns the verdict and the decoded-ready reply bytes.
fn ask(
    responder: &mut OneQueryResponder,
    from: SocketAddr,
    now: Now,
    kind: u8,
    offset: u32,
    auth: Option<&str>,
) -> (Verdict, Vec<u8>) {
    let token = key().issue(from.ip(), now.wall);
    let request = Request {
        family: Family::OneQuery,
        kind,
        query: Some(Query {
            token,
            request_id: 0xabcd_0123,
            flags: if auth.is_some() {
                RequestFlags::HAS_AUTH_TOKEN
            } else {
                RequestFlags::empty()
            },
            offset,
            auth_token: auth,
        }),
    };
    let mut sink = ReplySink::new(65_507);
    let verdict = responder.handle(from, &request.to_vec().unwrap(), now, &mut sink);
    let reply = sink
        .datagrams()
        .next()
        .map(<[u8]>::to_vec)
        .unwrap_or_default();
    (verdict, reply)
}

fn query_reply(bytes: &[u8]) -> QueryReply<'_> {
    match Reply::from_bytes(bytes) {
        Ok(Reply {
            body: ReplyBody::Query(reply),
            ..
        }) => reply,
        other => panic!("not a query reply: {other:?}"),
    }
}

fn page<'a>(reply: &'a QueryReply<'a>) -> &'a PlayerList<'a> {
    match reply.payload.as_slice() {
        [Payload::PlayerList(page)] => page,
        other => panic!("not one player page: {other:?}"),
    }
}

#[test]
fn auth_required_replies_carry_a_full_server_info_even_for_players() {
    let mut responder = responder(sample_state()).with_access(Access {
        public: Permissions::empty(),
        secrets: restricted().secrets,
    });
    for kind in [KIND_BASIC, KIND_PLAYERS] {
        let (verdict, bytes) = ask(&mut responder, client_addr(), start(), kind, 0, None);
        assert_eq!(verdict, Verdict::Answered);
        let reply = query_reply(&bytes);
        assert!(reply.flags.contains(ReplyFlags::AUTH_REQUIRED));
        assert!(reply.flags.contains(ReplyFlags::HAS_ADDRESS));
        assert!(matches!(
            reply.payload.as_slice(),
            [Payload::ServerInfo(ServerInfo {
                host: Some("play.example.com"),
                port: Some(5520),
                ..
            })]
        ));
    }
    // The secret grants PLAYERS but not BASIC.
    let (_, bytes) = ask(
        &mut responder,
        client_addr(),
        start(),
        KIND_PLAYERS,
        0,
        Some("s3cret"),
    );
    assert_eq!(page(&query_reply(&bytes)).count, 2);
    let (_, bytes) = ask(
        &mut responder,
        client_addr(),
        start(),
        KIND_BASIC,
        0,
        Some("s3cret"),
    );
    assert!(query_reply(&bytes)
        .flags
        .contains(ReplyFlags::AUTH_REQUIRED));
}

#[test]
fn pagination_delivers_hundreds_of_players_over_several_pages() {
    let state = ServerState {
        players: players(300),
        ..sample_state()
    };
    let mut responder = responder(state.clone());
    let mut session = OneQueryClient::new(server(), &options()).unwrap();
    let mut offsets = Vec::new();
    let (result, _) = run(&mut session, &mut responder, start(), |_, d| {
        if d.len() > 9 && d[8] == KIND_PLAYERS {
            offsets.push(decode_query(d).1.offset);
        }
        false
    });
    let status = result.unwrap();
    assert!(offsets.len() >= 3, "{offsets:?}");
    assert_eq!(offsets[0], 0);
    assert!(offsets.windows(2).all(|w| w[0] < w[1]), "{offsets:?}");
    assert_eq!(status.raw["player_pages"], offsets.len());
    assert_eq!(status.raw["total_players"], 300);
    assert_eq!(comparable(status), expected(&state, server()));
}

#[test]
fn pages_fit_their_budget_and_flag_more_exactly_when_the_next_entry_does_not_fit() {
    let state = ServerState {
        players: players(300),
        ..sample_state()
    };
    let mut responder = responder(state.clone());
    let mut offset = 0u32;
    let mut seen = 0;
    loop {
        let (_, bytes) = ask(
            &mut responder,
            client_addr(),
            start(),
            KIND_PLAYERS,
            offset,
            None,
        );
        assert!(bytes.len() <= MAX_DATAGRAM);
        let reply = query_reply(&bytes);
        let page = page(&reply);
        assert_eq!((page.total, page.offset), (300, offset));
        let entries: usize = page.players.iter().map(|p| p.encoded_len(())).sum();
        assert!(entries <= PLAYER_PAGE_BUDGET);
        for (i, p) in page.players.iter().enumerate() {
            let expected = &state.players[offset as usize + i];
            assert_eq!(
                (p.username, Some(p.uuid)),
                (expected.name.as_str(), expected.uuid)
            );
        }
        seen += page.players.len();
        offset += page.count;
        if !reply.flags.contains(ReplyFlags::HAS_MORE_PLAYERS) {
            break;
        }
        let next = WirePlayer {
            username: &state.players[offset as usize].name,
            uuid: Uuid::nil(),
        };
        assert!(entries + next.encoded_len(()) > PLAYER_PAGE_BUDGET);
    }
    assert_eq!(seen, 300);

    // Past the end: an empty page, nothing more.
    let (_, bytes) = ask(
        &mut responder,
        client_addr(),
        start(),
        KIND_PLAYERS,
        5000,
        None,
    );
    let reply = query_reply(&bytes);
    assert_eq!(page(&reply).count, 0);
    assert_eq!(page(&reply).offset, 5000);
    assert!(!reply.flags.contains(ReplyFlags::HAS_MORE_PLAYERS));
}

/// A server that always has more players, one per page, or `empty_from` onwards none.
fn endless_server(
    session: &mut OneQueryClient,
    empty_from: u32,
) -> Result<ServerStatus, QueryError> {
    let t0 = Instant::now();
    for step in 0..200u32 {
        let Some(datagram) = session.poll_transmit(t0) else {
            return session.poll_result().expect("finished");
        };
        let request = Request::from_bytes(datagram).unwrap();
        let reply = match request.query {
            None => challenge_reply(ReplyFamily::OneReply),
            Some(query) if request.kind == KIND_BASIC => basic_reply(
                ReplyFamily::OneReply,
                query.request_id,
                ReplyFlags::empty(),
                "endless",
            ),
            Some(query) => {
                let name = format!("p{step}");
                let players = if query.offset >= empty_from {
                    vec![]
                } else {
                    vec![WirePlayer {
                        username: &name,
                        uuid: Uuid::nil(),
                    }]
                };
                Reply {
                    family: ReplyFamily::OneReply,
                    body: ReplyBody::Query(QueryReply {
                        flags: ReplyFlags::HAS_MORE_PLAYERS,
                        request_id: query.request_id,
                        payload: vec![Payload::PlayerList(PlayerList {
                            total: 1_000_000,
                            count: players.len() as u32,
                            offset: query.offset,
                            players,
                        })],
                    }),
                }
                .to_vec()
                .unwrap()
            }
        };
        session.handle_datagram(server(), &reply, t0);
    }
    panic!("the client kept asking");
}

#[test]
fn paging_stops_after_the_page_limit_or_an_empty_page() {
    let mut session = OneQueryClient::new(server(), &options()).unwrap();
    let status = endless_server(&mut session, u32::MAX).unwrap();
    assert_eq!(status.players.len(), MAX_PAGES as usize);
    assert!(!status.complete);

    let mut session = OneQueryClient::new(server(), &options()).unwrap();
    let status = endless_server(&mut session, 3).unwrap();
    assert_eq!(status.players.len(), 3);
    assert!(!status.complete);
}

#[test]
fn tokens_are_bound_to_the_ip_and_expire() {
    let mut responder = responder(sample_state());
    let now = start();
    let (verdict, _) = ask(&mut responder, client_addr(), now, KIND_BASIC, 0, None);
    assert_eq!(verdict, Verdict::Answered);

    let request_with = |token: [u8; 32]| {
        Request {
            family: Family::OneQuery,
            kind: KIND_BASIC,
            query: Some(Query {
                token,
                request_id: 1,
                flags: RequestFlags::empty(),
                offset: 0,
                auth_token: None,
            }),
        }
        .to_vec()
        .unwrap()
    };
    let token = key().issue(client_addr().ip(), now.wall);
    let mut sink = ReplySink::new(1400);
    let mut verdict_at = |from: &str, at: Now, token| {
        sink.clear();
        responder.handle(from.parse().unwrap(), &request_with(token), at, &mut sink)
    };
    // Another port of the same IP: the token is bound to the IP only.
    assert_eq!(verdict_at("127.0.0.1:1", now, token), Verdict::Answered);
    assert_eq!(
        verdict_at("127.0.0.2:50000", now, token),
        Verdict::Dropped(DropReason::BadChallenge)
    );
    let late = now.after(Duration::from_secs(119));
    assert_eq!(
        verdict_at("127.0.0.1:50000", late, token),
        Verdict::Answered
    );
    let expired = now.after(Duration::from_secs(120));
    assert_eq!(
        verdict_at("127.0.0.1:50000", expired, token),
        Verdict::Dropped(DropReason::BadChallenge)
    );
    let other_key = TokenKey::from_secret(&[8; 32]).issue(client_addr().ip(), now.wall);
    assert_eq!(
        verdict_at("127.0.0.1:50000", now, other_key),
        Verdict::Dropped(DropReason::BadChallenge)
    );
    assert_eq!(
        verdict_at("127.0.0.1:50000", now, [0; 32]),
        Verdict::Dropped(DropReason::BadChallenge)
    );
}

#[test]
fn requests_are_decoded_strictly_and_unknown_kinds_answered_as_basic() {
    let mut responder = responder(sample_state());
    let now = start();
    let mut sink = ReplySink::new(1400);
    // The challenge reply echoes the family.
    for (request, magic) in [
        (&b"ONEQUERY\x00"[..], &b"ONEREPLY"[..]),
        (b"HYQUERY2\x00", b"HYREPLY2"),
    ] {
        sink.clear();
        assert_eq!(
            responder.handle(client_addr(), request, now, &mut sink),
            Verdict::Answered
        );
        let reply = sink.datagrams().next().unwrap();
        assert_eq!(reply.len(), 48);
        assert_eq!(&reply[..8], magic);
    }
    let (verdict, bytes) = ask(&mut responder, client_addr(), now, 0x07, 0, None);
    assert_eq!(verdict, Verdict::Answered);
    assert!(matches!(
        query_reply(&bytes).payload.as_slice(),
        [Payload::ServerInfo(_)]
    ));

    let token = key().issue(client_addr().ip(), now.wall);
    let full = Request {
        family: Family::OneQuery,
        kind: KIND_BASIC,
        query: Some(Query {
            token,
            request_id: 1,
            flags: RequestFlags::empty(),
            offset: 0,
            auth_token: None,
        }),
    }
    .to_vec()
    .unwrap();
    let malformed = Verdict::Dropped(DropReason::Malformed);
    let missing_token = Verdict::Dropped(DropReason::BadChallenge);
    for (bad, verdict) in [
        (&full[..50], malformed),
        (&full[..41], malformed),
        (&full[..40], missing_token),
        (&full[..9], missing_token),
        (b"HYQUERY2\x02", missing_token),
        (b"ONEQUERY", malformed),
        (b"ONEQUERY\x00\x00", malformed),
        (b"XNEQUERY\x01", malformed),
    ] {
        sink.clear();
        assert_eq!(
            responder.handle(client_addr(), bad, now, &mut sink),
            verdict,
            "{bad:?}"
        );
        assert!(sink.is_empty());
    }
    // A query with the flag of an auth token but no token.
    let mut flagged = full.clone();
    flagged[45] = 1;
    sink.clear();
    assert_eq!(
        responder.handle(client_addr(), &flagged, now, &mut sink),
        Verdict::Dropped(DropReason::Malformed)
    );
}

#[test]
fn network_and_address_flags_follow_the_state() {
    let state = ServerState {
        is_network: true,
        host: None,
        player_count: Some(5000),
        ..sample_state()
    };
    let mut responder = responder(state);
    let (_, bytes) = ask(&mut responder, client_addr(), start(), KIND_BASIC, 0, None);
    let reply = query_reply(&bytes);
    assert_eq!(reply.flags, ReplyFlags::IS_NETWORK);
    let [Payload::ServerInfo(info)] = reply.payload.as_slice() else {
        panic!("{reply:?}");
    };
    assert_eq!((info.player_count, info.host), (5000, None));
}

#[test]
fn long_strings_are_cut_so_every_reply_fits_a_datagram() {
    let huge = "ж".repeat(5000);
    let state = ServerState {
        name: huge.clone(),
        motd: huge.clone(),
        version: huge.clone(),
        protocol_hash: huge.clone(),
        host: Some(huge.clone()),
        port: 1,
        players: (0..10)
            .map(|_| PlayerState {
                name: huge.clone(),
                ..PlayerState::default()
            })
            .collect(),
        ..ServerState::default()
    };
    let mut responder = responder(state);
    let (_, bytes) = ask(&mut responder, client_addr(), start(), KIND_BASIC, 0, None);
    assert!(bytes.len() <= MAX_DATAGRAM, "{}", bytes.len());
    let reply = query_reply(&bytes);
    let [Payload::ServerInfo(info)] = reply.payload.as_slice() else {
        panic!("{reply:?}");
    };
    assert!(huge.starts_with(info.server_name) && info.server_name.len() == 254);
    assert!(huge.starts_with(info.motd) && info.motd.len() == 510);
    let (_, bytes) = ask(
        &mut responder,
        client_addr(),
        start(),
        KIND_PLAYERS,
        0,
        None,
    );
    assert!(bytes.len() <= MAX_DATAGRAM);
    let reply = query_reply(&bytes);
    assert!(page(&reply).count >= 1);
    assert!(reply.flags.contains(ReplyFlags::HAS_MORE_PLAYERS));
}
