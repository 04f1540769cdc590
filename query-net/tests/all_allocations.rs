//! The responders answer from the borrowed state straight into the reply buffer: once the
//! buffer has grown to its working size, a reply allocates nothing. Measured with
//! `allocation-counter`, which counts the allocations of the measuring thread in this test
//! binary only.

use std::net::SocketAddr;
use std::time::{Duration, Instant, UNIX_EPOCH};

use query_net::clock::Now;
use query_net::engine::{ReplySink, Responder, Verdict};
use query_net::engines::a2s::{A2sConfig, A2sResponder};
use query_net::engines::all::AllProtocols;
use query_net::engines::onequery::token::TokenKey;
use query_net::engines::onequery::OneQueryResponder;
use query_net::engines::quake3::{Quake3Config, Quake3Responder};
use query_net::engines::sqp::SqpResponder;
use query_net::state::{PlayerState, RuleValue, ServerState, SharedState, TeamState};
use query_specs::a2s::{
    Challenge, InfoRequest, Reply as A2sReply, Request as A2sRequest, INFO_PAYLOAD,
};
use query_specs::onequery::{Family, Query, Request as OneRequest, RequestFlags};
use query_specs::sqp::{ChunkSet, QueryRequest, Request as SqpRequest};
use query_wire::{Decode, Encode, Uuid};

fn allocations(f: impl FnOnce()) -> u64 {
    allocation_counter::measure(f).count_total
}

fn state() -> SharedState {
    SharedState::new(ServerState {
        name: "Zählung 计数".to_owned(),
        map: "map".to_owned(),
        version: "1".to_owned(),
        motd: "hello".to_owned(),
        max_players: 500,
        port: 7777,
        host: Some("play.example.com".to_owned()),
        players: (0..300)
            .map(|i| PlayerState {
                name: format!("spieler {i}"),
                score: i - 10,
                ping: 40,
                uuid: Some(Uuid::from_u128(i as u128)),
                team: (i % 2 == 0).then(|| "rot".to_owned()),
                ..PlayerState::default()
            })
            .collect(),
        teams: vec![TeamState {
            name: "rot".to_owned(),
            score: -3,
        }],
        rules: [
            ("a".to_owned(), RuleValue::Integer(-1)),
            ("b".to_owned(), RuleValue::Float(0.5)),
            ("c".to_owned(), RuleValue::Bool(true)),
            ("d".to_owned(), RuleValue::Text("text".to_owned())),
        ]
        .into_iter()
        .collect(),
        ..ServerState::default()
    })
}

fn now() -> Now {
    Now {
        instant: Instant::now(),
        wall: UNIX_EPOCH + Duration::from_secs(1_740_000_000),
    }
}

fn client() -> SocketAddr {
    "127.0.0.1:40000".parse().unwrap()
}

#[test]
fn the_counter_sees_allocations() {
    // Without this, a counter that was never installed would make every test below pass.
    let count = allocations(|| drop(std::hint::black_box(vec![1u8; 16])));
    assert_eq!(count, 1);
}

/// Challenge then full query, `rounds` times; returns how many replies were answered.
fn sqp_rounds(responder: &mut impl Responder, sink: &mut ReplySink, rounds: usize) -> usize {
    let now = now();
    let mut query = [0u8; 8];
    let mut answered = 0;
    for _ in 0..rounds {
        sink.clear();
        assert_eq!(
            responder.handle(client(), &[0; 5], now, sink),
            Verdict::Answered
        );
        let challenge = {
            let reply = sink.datagrams().next().unwrap_or_default();
            u32::from_be_bytes([reply[1], reply[2], reply[3], reply[4]])
        };
        let request = SqpRequest::Query(QueryRequest {
            challenge,
            version: 1,
            requested: ChunkSet::all(),
        });
        request.encode_into(&mut query).unwrap();
        sink.clear();
        if responder.handle(client(), &query, now, sink) == Verdict::Answered {
            answered += 1;
        }
    }
    answered
}

#[test]
fn sqp_replies_allocate_nothing() {
    let mut responder = SqpResponder::new(state());
    let mut sink = ReplySink::new(1400);
    assert_eq!(sqp_rounds(&mut responder, &mut sink, 10), 10);
    let mut answered = 0;
    let count = allocations(|| answered = sqp_rounds(&mut responder, &mut sink, 1000));
    assert_eq!(answered, 1000);
    assert_eq!(count, 0, "{count} allocations for 1000 SQP queries");
}

