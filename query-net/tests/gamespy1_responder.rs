//! The GameSpy v1 responder on its own: sections, combinations, splitting into datagrams,
//! query ids, and what it refuses.

use std::net::SocketAddr;

use query_net::clock::Now;
use query_net::engine::{DropReason, ReplySink, Responder, Verdict};
use query_net::engines::gamespy1::{GameSpy1Config, GameSpy1Responder, MAX_REQUEST};
use query_net::state::{PlayerState, ServerState, SharedState, TeamState};
use query_specs::gamespy1::{Reassembly, Trailer, MAX_DATAGRAM, MAX_PARTS};
use query_wire::kv::{self, FromKeyValues};
use query_wire::TextEncoding;
use rand::{RngExt, SeedableRng};

fn from() -> SocketAddr {
    "192.0.2.7:40000".parse().unwrap()
}

fn players(n: usize) -> Vec<PlayerState> {
    (0..n)
        .map(|i| PlayerState {
            name: format!("Player Number {i}"),
            score: i as i64 * 3 - 20,
            ping: 20 + i as u32,
            team: Some(if i % 2 == 0 { "Red" } else { "Blue" }.into()),
            ..PlayerState::default()
        })
        .collect()
}

fn state() -> ServerState {
    ServerState {
        name: "Åsa's Fort".into(),
        map: "CTF-Face".into(),
        game_type: "CTFGame".into(),
        version: "451".into(),
        max_players: 16,
        port: 7777,
        password: true,
        players: players(2),
        teams: vec![
            TeamState {
                name: "Red".into(),
                score: 3,
            },
            TeamState {
                name: "Blue".into(),
                score: 1,
            },
        ],
        rules: [("timelimit", "15"), ("AdminName", "Ñandú")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.into()))
            .collect(),
        ..ServerState::default()
    }
}

fn config() -> GameSpy1Config {
    GameSpy1Config {
        game_name: "ut".into(),
        ..GameSpy1Config::default()
    }
}

struct Harness {
    responder: GameSpy1Responder,
    shared: SharedState,
    sink: ReplySink,
}

impl Harness {
    fn new(state: ServerState, config: GameSpy1Config) -> Self {
        let shared = SharedState::new(state);
        Harness {
            responder: GameSpy1Responder::new(shared.clone(), config),
            shared,
            sink: ReplySink::default(),
        }
    }

    fn send(&mut self, datagram: &[u8]) -> (Verdict, Vec<Vec<u8>>) {
        self.sink.clear();
        let verdict = self
            .responder
            .handle(from(), datagram, Now::system(), &mut self.sink);
        (verdict, self.sink.datagrams().map(<[u8]>::to_vec).collect())
    }

    /// The reply to `request` as one text, trailers removed, after checking them.
    fn text(&mut self, request: &[u8]) -> Vec<u8> {
        let (verdict, replies) = self.send(request);
        assert_eq!(verdict, Verdict::Answered);
        let mut out = Vec::new();
        for (i, datagram) in replies.iter().enumerate() {
            let pairs = kv::split_pairs(datagram).unwrap();
            let trailer = Trailer::from_pairs(&pairs, None, TextEncoding::Windows1252).unwrap();
            let id = trailer.query_id.unwrap();
            assert_eq!(id.part as usize, i + 1);
            assert_eq!(trailer.is_final, i + 1 == replies.len());
            for pair in pairs {
                if pair.key != b"queryid" && pair.key != b"final" {
                    out.extend_from_slice(b"\\");
                    out.extend_from_slice(pair.key);
                    out.extend_from_slice(b"\\");
                    out.extend_from_slice(pair.value);
                }
            }
        }
        out
    }
}

#[test]
fn each_section_on_its_own() {
    let mut h = Harness::new(state(), config());
    assert_eq!(h.text(b"\\basic\\"), b"\\gamename\\ut\\gamever\\451");
    assert_eq!(
        h.text(b"\\info\\"),
        b"\\hostname\\\xc5sa's Fort\\hostport\\7777\\mapname\\CTF-Face\\gametype\\CTFGame\
          \\numplayers\\2\\maxplayers\\16"
    );
    assert_eq!(
        h.text(b"\\rules\\"),
        b"\\password\\1\\timelimit\\15\\AdminName\\\xd1and\xfa"
    );
    let teams = b"\\teamname_0\\Red\\teamscore_0\\3\\teamname_1\\Blue\\teamscore_1\\1";
    assert_eq!(h.text(b"\\teams\\"), teams);
    let mut players = b"\\player_0\\Player Number 0\\frags_0\\-20\\ping_0\\20\\team_0\\0\
                        \\player_1\\Player Number 1\\frags_1\\-17\\ping_1\\21\\team_1\\1"
        .to_vec();
    players.extend_from_slice(teams);
    assert_eq!(h.text(b"\\players\\"), players);
}

