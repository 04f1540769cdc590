//! The SA:MP responder on its own: which requests it answers, at which exact sizes, with what
//! bytes, and that nothing it is sent makes it panic or answer out of turn.

use std::net::SocketAddr;

use query_net::clock::Now;
use query_net::engine::{DropReason, ReplySink, Responder, Verdict};
use query_net::engines::samp::{
    OpenMpInfo, SampConfig, SampResponder, BAD_RCON_PASSWORD, MAX_GAMEMODE, MAX_HOSTNAME,
    MAX_LANGUAGE,
};
use query_net::state::{PlayerState, ServerState, SharedState};
use query_specs::samp::{Header, Reply, ReplyBody, Request, RequestBody};
use query_wire::{Decode, Encode, Text, TextEncoding};
use rand::{RngExt, SeedableRng};

fn from() -> SocketAddr {
    "192.0.2.7:40000".parse().unwrap()
}

fn header(opcode: u8) -> Header {
    Header {
        address: [203, 0, 113, 9],
        port: 7777,
        opcode,
    }
}

fn request(body: RequestBody<'_>) -> Vec<u8> {
    let opcode = match &body {
        RequestBody::Info => b'i',
        RequestBody::Rules => b'r',
        RequestBody::Clients => b'c',
        RequestBody::Players => b'd',
        RequestBody::Ping(_) => b'p',
        RequestBody::Extra => b'o',
        RequestBody::Rcon { .. } => b'x',
    };
    Request {
        header: header(opcode),
        body,
    }
    .to_vec()
    .unwrap()
}

fn players(n: usize) -> Vec<PlayerState> {
    (0..n)
        .map(|i| PlayerState {
            name: format!("player{i}"),
            score: i as i64,
            ping: 30,
            ..PlayerState::default()
        })
        .collect()
}

fn state() -> ServerState {
    ServerState {
        name: "Jürgen's Roleplay".into(),
        game_type: "RP".into(),
        language: "Deutsch".into(),
        map: "San Fierro".into(),
        version: "0.3.7-R2".into(),
        max_players: 100,
        players: players(3),
        ..ServerState::default()
    }
}

struct Harness {
    responder: SampResponder,
    shared: SharedState,
    sink: ReplySink,
}

