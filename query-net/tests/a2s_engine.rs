//! The A2S client session on a virtual clock: the challenge exchange for each request, split
//! replies in any order, parts that never come, replies cut mid-row, and forged or foreign
//! datagrams.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use query_net::engine::ClientSession;
use query_net::engines::a2s::{A2sClient, MAX_CHALLENGES};
use query_net::{Options, QueryError, ServerStatus};
use query_specs::a2s::{
    Challenge, ExtraData, Info, InfoDetailed, InfoRequest, Player, PlayerList, Players, Reply,
    Request, Rule, Rules, SourcePart, EDF_GAME_ID, EDF_KEYWORDS, EDF_PORT, EDF_STEAM_ID,
    INFO_PAYLOAD, NO_CHALLENGE,
};
use query_wire::{Decode, Encode, Text};
use serde_json::json;

const SERVER: &str = "127.0.0.1:27015";
const CHALLENGE: i32 = 0x1234_5678;

fn server() -> SocketAddr {
    SERVER.parse().unwrap()
}

fn options() -> Options {
    Options {
        timeout: Duration::from_millis(500),
        retries: 1,
        ..Options::default()
    }
}

fn info() -> Info<'static> {
    Info {
        protocol: 17,
        name: Text::from("Zoë's 2Fort"),
        map: Text::from("ctf_2fort"),
        folder: Text::from("tf"),
        game: Text::from("Team Fortress"),
        app_id: 440,
        players: 3,
        max_players: 24,
        bots: 1,
        server_type: b'd',
        environment: b'l',
        visibility: 1,
        vac: 1,
        the_ship: None,
        version: Text::from("9521234"),
        extra: Some(ExtraData {
            flags: EDF_PORT | EDF_STEAM_ID | EDF_KEYWORDS | EDF_GAME_ID,
            port: Some(27015),
            steam_id: Some(90_000_000_000_000_001),
            spectator: None,
            keywords: Some(Text::from("alltalk,cp3,mp30")),
            game_id: Some(440),
        }),
    }
}