#[test]
fn combined_requests_come_back_in_server_order_with_the_echo_last() {
    let mut h = Harness::new(state(), config());
    let info = h.text(b"\\info\\");
    let rules = h.text(b"\\rules\\");
    let basic = h.text(b"\\basic\\");
    let players = h.text(b"\\players\\");
    assert_eq!(h.text(b"\\rules\\\\info\\"), [&info[..], &rules].concat());
    assert_eq!(
        h.text(b"\\echo\\ping me\\players\\\\info\\"),
        [&info[..], &players, b"\\echo\\ping me"].concat()
    );
    let status = [&basic[..], &info, &rules, &players].concat();
    assert_eq!(h.text(b"\\status\\"), status);
    assert_eq!(h.text(b"\\status\\xserverquery"), status);
    assert_eq!(h.text(b"\\info\\\\info\\"), info, "asked twice, sent once");
    assert_eq!(
        h.text(b"\\ison\\x\\info\\"),
        info,
        "unknown queries are skipped"
    );
    // The echo comes back as the bytes it came in.
    assert_eq!(h.text(b"\\echo\\\xff\xe9"), b"\\echo\\\xff\xe9");
}

#[test]
fn a_large_reply_is_split_into_datagrams_of_at_most_1400_bytes() {
    let mut h = Harness::new(
        ServerState {
            players: players(60),
            ..state()
        },
        config(),
    );
    let (verdict, replies) = h.send(b"\\status\\");
    assert_eq!(verdict, Verdict::Answered);
    assert!(replies.len() >= 3, "{} datagrams", replies.len());
    let mut parts = Reassembly::new();
    for datagram in &replies {
        assert!(datagram.len() <= MAX_DATAGRAM, "{}", datagram.len());
        parts.push(datagram).unwrap();
    }
    let assembled = parts.reply().unwrap();
    assert!(assembled.complete);
    assert_eq!(assembled.query_id, Some(1));
    let reply = assembled.reply;
    assert_eq!(reply.num_players, Some(60));
    assert_eq!(reply.players.len(), 60);
    assert_eq!(reply.players[59].name.as_deref(), Some("Player Number 59"));
    assert_eq!(reply.players[59].ping, Some(79));
    assert_eq!(reply.teams.len(), 2);

    // A smaller cap on the service side is honoured too.
    let mut small = ReplySink::new(600);
    h.responder
        .handle(from(), b"\\players\\", Now::system(), &mut small);
    assert!(small.len() > replies.len());
    assert!(small.datagrams().all(|d| d.len() <= 600));

    // So small that the whole reply would take more parts than clients accept: what fits
    // goes, cut between pairs, and still ends with `\final\`.
    let mut tiny = ReplySink::new(64);
    h.responder
        .handle(from(), b"\\status\\", Now::system(), &mut tiny);
    assert!(tiny.len() <= MAX_PARTS as usize, "{} parts", tiny.len());
    assert!(tiny.len() > 40, "{} parts", tiny.len());
    let mut parts = Reassembly::new();
    for datagram in tiny.datagrams() {
        assert!(datagram.len() <= 64);
        parts.push(datagram).unwrap();
    }
    assert!(parts.is_complete());
    let reply = parts.reply().unwrap().reply;
    assert_eq!(reply.num_players, Some(60));
    assert!(!reply.players.is_empty() && reply.players.len() < 60);
    assert!(reply
        .players
        .iter()
        .all(|p| p.name.is_some() || p.index == reply.players.len() - 1));
}

#[test]
fn the_query_id_counts_up_per_request() {
    let mut h = Harness::new(state(), config());
    let mut ids = Vec::new();
    for request in [&b"\\info\\"[..], b"\\status\\", b"\\basic\\"] {
        let (_, replies) = h.send(request);
        let pairs = kv::split_pairs(&replies[0]).unwrap();
        let trailer = Trailer::from_pairs(&pairs, None, TextEncoding::Windows1252).unwrap();
        ids.push(trailer.query_id.unwrap().id);
    }
    assert_eq!(ids, [1, 2, 3]);
    assert_eq!(h.responder.next_query_id(), 4);
    // A dropped request does not use an id.
    h.send(b"garbage");
    assert_eq!(h.responder.next_query_id(), 4);
}

