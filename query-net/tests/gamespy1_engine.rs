//! The GameSpy v1 status session without sockets: reply parts fed in any order, duplicated or
//! missing, with explicit instants.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use query_net::engine::ClientSession;
use query_net::engines::gamespy1::GameSpy1Session;
use query_net::{Options, QueryError};
use query_wire::TextEncoding;

const TIMEOUT: Duration = Duration::from_millis(100);

fn target() -> SocketAddr {
    "127.0.0.1:7778".parse().unwrap()
}

fn options() -> Options {
    Options {
        timeout: TIMEOUT,
        retries: 2,
        ..Options::default()
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn session(options: &Options, t0: Instant) -> GameSpy1Session {
    let mut session = GameSpy1Session::new(target(), options);
    let sent = session.poll_transmit(t0).map(<[u8]>::to_vec);
    assert_eq!(sent.as_deref(), Some(options.gamespy_request.as_bytes()));
    assert!(session.poll_transmit(t0).is_none());
    session
}

/// A UT99-style reply in three parts, `\final\` after `\queryid\` on the last; Latin-1 bytes
/// a0 and b1 in a name and pings with a leading space, as real servers send them.
fn ut_parts() -> [Vec<u8>; 3] {
    [
        b"\\gamename\\ut\\gamever\\451\\location\\0\\hostname\\Caf\xe9 CTF\\hostport\\7777\
          \\mapname\\CTF-Face\\gametype\\CTFGame\\numplayers\\3\\maxplayers\\16\
          \\gamemode\\openplaying\\queryid\\20.1"
            .to_vec(),
        b"\\password\\False\\timelimit\\15\\player_0\\Resident.Evil\xa0\xb1\\frags_0\\719\
          \\ping_0\\ 86\\team_0\\1\\mesh_0\\Spectator\\player_1\\pacmaN\\frags_1\\-3\
          \\ping_1\\ 122\\team_1\\0\\queryid\\20.2"
            .to_vec(),
        b"\\player_2\\Nap\\frags_2\\1162\\ping_2\\ 171\\team_2\\0\\queryid\\20.3\\final\\".to_vec(),
    ]
}

#[test]
fn parts_out_of_order_and_duplicated_make_the_whole_reply() {
    let t0 = Instant::now();
    let mut s = session(&options(), t0);
    let [a, b, c] = ut_parts();
    for (part, at) in [(&c, 7), (&a, 8), (&c, 9)] {
        s.handle_datagram(target(), part, t0 + ms(at));
        assert!(s.poll_result().is_none());
    }
    s.handle_datagram(target(), &b, t0 + ms(12));
    let status = s.poll_result().unwrap().unwrap();
    assert!(status.complete);
    assert_eq!(status.ping_ms, 7.0, "the round trip of the first part");
    assert_eq!(status.name, "Café CTF");
    assert_eq!(status.map.as_deref(), Some("CTF-Face"));
    assert_eq!(status.game_type.as_deref(), Some("CTFGame"));
    assert_eq!(status.version.as_deref(), Some("451"));
    assert_eq!((status.num_players, status.max_players), (3, 16));
    assert_eq!(status.password, Some(false));
    let rules: Vec<_> = status
        .rules
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        rules,
        [
            ("gamename", "ut"),
            ("hostport", "7777"),
            ("gamemode", "openplaying"),
            ("location", "0"),
            ("timelimit", "15"),
        ]
    );
    let players: Vec<_> = status
        .players
        .iter()
        .map(|p| (p.name.as_str(), p.score, p.ping, p.team.as_deref()))
        .collect();
    assert_eq!(
        players,
        [
            ("Resident.Evil\u{a0}±", Some(719), Some(86), Some("1")),
            ("pacmaN", Some(-3), Some(122), Some("0")),
            ("Nap", Some(1162), Some(171), Some("0")),
        ]
    );
    assert_eq!(status.players[0].extra["mesh"], "Spectator");
    assert_eq!(status.raw["query_id"], 20);
    assert_eq!(status.raw["total_parts"], 3);
    assert_eq!(status.raw["missing_parts"], serde_json::json!([]));
    assert_eq!(status.raw["encoding"], "Windows-1252");
    // Finished: nothing more to send or wait for.
    assert!(s.poll_timeout().is_none());
    assert!(s.poll_transmit(t0 + TIMEOUT).is_none());
}

#[test]
fn bf1942_final_before_queryid_stale_players_and_teams_from_one() {
    let t0 = Instant::now();
    let mut s = session(&options(), t0);
    let part2 = b"\\deaths_0\\2\\kills_0\\5\\ping_0\\51\\playername_0\\John Gult\\score_0\\9\
                  \\team_0\\2\\playername_1\\Dr-Duke\\score_1\\4\\team_1\\1\
                  \\playername_2\\Gone\\score_2\\0\\team_2\\1\
                  \\teamname_0\\axis\\teamname_1\\allied\\final\\\\queryid\\32.2";
    let part1 = b"\\gamename\\bfield1942\\gamever\\v1.61\\hostname\\SiMPLE\\mapname\\telemark\
                  \\gametype\\conquest\\maxplayers\\36\\numplayers\\2\\password\\0\\queryid\\32.1";
    s.handle_datagram(target(), part2, t0 + ms(3));
    s.handle_datagram(target(), part1, t0 + ms(4));
    let status = s.poll_result().unwrap().unwrap();
    assert!(status.complete);
    let players: Vec<_> = status
        .players
        .iter()
        .map(|p| (p.name.as_str(), p.score, p.team.as_deref()))
        .collect();
    // BF1942 numbers teams from 1: team 2 is the second `teamname`.
    assert_eq!(
        players,
        [
            ("John Gult", Some(9), Some("allied")),
            ("Dr-Duke", Some(4), Some("axis"))
        ]
    );
    assert_eq!(status.players[0].extra["kills"], "5");
    assert_eq!(status.players[0].extra["deaths"], "2");
    assert_eq!(status.raw["stale_players"], 1);
    let teams: Vec<_> = status.teams.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(teams, ["axis", "allied"]);
    assert_eq!(status.password, Some(false));
}

#[test]
fn a_missing_part_gives_what_arrived_marked_incomplete() {
    let t0 = Instant::now();
    let mut s = session(&options(), t0);
    let [a, _, c] = ut_parts();
    s.handle_datagram(target(), &a, t0 + ms(10));
    s.handle_datagram(target(), &c, t0 + ms(11));
    // No resend: a new request would get a new query id.
    assert!(s.poll_transmit(t0 + ms(11)).is_none());
    // The rest is waited for 50 ms (four round trips, at least 50 ms) after the latest part,
    // not until the attempt's timeout.
    assert_eq!(s.poll_timeout(), Some(t0 + ms(61)));
    s.handle_timeout(t0 + ms(61));
    assert!(s.poll_transmit(t0 + ms(61)).is_none());
    let status = s.poll_result().unwrap().unwrap();
    assert!(!status.complete);
    assert_eq!(status.raw["missing_parts"], serde_json::json!([2]));
    assert_eq!(status.raw["parts_received"], 2);
    assert_eq!(status.name, "Café CTF");
    assert_eq!(status.num_players, 3);
    // Players 0 and 1 were in the lost part; player 2 arrived.
    let names: Vec<_> = status.players.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["Nap"]);
    assert_eq!(status.password, None);
}