/// A challenge, a BASIC query and every PLAYERS page, `rounds` times.
fn onequery_rounds(
    responder: &mut impl Responder,
    sink: &mut ReplySink,
    requests: &[Vec<u8>],
    rounds: usize,
) -> usize {
    let now = now();
    let mut answered = 0;
    for _ in 0..rounds {
        for request in requests {
            sink.clear();
            if responder.handle(client(), request, now, sink) == Verdict::Answered {
                answered += 1;
            }
        }
    }
    answered
}

fn onequery_requests(key: &TokenKey) -> Vec<Vec<u8>> {
    let token = key.issue(client().ip(), now().wall);
    let query = |kind, offset| {
        OneRequest {
            family: Family::OneQuery,
            kind,
            query: Some(Query {
                token,
                request_id: 7,
                flags: RequestFlags::empty(),
                offset,
                auth_token: None,
            }),
        }
        .to_vec()
        .unwrap()
    };
    let mut requests = vec![b"ONEQUERY\x00".to_vec(), query(1, 0)];
    // 300 players of about 30 bytes: pages start every few dozen players.
    requests.extend((0..300).step_by(40).map(|offset| query(2, offset)));
    requests
}

#[test]
fn onequery_replies_allocate_nothing() {
    let key = TokenKey::from_secret(&[3; 32]);
    let mut responder = OneQueryResponder::new(state()).with_key(key.clone());
    let requests = onequery_requests(&key);
    let mut sink = ReplySink::new(1400);
    let per_round = requests.len();
    assert_eq!(
        onequery_rounds(&mut responder, &mut sink, &requests, 5),
        5 * per_round
    );
    let mut answered = 0;
    let count = allocations(|| {
        answered = onequery_rounds(&mut responder, &mut sink, &requests, 200);
    });
    assert_eq!(answered, 200 * per_round);
    assert_eq!(
        count, 0,
        "{count} allocations for {answered} OneQuery replies"
    );
}

/// INFO without a challenge, then INFO, PLAYER (in Source parts: 255 rows of 300) and RULES
/// with the challenge it got, `rounds` times; returns how many were answered with what they
/// asked for, and how many datagrams came back.
fn a2s_rounds(
    responder: &mut impl Responder,
    sink: &mut ReplySink,
    rounds: usize,
) -> (usize, usize) {
    let now = now();
    let mut buf = [0u8; 32];
    let (mut answered, mut datagrams) = (0, 0);
    let mut ask = |request: &A2sRequest<'_>, sink: &mut ReplySink| {
        let len = request.encode_into(&mut buf).unwrap();
        sink.clear();
        let verdict = responder.handle(client(), &buf[..len], now, sink);
        datagrams += sink.len();
        verdict == Verdict::Answered
    };
    for _ in 0..rounds {
        let info = |challenge| {
            A2sRequest::Info(InfoRequest {
                payload: INFO_PAYLOAD,
                challenge,
            })
        };
        assert!(ask(&info(None), sink));
        let reply = sink.datagrams().next().unwrap_or_default();
        let Ok(A2sReply::Challenge(Challenge { challenge })) = A2sReply::from_bytes_with(reply, 0)
        else {
            panic!("not a challenge: {reply:?}");
        };
        let proof = Challenge { challenge };
        for request in [
            info(Some(challenge)),
            A2sRequest::Players(proof),
            A2sRequest::Rules(proof),
        ] {
            let challenged = |d: &[u8]| d.starts_with(b"\xff\xff\xff\xffA");
            if ask(&request, sink) && !sink.datagrams().any(challenged) {
                answered += 1;
            }
        }
    }
    (answered, datagrams)
}

#[test]
fn a2s_replies_allocate_nothing() {
    let mut responder = A2sResponder::new(state(), A2sConfig::default());
    let mut sink = ReplySink::default();
    assert_eq!(a2s_rounds(&mut responder, &mut sink, 5).0, 15);
    let (mut answered, mut datagrams) = (0, 0);
    let count = allocations(|| (answered, datagrams) = a2s_rounds(&mut responder, &mut sink, 500));
    assert_eq!(answered, 1500);
    // The challenge, INFO, RULES, and PLAYER in several parts.
    assert!(datagrams > 500 * 5, "{datagrams} datagrams");
    assert_eq!(count, 0, "{count} allocations for {answered} A2S replies");
}