impl Harness {
    fn new(state: ServerState, config: SampConfig) -> Self {
        let shared = SharedState::new(state);
        Harness {
            responder: SampResponder::new(shared.clone(), config),
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

    /// The single reply to `datagram`, decoded and checked to copy the request's header.
    fn reply(&mut self, datagram: &[u8]) -> Vec<u8> {
        let (verdict, replies) = self.send(datagram);
        assert_eq!(verdict, Verdict::Answered);
        assert_eq!(replies.len(), 1);
        assert_eq!(replies[0][..11], datagram[..11], "header copied");
        replies.into_iter().next().unwrap()
    }
}

#[test]
fn info_rules_and_lists_carry_the_state() {
    let mut h = Harness::new(state(), SampConfig::default());
    let bytes = h.reply(&request(RequestBody::Info));
    let ReplyBody::Info(info) = Reply::from_bytes(&bytes).unwrap().body else {
        panic!("not info");
    };
    assert!(!info.password);
    assert_eq!((info.players, info.max_players), (3, 100));
    assert_eq!(info.hostname.as_bytes(), b"J\xfcrgen's Roleplay");
    assert_eq!(info.gamemode.as_bytes(), b"RP");
    assert_eq!(info.language.as_bytes(), b"Deutsch");

    let bytes = h.reply(&request(RequestBody::Rules));
    let ReplyBody::Rules(rules) = Reply::from_bytes(&bytes).unwrap().body else {
        panic!("not rules");
    };
    let rules: Vec<_> = rules
        .iter()
        .map(|r| (r.name.as_bytes().to_vec(), r.value.as_bytes().to_vec()))
        .collect();
    assert_eq!(
        rules,
        [
            (b"mapname".to_vec(), b"San Fierro".to_vec()),
            (b"version".to_vec(), b"0.3.7-R2".to_vec())
        ]
    );

    let bytes = h.reply(&request(RequestBody::Players));
    let ReplyBody::Players(list) = Reply::from_bytes(&bytes).unwrap().body else {
        panic!("not players");
    };
    let ids: Vec<u8> = list.iter().map(|p| p.id).collect();
    assert_eq!(ids, [0, 1, 2], "list positions when the state gives no id");
    assert_eq!(list[2].name.as_bytes(), b"player2");
    assert_eq!((list[2].score, list[2].ping), (2, 30));

    let bytes = h.reply(&request(RequestBody::Clients));
    let ReplyBody::Clients(list) = Reply::from_bytes(&bytes).unwrap().body else {
        panic!("not clients");
    };
    assert_eq!(list.len(), 3);
    assert_eq!(list[1].name.as_bytes(), b"player1");

    let ping = request(RequestBody::Ping(*b"\x01\xfe\x7f\x00"));
    assert_eq!(h.reply(&ping), ping, "ping is echoed whole");
}

#[test]
fn requests_of_any_other_size_are_dropped_as_malformed() {
    let mut h = Harness::new(state(), SampConfig::default());
    for opcode in *b"ircdo" {
        let mut datagram = header(opcode).to_vec().unwrap();
        datagram.push(0);
        assert_eq!(
            h.send(&datagram),
            (Verdict::Dropped(DropReason::Malformed), vec![]),
            "12-byte {}",
            opcode as char
        );
        assert_eq!(
            h.send(&datagram[..10]),
            (Verdict::Dropped(DropReason::Malformed), vec![])
        );
    }
    let ping = request(RequestBody::Ping([1, 2, 3, 4]));
    for len in [11, 14] {
        assert_eq!(
            h.send(&ping[..len]).0,
            Verdict::Dropped(DropReason::Malformed)
        );
    }
    let mut long = ping.clone();
    long.push(5);
    assert_eq!(h.send(&long).0, Verdict::Dropped(DropReason::Malformed));
    // Not SAMP, unknown opcode, empty.
    let mut other = request(RequestBody::Info);
    other[0] = b'X';
    assert_eq!(h.send(&other).0, Verdict::Dropped(DropReason::Malformed));
    other = request(RequestBody::Info);
    other[10] = b'z';
    assert_eq!(h.send(&other).0, Verdict::Dropped(DropReason::Malformed));
    assert_eq!(h.send(b"").0, Verdict::Dropped(DropReason::Malformed));
}

#[test]
fn garbage_and_every_truncation_are_dropped_without_panicking() {
    let mut h = Harness::new(
        state(),
        SampConfig {
            rcon_password: Some("pw".into()),
            open_mp: Some(OpenMpInfo::default()),
            ..SampConfig::default()
        },
    );
    let valid = [
        request(RequestBody::Info),
        request(RequestBody::Ping([9; 4])),
        request(RequestBody::Rcon {
            password: Text::from("pw"),
            command: Text::from("echo hi"),
        }),
    ];
    for datagram in &valid {
        for len in 0..datagram.len() {
            let (verdict, replies) = h.send(&datagram[..len]);
            assert_eq!(verdict, Verdict::Dropped(DropReason::Malformed), "{len}");
            assert!(replies.is_empty());
        }
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut answered = 0;
    for i in 0..5000 {
        let len = rng.random_range(0..64);
        let mut datagram: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        // Half of them start like a real request, to get past the magic.
        if i % 2 == 0 && len >= 11 {
            datagram[..4].copy_from_slice(b"SAMP");
        }
        let (verdict, replies) = h.send(&datagram);
        if verdict == Verdict::Answered {
            answered += 1;
            assert!(!replies.is_empty());
        } else {
            assert!(replies.is_empty());
        }
    }
    // Random bytes rarely form a request of exactly the right size.
    assert!(answered < 50, "{answered}");
    let huge = vec![b'S'; 70_000];
    assert_eq!(h.send(&huge).0, Verdict::Dropped(DropReason::Malformed));
}

#[test]
fn lists_are_not_answered_above_100_players() {
    let mut h = Harness::new(
        ServerState {
            players: players(101),
            ..state()
        },
        SampConfig::default(),
    );
    for body in [RequestBody::Clients, RequestBody::Players] {
        assert_eq!(
            h.send(&request(body)),
            (Verdict::Dropped(DropReason::Declined), vec![])
        );
    }
    // The count the state reports decides, not the length of its list.
    h.shared.update(|s| {
        s.players = players(100);
        s.player_count = None;
    });
    assert_eq!(h.send(&request(RequestBody::Clients)).0, Verdict::Answered);
    h.shared.update(|s| s.player_count = Some(250));
    assert_eq!(
        h.send(&request(RequestBody::Players)).0,
        Verdict::Dropped(DropReason::Declined)
    );
}

#[test]
fn open_mp_style_answers_o_and_not_d() {
    let extra = OpenMpInfo {
        discord: "discord.gg/abc".into(),
        light_banner: "https://example.com/l.png".into(),
        dark_banner: String::new(),
        logo: "https://example.com/logo.png".into(),
    };
    let mut samp = Harness::new(state(), SampConfig::default());
    assert_eq!(
        samp.send(&request(RequestBody::Extra)),
        (Verdict::Dropped(DropReason::Declined), vec![])
    );
    let mut omp = Harness::new(state(), SampConfig::open_mp(extra));
    assert_eq!(
        omp.send(&request(RequestBody::Players)).0,
        Verdict::Dropped(DropReason::Declined)
    );
    let bytes = omp.reply(&request(RequestBody::Extra));
    let ReplyBody::Extra(o) = Reply::from_bytes(&bytes).unwrap().body else {
        panic!("not o");
    };
    assert_eq!(o.discord.as_bytes(), b"discord.gg/abc");
    assert_eq!(o.dark_banner.as_bytes(), b"");
    assert_eq!(o.logo.as_bytes(), b"https://example.com/logo.png");
}

#[test]
fn info_strings_are_cut_like_open_mp_and_unmappable_characters_become_question_marks() {
    let mut h = Harness::new(
        ServerState {
            name: "Ж".repeat(100),
            game_type: "g".repeat(100),
            language: "é".repeat(100),
            players: vec![PlayerState {
                name: "Игрок€".into(),
                ..PlayerState::default()
            }],
            ..state()
        },
        SampConfig::default(),
    );
    let bytes = h.reply(&request(RequestBody::Info));
    let ReplyBody::Info(info) = Reply::from_bytes(&bytes).unwrap().body else {
        panic!("not info");
    };
    assert_eq!(info.hostname.as_bytes(), vec![b'?'; MAX_HOSTNAME]);
    assert_eq!(info.gamemode.as_bytes(), vec![b'g'; MAX_GAMEMODE]);
    assert_eq!(info.language.as_bytes(), vec![0xe9; MAX_LANGUAGE]);
    let bytes = h.reply(&request(RequestBody::Clients));
    let ReplyBody::Clients(list) = Reply::from_bytes(&bytes).unwrap().body else {
        panic!("not clients");
    };
    assert_eq!(list[0].name.as_bytes(), b"?????\x80");
}

#[test]
fn text_goes_out_in_the_configured_encoding() {
    let mut h = Harness::new(
        ServerState {
            name: "Сервер".into(),
            ..state()
        },
        SampConfig {
            encoding: TextEncoding::Windows1251,
            ..SampConfig::default()
        },
    );
    let bytes = h.reply(&request(RequestBody::Info));
    let ReplyBody::Info(info) = Reply::from_bytes(&bytes).unwrap().body else {
        panic!("not info");
    };
    assert_eq!(info.hostname.decode(TextEncoding::Windows1251), "Сервер");
    assert_eq!(info.hostname.as_bytes().len(), 6);
}

#[test]
fn a_state_update_shows_in_the_next_reply() {
    let mut h = Harness::new(state(), SampConfig::default());
    let first = h.reply(&request(RequestBody::Info));
    assert_eq!(h.reply(&request(RequestBody::Info)), first, "cached");
    h.shared.update(|s| s.name = "Renamed".into());
    let bytes = h.reply(&request(RequestBody::Info));
    let ReplyBody::Info(info) = Reply::from_bytes(&bytes).unwrap().body else {
        panic!("not info");
    };
    assert_eq!(info.hostname.as_bytes(), b"Renamed");
}

fn rcon(password: &str, command: &str) -> Vec<u8> {
    request(RequestBody::Rcon {
        password: Text::encode(password, TextEncoding::Windows1252),
        command: Text::encode(command, TextEncoding::Windows1252),
    })
}

fn lines(replies: &[Vec<u8>]) -> Vec<String> {
    replies
        .iter()
        .map(|r| match Reply::from_bytes(r).unwrap().body {
            ReplyBody::Rcon(line) => line.decode(TextEncoding::Windows1252).into_owned(),
            other => panic!("not an RCON line: {other:?}"),
        })
        .collect()
}

#[test]
fn rcon_needs_a_configured_password_and_the_right_one() {
    let mut off = Harness::new(state(), SampConfig::default());
    assert_eq!(
        off.send(&rcon("", "")),
        (Verdict::Dropped(DropReason::Unsupported), vec![])
    );
    let mut empty = Harness::new(
        state(),
        SampConfig {
            rcon_password: Some(String::new()),
            ..SampConfig::default()
        },
    );
    assert_eq!(
        empty.send(&rcon("", "players")).0,
        Verdict::Dropped(DropReason::Unsupported),
        "an empty password turns RCON off"
    );

    let mut h = Harness::new(
        state(),
        SampConfig {
            rcon_password: Some("hunter2".into()),
            ..SampConfig::default()
        },
    );
    for wrong in ["hunter", "hunter22", "HUNTER2", ""] {
        let (verdict, replies) = h.send(&rcon(wrong, "gmx"));
        assert_eq!(verdict, Verdict::Answered);
        assert_eq!(lines(&replies), [BAD_RCON_PASSWORD]);
        assert_eq!(replies[0][..11], rcon(wrong, "gmx")[..11]);
        // No bigger than the request needs: header, length, the one line.
        assert_eq!(replies[0].len(), 11 + 2 + BAD_RCON_PASSWORD.len());
    }
    let (_, replies) = h.send(&rcon("hunter2", "gmx"));
    assert_eq!(lines(&replies), ["Unknown command or variable: gmx"]);
}

#[test]
fn rcon_commands_go_to_the_handler_one_datagram_per_line() {
    let mut h = Harness::new(
        state(),
        SampConfig {
            rcon_password: Some("pw".into()),
            ..SampConfig::default()
        },
    );
    h.responder = SampResponder::new(
        h.shared.clone(),
        SampConfig {
            rcon_password: Some("pw".into()),
            ..SampConfig::default()
        },
    )
    .with_rcon_handler(|command, state| match command.split_once(' ') {
        Some(("echo", text)) => vec![text.to_owned()],
        _ if command == "players" => state
            .players
            .iter()
            .map(|p| format!("{} {}", p.name, p.score))
            .collect(),
        _ => Vec::new(),
    });
    let (verdict, replies) = h.send(&rcon("pw", "players"));
    assert_eq!(verdict, Verdict::Answered);
    assert_eq!(lines(&replies), ["player0 0", "player1 1", "player2 2"]);
    let (_, replies) = h.send(&rcon("pw", "echo Grüße"));
    assert_eq!(lines(&replies), ["Grüße"]);
    let (_, replies) = h.send(&rcon("pw", "nothing"));
    assert!(replies.is_empty());
}

#[test]
fn the_open_mp_urls_are_cut_to_fit_the_datagram_cap() {
    let url = format!("https://example.com/{}", "u".repeat(2000));
    let info = OpenMpInfo {
        discord: url.clone(),
        light_banner: url.clone(),
        dark_banner: url.clone(),
        logo: url,
    };
    let mut h = Harness::new(state(), SampConfig::open_mp(info));
    h.sink = ReplySink::new(1400);
    let bytes = h.reply(&request(RequestBody::Extra));
    assert!(bytes.len() <= 1400, "{}", bytes.len());
    let ReplyBody::Extra(extra) = Reply::from_bytes(&bytes).unwrap().body else {
        panic!("not extra");
    };
    assert!(extra
        .logo
        .as_bytes()
        .starts_with(b"https://example.com/uuu"));
}

#[test]
fn every_reply_fits_the_datagram_cap_and_lists_are_cut_between_entries() {
    // The largest state SA:MP lists: 100 players with 255-byte names, 300 long rules.
    let long = |i: usize| format!("{i:03}{}", "x".repeat(252));
    let mut state = ServerState {
        players: (0..100)
            .map(|i| PlayerState {
                name: long(i),
                ..PlayerState::default()
            })
            .collect(),
        ..state()
    };
    state.rules = (0..300)
        .map(|i| (long(i), query_net::state::RuleValue::Text(long(i))))
        .collect();
    for cap in [1400, 576, ReplySink::MAX_UDP_PAYLOAD] {
        let mut h = Harness::new(state.clone(), SampConfig::default());
        h.sink = ReplySink::new(cap);
        for body in [
            RequestBody::Rules,
            RequestBody::Clients,
            RequestBody::Players,
        ] {
            let bytes = h.reply(&request(body));
            assert!(bytes.len() <= cap, "{} > {cap}", bytes.len());
            // Each entry's size: length-prefixed texts, then a score (and an id and a ping).
            let (listed, all, entry) = match Reply::from_bytes(&bytes).unwrap().body {
                ReplyBody::Rules(rules) => (rules.len(), 302, 1 + 255 + 1 + 255),
                ReplyBody::Clients(clients) => (clients.len(), 100, 1 + 255 + 4),
                ReplyBody::Players(players) => (players.len(), 100, 1 + 1 + 255 + 4 + 4),
                other => panic!("{other:?}"),
            };
            // Everything, or cut where the next entry would not fit (or at the 8 KiB bound
            // for rules).
            assert!(listed >= 1, "{cap}");
            assert!(
                listed == all || bytes.len() + entry > cap.min(8192 + 11),
                "{cap}: {listed} listed"
            );
        }
    }
}