#[test]
fn a_final_part_that_never_comes_leaves_the_total_unknown() {
    let t0 = Instant::now();
    let mut s = session(&options(), t0);
    let [a, b, _] = ut_parts();
    s.handle_datagram(target(), &b, t0 + ms(10));
    s.handle_datagram(target(), &a, t0 + ms(12));
    s.handle_timeout(s.poll_timeout().unwrap());
    let status = s.poll_result().unwrap().unwrap();
    assert!(!status.complete);
    assert!(status.raw["total_parts"].is_null());
    assert_eq!(status.players.len(), 2);
}

#[test]
fn paced_parts_are_waited_for_twice_the_longest_pause() {
    let t0 = Instant::now();
    let mut s = session(&options(), t0);
    let [a, b, c] = ut_parts();
    s.handle_datagram(target(), &a, t0 + ms(10));
    // Four round trips, at least 50 ms, after the latest part.
    assert_eq!(s.poll_timeout(), Some(t0 + ms(60)));
    s.handle_datagram(target(), &b, t0 + ms(45));
    // A 35 ms pause between parts: the gap grows to two of them.
    assert_eq!(s.poll_timeout(), Some(t0 + ms(115)));
    s.handle_timeout(t0 + ms(100));
    assert!(s.poll_result().is_none());
    s.handle_datagram(target(), &c, t0 + ms(110));
    assert!(s.poll_result().unwrap().unwrap().complete);
}

#[test]
fn a_silent_server_ends_the_wait_a_gap_after_its_latest_part() {
    let t0 = Instant::now();
    let mut s = session(&options(), t0);
    let [a, b, _] = ut_parts();
    s.handle_datagram(target(), &a, t0 + ms(10));
    s.handle_datagram(target(), &b, t0 + ms(11));
    let wake = s.poll_timeout().unwrap();
    assert_eq!(wake, t0 + ms(61));
    s.handle_timeout(wake);
    let status = s.poll_result().unwrap().unwrap();
    assert!(!status.complete);
    assert!(status.raw["total_parts"].is_null());
}