fn players(names: &[&'static str]) -> Reply<'static> {
    Reply::Players(PlayerList::Standard(Players {
        count: names.len() as u8,
        players: names
            .iter()
            .enumerate()
            .map(|(i, name)| Player {
                index: 0,
                name: Text::from(*name),
                score: i as i32 * 10 - 5,
                duration: 60.5 * i as f32,
            })
            .collect(),
    }))
}

fn rules(pairs: &[(&'static str, &'static str)]) -> Reply<'static> {
    Reply::Rules(Rules {
        count: pairs.len() as u16,
        rules: pairs
            .iter()
            .map(|(name, value)| Rule {
                name: Text::from(*name),
                value: Text::from(*value),
            })
            .collect(),
    })
}

fn bytes(reply: &Reply<'_>) -> Vec<u8> {
    reply.to_vec_with(440).unwrap()
}

fn challenge(value: i32) -> Vec<u8> {
    bytes(&Reply::Challenge(Challenge { challenge: value }))
}

/// `whole` split into Source-form parts of `size` payload bytes, all with reply id `id`.
fn split(whole: &[u8], id: u32, size: usize) -> Vec<Vec<u8>> {
    let chunks: Vec<&[u8]> = whole.chunks(size).collect();
    chunks
        .iter()
        .enumerate()
        .map(|(number, payload)| {
            SourcePart {
                id,
                total: chunks.len() as u8,
                number: number as u8,
                max_size: 1400,
                payload,
            }
            .to_vec()
            .unwrap()
        })
        .collect()
}

/// Drives a session: `answer` maps each request sent to the datagrams the server returns.
struct Run {
    session: A2sClient,
    now: Instant,
    sent: Vec<Vec<u8>>,
}

impl Run {
    fn new(options: &Options) -> Self {
        Run {
            session: A2sClient::new(server(), options),
            now: Instant::now(),
            sent: Vec::new(),
        }
    }

    fn finish(
        mut self,
        mut answer: impl FnMut(&Request<'_>, usize) -> Vec<Vec<u8>>,
    ) -> (Result<ServerStatus, QueryError>, Vec<Vec<u8>>) {
        for _ in 0..100 {
            while let Some(request) = self.session.poll_transmit(self.now) {
                let request = request.to_vec();
                let decoded = Request::from_bytes(&request).expect("the client sends A2S");
                let replies = answer(&decoded, self.sent.len());
                self.sent.push(request.clone());
                self.now += Duration::from_millis(3);
                for reply in replies {
                    self.session.handle_datagram(server(), &reply, self.now);
                }
            }
            if let Some(result) = self.session.poll_result() {
                return (result, self.sent);
            }
            let deadline = self
                .session
                .poll_timeout()
                .expect("an unfinished session waits");
            self.now = deadline;
            self.session.handle_timeout(self.now);
        }
        panic!("the session did not finish");
    }
}

/// A server that wants a challenge for everything, the way current Source servers do.
fn challenging_server(request: &Request<'_>) -> Vec<Vec<u8>> {
    match request {
        Request::Info(InfoRequest {
            challenge: Some(CHALLENGE),
            ..
        }) => vec![bytes(&Reply::Info(info()))],
        Request::Players(Challenge {
            challenge: CHALLENGE,
        }) => vec![bytes(&players(&["Zoë", "", "Jürgen"]))],
        Request::Rules(Challenge {
            challenge: CHALLENGE,
        }) => vec![bytes(&rules(&[("mp_timelimit", "30"), ("sv_tags", "cp")]))],
        _ => vec![challenge(CHALLENGE)],
    }
}

#[test]
fn every_request_gets_its_challenge_and_the_status_has_every_field() {
    let (status, sent) = Run::new(&options()).finish(|r, _| challenging_server(r));
    let status = status.unwrap();
    // INFO without, INFO with; PLAYER and RULES reuse the challenge INFO got.
    assert_eq!(sent.len(), 4, "{sent:x?}");
    assert_eq!(sent[0], b"\xff\xff\xff\xffTSource Engine Query\0");
    assert_eq!(&sent[1][sent[0].len()..], CHALLENGE.to_le_bytes());
    assert_eq!(sent[2][4], b'U');
    assert_eq!(sent[2][5..], CHALLENGE.to_le_bytes());

    assert_eq!(status.name, "Zoë's 2Fort");
    assert_eq!(status.map.as_deref(), Some("ctf_2fort"));
    assert_eq!(status.game_type.as_deref(), Some("Team Fortress"));
    assert_eq!(status.version.as_deref(), Some("9521234"));
    // The keywords' cp/mp win over the bytes, as Rust servers need.
    assert_eq!((status.num_players, status.max_players), (3, 30));
    assert_eq!(status.password, Some(true));
    let names: Vec<&str> = status.players.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["Zoë", "", "Jürgen"]);
    assert_eq!(status.players[1].score, Some(5));
    assert_eq!(status.players[2].duration, Some(121.0));
    assert_eq!(
        status.rules.iter().collect::<Vec<_>>(),
        [
            (&"mp_timelimit".to_owned(), &"30".to_owned()),
            (&"sv_tags".to_owned(), &"cp".to_owned())
        ]
    );
    assert!(status.complete);
    assert_eq!(
        status.raw,
        json!({
            "folder": "tf", "app_id": 440, "protocol": 17, "bots": 1, "server_type": "d",
            "environment": "l", "vac": true, "extra_data_flag": 0xb1, "port": 27015,
            "steam_id": "90000000000000001", "keywords": "alltalk,cp3,mp30", "game_id": "440",
            "players_count": 3, "rules_count": 2,
        })
    );
}

#[test]
fn an_old_server_answers_without_challenges_and_players_and_rules_can_be_skipped() {
    let (status, sent) = Run::new(&options()).finish(|r, _| match r {
        Request::Info(_) => vec![bytes(&Reply::Info(info()))],
        Request::Players(Challenge {
            challenge: NO_CHALLENGE,
        }) => vec![bytes(&players(&["a"]))],
        Request::Rules(_) => vec![bytes(&rules(&[]))],
        other => panic!("unexpected {other:?}"),
    });
    assert_eq!(sent.len(), 3);
    assert_eq!(status.unwrap().players.len(), 1);

    let only_info = Options {
        players: false,
        rules: false,
        ..options()
    };
    let (status, sent) = Run::new(&only_info).finish(|_, _| vec![bytes(&Reply::Info(info()))]);
    assert_eq!(sent.len(), 1);
    assert!(status.unwrap().complete);
}

#[test]
fn a_server_that_never_stops_sending_challenges_is_given_up_on() {
    let mut next = 0;
    let mut endless = |_: &Request<'_>, _| {
        next += 1;
        vec![challenge(next)]
    };
    let (status, sent) = Run::new(&options()).finish(&mut endless);
    let error = status.unwrap_err();
    assert!(error.to_string().contains("new challenge"), "{error}");
    assert_eq!(sent.len(), MAX_CHALLENGES as usize + 1);

    // For PLAYER alone: the status comes without players, saying why.
    let (status, _) = Run::new(&options()).finish(|r, i| match r {
        Request::Info(_) => vec![bytes(&Reply::Info(info()))],
        Request::Players(_) => vec![challenge(i as i32)],
        Request::Rules(_) => vec![bytes(&rules(&[("a", "b")]))],
    });
    let status = status.unwrap();
    assert!(!status.complete);
    assert!(status.players.is_empty());
    assert_eq!(status.rules.len(), 1);
    assert!(status.raw["players_error"]
        .as_str()
        .unwrap()
        .contains("challenge"));
}