#[test]
fn routing_adds_no_allocation() {
    let key = TokenKey::from_secret(&[4; 32]);
    let shared = state();
    let mut all = AllProtocols::new(shared.clone())
        .with_onequery(OneQueryResponder::new(shared).with_key(key.clone()));
    let requests = onequery_requests(&key);
    let mut sink = ReplySink::new(1400);
    sqp_rounds(&mut all, &mut sink, 10);
    onequery_rounds(&mut all, &mut sink, &requests, 5);
    a2s_rounds(&mut all, &mut sink, 5);
    let count = allocations(|| {
        sqp_rounds(&mut all, &mut sink, 200);
        onequery_rounds(&mut all, &mut sink, &requests, 50);
        assert_eq!(a2s_rounds(&mut all, &mut sink, 50).0, 150);
    });
    assert_eq!(count, 0, "{count} allocations through the router");
}

#[test]
fn the_service_limits_and_byte_budgets_add_no_allocation() {
    use query_net::engines::samp::SampResponder;
    use query_net::limit::{ByteRate, ReplyBudget};
    use query_net::service::Service;
    use query_specs::samp::{Header, Request as SampRequest, RequestBody};
    // SA:MP has no challenge: every reply is charged to the byte budget. The flood comes
    // from a few sources of one netblock, so after the first round every bucket exists.
    let budget = ReplyBudget {
        netblock: ByteRate {
            per_second: std::num::NonZeroU32::new(1000).unwrap(),
            burst: 1000,
        },
        ..ReplyBudget::default()
    };
    let mut service =
        Service::new(SampResponder::new(state(), Default::default())).reply_budget(Some(budget));
    let request = SampRequest {
        header: Header {
            address: [127, 0, 0, 1],
            port: 7777,
            opcode: b'r',
        },
        body: RequestBody::Rules,
    }
    .to_vec()
    .unwrap();
    let sources: Vec<SocketAddr> = (1..=8)
        .map(|i| SocketAddr::from(([127, 0, 5, i], 40000)))
        .collect();
    let round = |service: &mut Service<SampResponder>| {
        let mut datagrams = 0;
        for &source in &sources {
            datagrams += service.handle(source, &request).count();
        }
        datagrams
    };
    assert!(round(&mut service) > 0);
    let count = allocations(|| {
        for _ in 0..100 {
            round(&mut service);
        }
    });
    let stats = service.stats().snapshot();
    assert!(stats.dropped_netblock_budget > 0, "{stats:?}");
    assert!(stats.dropped_rate_limited > 0, "{stats:?}");
    assert_eq!(count, 0, "{count} allocations for {stats:?}");
}

#[test]
fn gamespy1_replies_allocate_nothing() {
    use query_net::engines::gamespy1::GameSpy1Responder;
    let mut responder = GameSpy1Responder::new(state(), Default::default());
    let mut sink = ReplySink::new(1400);
    let ask = |responder: &mut GameSpy1Responder, sink: &mut ReplySink| {
        let mut datagrams = 0;
        for request in [
            &b"\\status\\"[..],
            b"\\basic\\\\info\\",
            b"\\players\\\\echo\\x",
        ] {
            sink.clear();
            let verdict = responder.handle(client(), request, now(), sink);
            assert_eq!(verdict, Verdict::Answered);
            datagrams += sink.len();
        }
        datagrams
    };
    ask(&mut responder, &mut sink);
    let mut datagrams = 0;
    let count = allocations(|| {
        for _ in 0..100 {
            datagrams += ask(&mut responder, &mut sink);
        }
    });
    // The players alone take several parts.
    assert!(datagrams > 100 * 5, "{datagrams} datagrams");
    assert_eq!(count, 0, "{count} allocations for 300 GameSpy v1 replies");
}

#[test]
fn gamespy2_replies_allocate_nothing() {
    use query_net::engines::gamespy2::GameSpy2Responder;
    let mut responder = GameSpy2Responder::new(state(), Default::default());
    let mut sink = ReplySink::new(1400);
    let ask = |responder: &mut GameSpy2Responder, sink: &mut ReplySink| {
        let mut bytes = 0;
        for request in [
            &b"\xfe\xfd\x00CORY\xff\xff\xff"[..],
            b"\xfe\xfd\x00CORY\xff\x00\x00",
            b"\xfe\xfd\x00CORX\x00\xff\xff",
        ] {
            sink.clear();
            let verdict = responder.handle(client(), request, now(), sink);
            assert_eq!(verdict, Verdict::Answered);
            assert_eq!(sink.len(), 1);
            bytes += sink.total_bytes();
        }
        bytes
    };
    ask(&mut responder, &mut sink);
    let mut bytes = 0;
    let count = allocations(|| {
        for _ in 0..100 {
            bytes += ask(&mut responder, &mut sink);
        }
    });
    assert!(bytes > 100 * 1400, "{bytes} bytes");
    assert_eq!(count, 0, "{count} allocations for 300 GameSpy 2 replies");
}