#[test]
fn total_silence_is_a_timeout_after_every_attempt() {
    let t0 = Instant::now();
    let mut s = session(&options(), t0);
    let mut sent = 1;
    let mut now = t0;
    let err = loop {
        if let Some(result) = s.poll_result() {
            break result.unwrap_err();
        }
        now = s.poll_timeout().unwrap();
        s.handle_timeout(now);
        while s.poll_transmit(now).is_some() {
            sent += 1;
        }
    };
    assert_eq!(sent, 3);
    assert_eq!(now, t0 + TIMEOUT * 3);
    match err {
        QueryError::Timeout {
            waiting_for,
            attempts,
            after,
        } => {
            assert_eq!(waiting_for, "status request");
            assert_eq!(attempts, 3);
            assert_eq!(after, TIMEOUT * 3);
        }
        other => panic!("unexpected {other}"),
    }
}

#[test]
fn a_reply_after_a_resend_still_counts() {
    let t0 = Instant::now();
    let mut s = session(&options(), t0);
    s.handle_timeout(t0 + TIMEOUT);
    assert!(s.poll_transmit(t0 + TIMEOUT).is_some());
    s.handle_datagram(
        target(),
        b"\\hostname\\late\\queryid\\3.1\\final\\",
        t0 + TIMEOUT + ms(4),
    );
    let status = s.poll_result().unwrap().unwrap();
    assert_eq!(status.name, "late");
    assert_eq!(status.ping_ms, 4.0);
}

#[test]
fn datagrams_that_are_not_parts_are_ignored_and_named_if_nothing_else_came() {
    let t0 = Instant::now();
    let mut s = session(&options(), t0);
    let mut now = t0;
    let err = loop {
        s.handle_datagram(target(), b"\\hostname\\x\\queryid\\7.99", now + ms(1));
        s.handle_datagram(target(), b"not key/value text", now + ms(2));
        if let Some(result) = s.poll_result() {
            break result.unwrap_err();
        }
        now = s.poll_timeout().unwrap();
        s.handle_timeout(now);
        while s.poll_transmit(now).is_some() {}
    };
    assert!(matches!(err, QueryError::Malformed(_)), "{err}");
    assert!(err.to_string().contains("Datagram"), "{err}");
}

#[test]
fn parts_of_another_query_id_and_other_sources_are_ignored() {
    let t0 = Instant::now();
    let mut s = session(&options(), t0);
    let [a, b, c] = ut_parts();
    s.handle_datagram(target(), &a, t0 + ms(5));
    s.handle_datagram(
        target(),
        b"\\player_0\\intruder\\queryid\\21.2\\final\\",
        t0 + ms(5),
    );
    s.handle_datagram(
        "127.0.0.1:9999".parse().unwrap(),
        b"\\player_0\\spoof\\queryid\\20.2",
        t0 + ms(5),
    );
    s.handle_datagram(target(), &b, t0 + ms(6));
    s.handle_datagram(target(), &c, t0 + ms(6));
    let status = s.poll_result().unwrap().unwrap();
    assert!(status.complete);
    assert_eq!(status.players[0].name, "Resident.Evil\u{a0}±");
}

#[test]
fn text_is_decoded_in_the_chosen_encoding_and_strict_utf8_refuses_code_pages() {
    let t0 = Instant::now();
    let reply = b"\\hostname\\\xd1\xe5\xf0\xe2\xe5\xf0\\queryid\\1.1\\final\\";
    let cyrillic = Options {
        encoding: Some(TextEncoding::Windows1251),
        ..options()
    };
    let mut s = session(&cyrillic, t0);
    s.handle_datagram(target(), reply, t0 + ms(1));
    assert_eq!(s.poll_result().unwrap().unwrap().name, "Сервер");

    let utf8 = Options {
        encoding: Some(TextEncoding::Utf8),
        ..options()
    };
    let mut s = session(&utf8, t0);
    s.handle_datagram(target(), reply, t0 + ms(1));
    match s.poll_result().unwrap().unwrap_err() {
        QueryError::Malformed(e) => {
            assert_eq!(e.path_string(), "Reply.hostname");
            assert_eq!(e.offset(), 10);
        }
        other => panic!("unexpected {other}"),
    }
}

#[test]
fn the_configured_request_is_sent() {
    let t0 = Instant::now();
    let info = Options {
        gamespy_request: "\\info\\\\rules\\".into(),
        ..options()
    };
    session(&info, t0);
    let mut empty = GameSpy1Session::new(
        target(),
        &Options {
            gamespy_request: String::new(),
            ..options()
        },
    );
    assert_eq!(empty.poll_transmit(t0), Some(&b"\\status\\"[..]));
}