#[test]
fn what_the_format_cannot_carry_is_replaced_and_rules_that_would_come_back_wrong_are_left_out() {
    let mut state = state();
    state.name = "back\\slash Ж".into();
    state.players[0].name = "\\final\\".into();
    for key in ["hostname", "queryid", "final", "player_0", "", "numplayers"] {
        state.rules.insert(key.into(), "x".into());
    }
    state
        .rules
        .insert("gravity".into(), query_net::state::RuleValue::Float(9.81));
    let mut h = Harness::new(state, config());
    let text = h.text(b"\\status\\");
    let mut parts = Reassembly::new();
    let (_, replies) = h.send(b"\\status\\");
    for datagram in &replies {
        parts.push(datagram).unwrap();
    }
    assert!(parts.is_complete());
    let reply = parts.reply().unwrap().reply;
    assert_eq!(reply.hostname.as_deref(), Some("back?slash ?"));
    assert_eq!(reply.players[0].name.as_deref(), Some("?final?"));
    let rule_keys: Vec<_> = reply.rules.iter().map(|(k, _)| k.as_ref()).collect();
    assert_eq!(rule_keys, ["timelimit", "AdminName", "gravity"]);
    assert_eq!(reply.rule("gravity"), Some("9.81"));
    assert!(!text.windows(7).any(|w| w == b"\\final\\"));
}

#[test]
fn garbage_truncated_and_oversized_requests_are_dropped() {
    let mut h = Harness::new(state(), config());
    for bad in [
        &b""[..],
        b"status",
        b"\\status",
        b"\\info\\\\rules",
        b"SAMP\x7f\x00\x00\x01a\x1ei",
    ] {
        assert_eq!(
            h.send(bad),
            (Verdict::Dropped(DropReason::Malformed), vec![]),
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
    let mut oversized = b"\\echo\\".to_vec();
    oversized.resize(MAX_REQUEST + 1, b'x');
    assert_eq!(
        h.send(&oversized).0,
        Verdict::Dropped(DropReason::Malformed)
    );
    oversized.truncate(MAX_REQUEST);
    assert_eq!(h.send(&oversized).0, Verdict::Answered);
    assert_eq!(
        h.send(b"\\ison\\x\\ucount\\"),
        (Verdict::Dropped(DropReason::Unsupported), vec![])
    );

    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    for i in 0..5000 {
        let len = rng.random_range(0..80);
        let mut datagram: Vec<u8> = (0..len)
            .map(|_| {
                // Mostly backslashes and letters, to reach past the first check.
                match rng.random_range(0..4) {
                    0 => b'\\',
                    1 => rng.random(),
                    _ => rng.random_range(b'a'..=b'z'),
                }
            })
            .collect();
        if i % 3 == 0 {
            datagram.splice(0..0, b"\\status\\".iter().copied());
        }
        let (verdict, replies) = h.send(&datagram);
        assert_eq!(verdict == Verdict::Answered, !replies.is_empty());
        for reply in replies {
            assert!(reply.len() <= MAX_DATAGRAM);
        }
    }
}

#[test]
fn a_state_update_shows_in_the_next_reply() {
    let mut h = Harness::new(state(), config());
    let before = h.text(b"\\info\\");
    assert_eq!(h.text(b"\\info\\"), before);
    h.shared.update(|s| s.name = "Renamed".into());
    let after = h.text(b"\\info\\");
    assert!(after.starts_with(b"\\hostname\\Renamed\\"), "{after:?}");
}

#[test]
fn empty_fields_are_not_sent() {
    let mut h = Harness::new(ServerState::default(), GameSpy1Config::default());
    assert_eq!(h.text(b"\\basic\\"), b"");
    assert_eq!(
        h.text(b"\\info\\"),
        b"\\hostname\\\\numplayers\\0\\maxplayers\\0"
    );
    assert_eq!(h.text(b"\\players\\"), b"");
    let (_, replies) = h.send(b"\\basic\\");
    assert_eq!(replies, [b"\\queryid\\4.1\\final\\".to_vec()]);
}