#[test]
fn split_parts_in_any_order_with_duplicates_and_strangers_are_joined() {
    let names: Vec<&'static str> = (0..80)
        .map(|i| &*Box::leak(format!("player number {i:02}").into_boxed_str()))
        .collect();
    let whole = bytes(&players(&names));
    let mut parts = split(&whole, 7, 500);
    assert!(parts.len() >= 4);
    parts.reverse();
    let duplicate = parts[1].clone();
    parts.insert(2, duplicate);
    // A part of another reply, with the same number as a genuine one.
    let stranger = split(&whole, 8, 500).remove(2);
    parts.insert(0, stranger);
    let (status, _) = Run::new(&options()).finish(|r, _| match r {
        Request::Info(_) => vec![bytes(&Reply::Info(info()))],
        Request::Players(_) => parts.clone(),
        Request::Rules(_) => vec![bytes(&rules(&[]))],
    });
    let status = status.unwrap();
    assert!(status.complete, "{:?}", status.raw);
    assert_eq!(status.players.len(), 80);
    assert_eq!(status.players[79].name, "player number 79");
}

#[test]
fn a_part_that_never_comes_leaves_the_whole_pairs_before_it() {
    let pairs: Vec<(&'static str, &'static str)> = (0..60)
        .map(|i| {
            let name = &*Box::leak(format!("rule_{i:02}").into_boxed_str());
            (name, "some value")
        })
        .collect();
    let whole = bytes(&rules(&pairs));
    let parts = split(&whole, 3, 400);
    assert!(parts.len() >= 3);
    let (status, sent) = Run::new(&options()).finish(|r, _| match r {
        Request::Info(_) => vec![bytes(&Reply::Info(info()))],
        Request::Players(_) => vec![bytes(&players(&["a"]))],
        // Part 1 is always lost.
        Request::Rules(_) => vec![parts[0].clone(), parts[2].clone()],
    });
    let status = status.unwrap();
    assert!(!status.complete);
    // The first part held the count and the pairs that fit in it whole.
    let kept = status.rules.len();
    assert!(kept > 5 && kept < 60, "{kept}");
    assert_eq!(
        status.rules.get_index(kept - 1).unwrap().0,
        &format!("rule_{:02}", kept - 1)
    );
    assert_eq!(status.raw["rules_count"], 60);
    assert!(status.raw["rules_error"].is_string());
    // RULES was sent as often as the options allow, each time a fresh reply.
    assert_eq!(sent.iter().filter(|r| r[4] == b'V').count(), 2);
    assert_eq!(status.players.len(), 1);
}