/// `getstatus` (300 players: several datagrams) and `getinfo`, with and without a challenge
/// to echo, `rounds` times; returns how many were answered and the datagrams sent.
fn quake3_rounds(
    responder: &mut impl Responder,
    sink: &mut ReplySink,
    rounds: usize,
) -> (usize, usize) {
    let now = now();
    let (mut answered, mut datagrams) = (0, 0);
    for _ in 0..rounds {
        for request in [
            &b"\xff\xff\xff\xffgetstatus\n"[..],
            b"\xff\xff\xff\xffgetstatus 12345\n",
            b"\xff\xff\xff\xffgetinfo xyz\n",
            b"\xff\xff\xff\xffgetinfo\0",
        ] {
            sink.clear();
            if responder.handle(client(), request, now, sink) == Verdict::Answered {
                answered += 1;
            }
            datagrams += sink.len();
        }
    }
    (answered, datagrams)
}

#[test]
fn quake3_replies_allocate_nothing() {
    let mut responder = Quake3Responder::new(state(), Quake3Config::default());
    let mut sink = ReplySink::default();
    assert_eq!(quake3_rounds(&mut responder, &mut sink, 5).0, 20);
    let (mut answered, mut datagrams) = (0, 0);
    let count =
        allocations(|| (answered, datagrams) = quake3_rounds(&mut responder, &mut sink, 500));
    assert_eq!(answered, 2000);
    // Two split status replies and two single info replies a round.
    assert!(datagrams >= 500 * 6, "{datagrams} datagrams");
    assert_eq!(
        count, 0,
        "{count} allocations for {answered} Quake 3 replies"
    );
}

/// A GameSpy 3 challenge request, then the query with the challenge it got, `rounds` times;
/// returns how many queries were answered with parts, and how many parts came back.
fn gamespy3_rounds(
    responder: &mut impl Responder,
    sink: &mut ReplySink,
    rounds: usize,
) -> (usize, usize) {
    use query_specs::gamespy3::{
        ChallengeReply, ChallengeRequest, QueryRequest, Request as Gs3Request, FLAGS_SPLIT,
    };
    let now = now();
    let mut buf = [0u8; 16];
    let (mut answered, mut parts) = (0, 0);
    for round in 0..rounds {
        let session_id = round as u32;
        let len = Gs3Request::Challenge(ChallengeRequest {
            session_id,
            padding: None,
        })
        .encode_into(&mut buf)
        .unwrap();
        sink.clear();
        assert_eq!(
            responder.handle(client(), &buf[..len], now, sink),
            Verdict::Answered
        );
        let reply = sink.datagrams().next().unwrap_or_default();
        let challenge = ChallengeReply::from_bytes(reply)
            .and_then(|r| r.challenge())
            .unwrap();
        let query = Gs3Request::Query(QueryRequest::new(session_id, challenge, FLAGS_SPLIT));
        let len = query.encode_into(&mut buf).unwrap();
        sink.clear();
        if responder.handle(client(), &buf[..len], now, sink) == Verdict::Answered
            && sink.datagrams().all(|d| d.first() == Some(&0))
        {
            answered += 1;
            parts += sink.len();
        }
    }
    (answered, parts)
}

#[test]
fn gamespy3_replies_allocate_nothing() {
    use query_net::engines::gamespy3::{GameSpy3Config, GameSpy3Responder};
    let mut responder = GameSpy3Responder::new(state(), GameSpy3Config::default());
    let mut sink = ReplySink::default();
    assert_eq!(gamespy3_rounds(&mut responder, &mut sink, 5).0, 5);
    let (mut answered, mut parts) = (0, 0);
    let count = allocations(|| (answered, parts) = gamespy3_rounds(&mut responder, &mut sink, 500));
    assert_eq!(answered, 500);
    // The state's players and rules take several 1400-byte parts.
    assert!(parts > 500 * 2, "{parts} parts");
    assert_eq!(
        count, 0,
        "{count} allocations for {answered} GameSpy 3 replies"
    );
}