#[test]
fn in_an_incomplete_reply_a_player_whose_name_was_lost_is_left_out() {
    let t0 = Instant::now();
    let mut s = session(&options(), t0);
    // Player 1's keys straddle parts 1 and 2; part 1 never comes.
    s.handle_datagram(
        target(),
        b"\\frags_1\\4\\ping_1\\30\\player_2\\Bo\\frags_2\\1\\queryid\\8.2\\final\\",
        t0 + ms(5),
    );
    s.handle_timeout(s.poll_timeout().unwrap());
    let status = s.poll_result().unwrap().unwrap();
    assert!(!status.complete);
    let players: Vec<_> = status
        .players
        .iter()
        .map(|p| (p.name.as_str(), p.score, p.ping))
        .collect();
    assert_eq!(players, [("Bo", Some(1), None)]);
    assert_eq!(status.raw["player_fragments"], 1);
    assert_eq!(status.raw["missing_parts"], serde_json::json!([1]));
}

/// Runs `s` on the virtual clock until it ends, resending as asked.
fn run_to_end(
    s: &mut GameSpy1Session,
    mut now: Instant,
) -> Result<query_net::ServerStatus, QueryError> {
    loop {
        while s.poll_transmit(now).is_some() {}
        if let Some(result) = s.poll_result() {
            return result;
        }
        now = s.poll_timeout().expect("a pending session waits");
        s.handle_timeout(now);
    }
}

#[test]
fn empty_datagrams_lone_backslashes_and_bare_trailers_are_no_reply() {
    for junk in [&b""[..], b"\\", b"\\queryid\\9.1\\final\\", b"\\final\\"] {
        let t0 = Instant::now();
        let mut s = session(&options(), t0);
        s.handle_datagram(target(), junk, t0 + ms(1));
        assert!(s.poll_result().is_none(), "{junk:?} ended the query");
        let err = run_to_end(&mut s, t0).unwrap_err();
        assert!(matches!(err, QueryError::Malformed(_)), "{junk:?}: {err}");
        // Three attempts were made: the junk did not count as the first part.
        let mut s = session(&options(), t0);
        s.handle_datagram(target(), junk, t0 + ms(1));
        s.handle_datagram(
            target(),
            b"\\hostname\\real\\queryid\\4.1\\final\\",
            t0 + ms(2),
        );
        let status = s.poll_result().unwrap().unwrap();
        assert_eq!(status.name, "real");
        assert!(status.complete);
    }
    // A bare trailer as a later part is a real server's last datagram.
    let t0 = Instant::now();
    let mut s = session(&options(), t0);
    s.handle_datagram(target(), b"\\hostname\\two\\queryid\\5.1", t0 + ms(1));
    s.handle_datagram(target(), b"\\queryid\\5.2\\final\\", t0 + ms(2));
    let status = s.poll_result().unwrap().unwrap();
    assert!(status.complete);
    assert_eq!(status.name, "two");
}

#[test]
fn a_junk_datagram_with_its_own_query_id_does_not_capture_the_session() {
    let t0 = Instant::now();
    let mut s = session(&options(), t0);
    let [a, b, c] = ut_parts();
    // The junk comes first, and its id is never completed.
    s.handle_datagram(target(), b"\\hostname\\junk\\queryid\\99.1", t0 + ms(1));
    s.handle_datagram(target(), b"\\player_0\\junk\\queryid\\98.2", t0 + ms(1));
    for part in [&a, &b, &c] {
        s.handle_datagram(target(), part, t0 + ms(3));
    }
    let status = s.poll_result().unwrap().unwrap();
    assert!(status.complete);
    assert_eq!(status.name, "Café CTF");
    assert_eq!(status.players.len(), 3);
    assert_eq!(status.raw["query_id"], 20, "{}", status.raw);

    // Nothing completes: the id with the most parts is reported, incomplete.
    let mut s = session(&options(), t0);
    s.handle_datagram(target(), b"\\hostname\\junk\\queryid\\99.1", t0 + ms(1));
    s.handle_datagram(target(), &a, t0 + ms(2));
    s.handle_datagram(target(), &c, t0 + ms(2));
    let status = run_to_end(&mut s, t0 + ms(2)).unwrap();
    assert!(!status.complete);
    assert_eq!(status.name, "Café CTF");

    // Ids past the limit are dropped rather than held.
    let mut s = session(&options(), t0);
    for id in 0..100 {
        let junk = format!("\\hostname\\junk{id}\\queryid\\{}.1", 1000 + id);
        s.handle_datagram(target(), junk.as_bytes(), t0 + ms(1));
    }
    s.handle_datagram(target(), &a, t0 + ms(2));
    let status = run_to_end(&mut s, t0 + ms(2)).unwrap();
    assert_eq!(status.name, "junk0", "the first seen among equals");
}