#[test]
fn a_reply_cut_mid_row_keeps_the_rows_before_the_cut() {
    let mut cut = bytes(&players(&["first", "second", "third"]));
    cut.truncate(cut.len() - 3);
    let (status, _) = Run::new(&options()).finish(|r, _| match r {
        Request::Info(_) => vec![bytes(&Reply::Info(info()))],
        Request::Players(_) => vec![cut.clone()],
        Request::Rules(_) => vec![bytes(&rules(&[]))],
    });
    let status = status.unwrap();
    let names: Vec<&str> = status.players.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["first", "second"]);
    assert!(!status.complete);
    assert!(status.raw["players_error"]
        .as_str()
        .unwrap()
        .contains("byte"));
}

#[test]
fn forged_and_foreign_datagrams_are_ignored() {
    let mut session = A2sClient::new(server(), &options());
    let mut now = Instant::now();
    session.poll_transmit(now).unwrap();
    let elsewhere: SocketAddr = "127.0.0.1:27016".parse().unwrap();
    let forged = Info {
        name: Text::from("forged"),
        ..info()
    };
    // From another port: ignored even though it is a valid reply.
    session.handle_datagram(elsewhere, &bytes(&Reply::Info(forged)), now);
    // From the server's address: garbage of the right kind, a reply to another request, and
    // bytes that are no A2S at all.
    session.handle_datagram(server(), b"\xff\xff\xff\xffI\x11broken", now);
    session.handle_datagram(server(), &bytes(&rules(&[("x", "y")])), now);
    session.handle_datagram(server(), b"hello", now);
    assert!(session.poll_result().is_none());
    now += Duration::from_millis(5);
    session.handle_datagram(server(), &bytes(&Reply::Info(info())), now);
    assert!(session.poll_transmit(now).is_some(), "on to PLAYER");
    let options = Options {
        players: false,
        rules: false,
        ..options()
    };
    // Only garbage ever came: the error is the decode error, not a timeout.
    let (status, _) = Run::new(&options).finish(|_, _| vec![b"\xff\xff\xff\xffI\x11x".to_vec()]);
    assert!(
        matches!(status, Err(QueryError::Malformed(_))),
        "{status:?}"
    );
    // Nothing came at all.
    let (status, sent) = Run::new(&options).finish(|_, _| Vec::new());
    assert!(
        matches!(status, Err(QueryError::Timeout { attempts: 2, .. })),
        "{status:?}"
    );
    assert_eq!(sent.len(), 2);
}

#[test]
fn goldsrc_detailed_info_is_read_and_its_second_info_reply_ignored() {
    let detailed = Reply::InfoDetailed(InfoDetailed {
        address: Text::from("192.0.2.7:27015"),
        name: Text::from("Half-Life DM"),
        map: Text::from("crossfire"),
        folder: Text::from("valve"),
        game: Text::from("Half-Life"),
        players: 2,
        max_players: 16,
        protocol: 47,
        server_type: b'd',
        environment: b'w',
        visibility: 0,
        is_mod: 0,
        mod_info: None,
        vac: 1,
        bots: 0,
    });
    let options = Options {
        players: false,
        ..options()
    };
    let (status, _) = Run::new(&options).finish(|r, _| match r {
        Request::Info(_) => vec![bytes(&detailed), bytes(&Reply::Info(info()))],
        Request::Rules(_) => vec![bytes(&rules(&[("mp_friendlyfire", "0")]))],
        Request::Players(_) => panic!("players were not asked for"),
    });
    let status = status.unwrap();
    assert_eq!(status.name, "Half-Life DM");
    assert_eq!((status.num_players, status.max_players), (2, 16));
    assert_eq!(status.password, Some(false));
    assert_eq!(status.raw["address"], "192.0.2.7:27015");
    assert_eq!(status.rules.len(), 1);
}

#[test]
fn the_info_request_carries_exactly_the_payload_and_challenge() {
    let request = Request::Info(InfoRequest {
        payload: INFO_PAYLOAD,
        challenge: Some(-2),
    });
    let mut session = A2sClient::new(server(), &options());
    let first = session.poll_transmit(Instant::now()).unwrap().to_vec();
    assert_eq!(first, request.to_vec().unwrap()[..first.len()]);
}
