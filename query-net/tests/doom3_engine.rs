//! The Doom 3 engine: the `getInfo` session without sockets (the challenge echo, forged and
//! garbage replies, silence), the responder in each game's layout read back by the client,
//! its caps, and the whole query over loopback, alone and behind `--all`'s router.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use indexmap::IndexMap;
use query_net::driver;
use query_net::engine::ClientSession;
use query_net::engines::all::AllProtocols;
use query_net::engines::doom3::{self, Doom3Config, Doom3Responder, Layout};
use query_net::service::Service;
use query_net::state::{PlayerState, RuleValue, ServerState, SharedState};
use query_net::{replay, Options, Protocol, QueryError, ServerStatus};
use query_specs::doom3::Reply;
use query_wire::Encode;
use tokio::net::UdpSocket;
use tokio_util::sync::CancellationToken;

fn target() -> SocketAddr {
    "127.0.0.1:27666".parse().unwrap()
}

fn options() -> Options {
    Options {
        timeout: Duration::from_millis(200),
        retries: 2,
        ..Options::default()
    }
}

fn state() -> ServerState {
    let mut rules = IndexMap::new();
    rules.insert("fs_game".to_owned(), RuleValue::Text("".to_owned()));
    rules.insert("si_fragLimit".to_owned(), RuleValue::Integer(25));
    // Declared keys in the rules are sent once, from the state's fields.
    rules.insert("si_map".to_owned(), RuleValue::Text("ignored".to_owned()));
    ServerState {
        name: "^1Mars\0 Base ♥".to_owned(),
        map: "game/mp/d3dm1".to_owned(),
        game_type: "DM".to_owned(),
        version: "DOOM 1.3.1.1304".to_owned(),
        max_players: 8,
        password: true,
        players: vec![
            PlayerState {
                name: "^2Marine".to_owned(),
                score: 12,
                ping: 48,
                team: Some("gdf".to_owned()),
                ..PlayerState::default()
            },
            PlayerState {
                name: "Ünter".to_owned(),
                score: -1,
                ping: 70_000,
                ..PlayerState::default()
            },
        ],
        rules,
        ..ServerState::default()
    }
}

fn answers(config: Doom3Config, state: ServerState, request: &[u8]) -> Vec<Vec<u8>> {
    let responder = Doom3Responder::new(SharedState::new(state), config);
    // The service's own datagram cap out of the way: the responder's is under test.
    let mut service = Service::new(responder)
        .rate_limit(None)
        .max_datagram(65_507);
    let from: SocketAddr = "192.0.2.1:5000".parse().unwrap();
    service.handle(from, request).map(<[u8]>::to_vec).collect()
}

/// The client's status of the responder's reply to the client's own request.
fn round_trip(config: Doom3Config, state: ServerState) -> (ServerStatus, Vec<u8>) {
    let t0 = Instant::now();
    let mut s = doom3::client(target(), &options()).unwrap();
    let request = s.poll_transmit(t0).unwrap().to_vec();
    let replies = answers(config, state, &request);
    assert_eq!(replies.len(), 1);
    s.handle_datagram(target(), &replies[0], t0 + Duration::from_millis(3));
    let status = s.poll_result().unwrap().unwrap();
    (status, replies[0].clone())
}

#[test]
fn only_a_reply_echoing_the_challenge_is_an_answer() {
    let t0 = Instant::now();
    let mut s = doom3::client(target(), &options()).unwrap();
    let request = s.poll_transmit(t0).unwrap().to_vec();
    assert_eq!(request.len(), 14);
    assert!(request.starts_with(b"\xff\xffgetInfo\0"));
    let other = doom3::client(target(), &options())
        .unwrap()
        .poll_transmit(t0)
        .unwrap()
        .to_vec();
    assert_ne!(other, request, "a fresh challenge per query");

    let mut reply = answers(Doom3Config::default(), state(), &request).remove(0);
    let mut forged = reply.clone();
    forged[15] ^= 0xff;
    s.handle_datagram(target(), &forged, t0 + Duration::from_millis(1));
    s.handle_datagram(
        target(),
        &reply[..reply.len() - 1],
        t0 + Duration::from_millis(2),
    );
    s.handle_datagram(
        target(),
        b"\xff\xffinfoResponse\0",
        t0 + Duration::from_millis(2),
    );
    assert!(
        s.poll_result().is_none(),
        "neither forged nor cut is an answer"
    );
    s.handle_datagram(target(), &reply, t0 + Duration::from_millis(5));
    let status = s.poll_result().unwrap().unwrap();
    assert_eq!(status.protocol, Protocol::Doom3);
    assert_eq!(status.ping_ms, 5.0);

    // A cut reply alone names its decode error.
    let mut s = doom3::client(target(), &options()).unwrap();
    let request = s.poll_transmit(t0).unwrap().to_vec();
    reply = answers(Doom3Config::default(), state(), &request).remove(0);
    s.handle_datagram(target(), &reply[..reply.len() - 3], t0);
    while let Some(at) = s.poll_timeout() {
        s.handle_timeout(at);
        let _ = s.poll_transmit(at);
    }
    match s.poll_result() {
        Some(Err(QueryError::Malformed(e))) => assert!(e.to_string().contains("byte"), "{e}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn silence_is_a_timeout_naming_getinfo() {
    let t0 = Instant::now();
    let mut s = doom3::client(target(), &options()).unwrap();
    let mut sent = 0;
    while s.poll_transmit(t0).is_some() {
        sent += 1;
    }
    assert_eq!(sent, 1);
    while let Some(at) = s.poll_timeout() {
        s.handle_timeout(at);
        while s.poll_transmit(at).is_some() {}
    }
    match s.poll_result() {
        Some(Err(e @ QueryError::Timeout { .. })) => assert!(e.to_string().contains("getInfo")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn doom3_reply_reads_back_as_the_state() {
    let (status, reply) = round_trip(Doom3Config::default(), state());
    assert!(reply.starts_with(b"\xff\xffinfoResponse\0"));
    assert_eq!(status.name, "Mars? Base ?");
    assert_eq!(status.raw["hostname"], "^1Mars? Base ?");
    assert_eq!(status.raw["version"], "1.41");
    assert_eq!(status.raw["layout"], "doom3");
    assert_eq!(status.map.as_deref(), Some("game/mp/d3dm1"));
    assert_eq!(status.game_type.as_deref(), Some("DM"));
    assert_eq!(status.version.as_deref(), Some("DOOM 1.3.1.1304"));
    assert_eq!((status.num_players, status.max_players), (2, 8));
    assert_eq!(status.password, Some(true));
    assert_eq!(status.rules["gamename"], "baseDOOM-1");
    assert_eq!(status.rules["si_fragLimit"], "25");
    assert_eq!(status.rules["fs_game"], "");
    assert_eq!(status.rules["si_map"], "game/mp/d3dm1");
    let players: Vec<_> = status
        .players
        .iter()
        .map(|p| (p.id, p.name.as_str(), p.ping))
        .collect();
    assert_eq!(
        players,
        [
            (Some(0), "Marine", Some(48)),
            (Some(1), "Ünter", Some(65535))
        ]
    );
    assert_eq!(status.raw["players"][0]["name"], "^2Marine");
    assert!(status.players[0].extra.get("clan").is_none());
}

#[test]
fn quake4_and_etqw_replies_use_their_layouts() {
    let (status, reply) = round_trip(Doom3Config::of(Layout::Quake4), state());
    assert_eq!(status.raw["layout"], "quake4");
    assert_eq!(status.raw["version"], "2.85");
    assert_eq!(status.raw["tail"], "0000000001");
    assert_eq!(status.rules["gamename"], "Q4MP");
    assert_eq!(status.players[1].name, "Ünter");
    match Reply::decode(&reply).unwrap() {
        Reply::Info(r) => assert!(r.players.iter().all(|p| p.clan.is_some())),
        other => panic!("{other:?}"),
    }

    let (status, reply) = round_trip(Doom3Config::of(Layout::Etqw), state());
    assert!(reply.starts_with(b"\xff\xffinfoResponse\0"));
    assert_eq!(&reply[19..23], b"\xff\xff\xff\xff");
    assert!(matches!(Reply::decode(&reply), Ok(Reply::EtqwInfo(_))));
    assert_eq!(status.raw["form"], "infoResponse");
    assert_eq!(status.raw["layout"], "etqw");
    assert_eq!(status.raw["version"], "10.21");
    assert_eq!(status.raw["server_type"]["type"], "regular");
    assert_eq!(status.password, Some(true));
    assert_eq!(status.players[0].team.as_deref(), Some("gdf"));
    assert_eq!(status.players[0].score, Some(12));
    assert_eq!(status.players[0].extra["kills"], "12");
    assert_eq!(status.players[1].extra["kills"], "0");
    assert_eq!(status.players[1].team, None);
}

#[test]
fn the_responder_drops_what_is_not_a_whole_getinfo() {
    for request in [
        &b"\xff\xffgetInfo\0abc"[..],
        b"\xff\xffgetInfo",
        b"\xff\xffgetinfo\0abcd",
        b"\xff\xff\xff\xffgetinfo abcd",
        b"\xff\xffgetStatus\0abcd",
        &[0xff; 80],
    ] {
        assert!(
            answers(Doom3Config::default(), state(), request).is_empty(),
            "{request:?}"
        );
    }
    // The challenge is the first 4 bytes of whatever the client sent (qstat's, gamedig's).
    let reply = answers(
        Doom3Config::default(),
        state(),
        b"\xff\xffgetInfo\0PiNGPoNg\0",
    );
    assert_eq!(&reply[0][15..19], b"PiNG");
}

#[test]
fn a_reply_never_passes_the_datagram_and_keeps_32_slots() {
    let mut big = state();
    big.players = (0..40)
        .map(|i| PlayerState {
            name: format!("{i:02}{}", "x".repeat(60)),
            ping: i,
            ..PlayerState::default()
        })
        .collect();
    big.rules = (0..40)
        .map(|i| (format!("rule{i}"), RuleValue::Text("v".repeat(300))))
        .collect();
    for layout in [Layout::Doom3, Layout::Quake4, Layout::Etqw] {
        let (status, reply) = round_trip(Doom3Config::of(layout), big.clone());
        assert!(reply.len() <= 1400, "{layout:?}: {}", reply.len());
        assert!(status.num_players > 0, "{layout:?}");
        assert!(status.players.iter().all(|p| p.name.len() == 32));
        // Rules go before any player does.
        let rules = status
            .rules
            .keys()
            .filter(|k| k.starts_with("rule"))
            .count();
        assert_eq!(rules, 0, "{layout:?}");
        assert!(
            status.num_players >= 20,
            "{layout:?}: {}",
            status.num_players
        );
    }
    let large = Doom3Config {
        max_datagram: 4000,
        ..Doom3Config::default()
    };
    let (status, reply) = round_trip(large, big);
    assert_eq!(status.num_players, 32, "ids 0 to 31 only");
    assert!(reply.len() <= 4000);
}

// ---------------------------------------------------------------------------------------------
// Over loopback

async fn serve_with<R>(responder: R) -> (SocketAddr, CancellationToken)
where
    R: query_net::engine::Responder + Send + 'static,
{
    let udp = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = udp.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let token = shutdown.clone();
    tokio::spawn(async move {
        let mut service = Service::new(responder).rate_limit(None);
        driver::serve(&udp, &mut service, &token).await.unwrap();
    });
    (addr, shutdown)
}

#[tokio::test]
async fn the_query_reads_the_responder_over_loopback_and_behind_the_router() {
    let shared = SharedState::new(state());
    let (alone, stop_alone) = serve_with(Doom3Responder::new(
        shared.clone(),
        Doom3Config::of(Layout::Etqw),
    ))
    .await;
    let (all, stop_all) = serve_with(AllProtocols::new(shared)).await;
    let etqw = driver::query_doom3(alone.to_string(), &options())
        .await
        .unwrap();
    assert_eq!(etqw.raw["layout"], "etqw");
    let routed = driver::query(Protocol::Doom3, &all.to_string(), &options())
        .await
        .unwrap();
    assert_eq!(routed.raw["layout"], "doom3");
    for status in [&etqw, &routed] {
        assert_eq!(status.name, "Mars? Base ?");
        assert_eq!(status.num_players, 2);
        assert!(status.complete);
    }
    stop_alone.cancel();
    stop_all.cancel();
}

#[test]
fn replay_writes_the_challenge_into_captured_replies() {
    let reply = answers(Doom3Config::default(), state(), b"\xff\xffgetInfo\0zzzz");
    let status =
        replay::status_from_replies(Protocol::Doom3, target(), &reply, &options()).unwrap();
    assert_eq!(status.num_players, 2);
}

/// ETQW's answer to `getInfo` as qstat, gamedig and opengsq describe it (no capture holds
/// one; the fixture `doom3/etqw_info_response.hex`): the header, the challenge `PiNG`,
/// `FF FF FF FF`, protocol 10.21, the size of the rest, the pairs, two players (a human with
/// a clan tag, a bot), the id 32, the OS mask, ranked, 600,000 ms left, game state 2, a
/// regular server with 3 clients waiting; no statistics.
fn etqw_info_response() -> Vec<u8> {
    let text = include_str!("../../specs/fixtures/doom3/etqw_info_response.hex");
    text.split_whitespace()
        .map(|byte| u8::from_str_radix(byte, 16).unwrap())
        .collect()
}

#[test]
fn etqw_info_response_reads_as_described() {
    let reply = etqw_info_response();
    let Ok(Reply::EtqwInfo(decoded)) = Reply::decode(&reply) else {
        panic!("{:?}", Reply::decode(&reply));
    };
    assert_eq!(&decoded.challenge, b"PiNG");
    assert_eq!(decoded.body.stats, None);
    // Re-encoded, the declared keys go first, under their first name: the same reply.
    let again = decoded.to_vec().unwrap();
    assert_eq!(
        Reply::decode(&again).unwrap(),
        Reply::EtqwInfo(decoded.clone())
    );

    let status = replay::status_from_replies(
        Protocol::Doom3,
        target(),
        std::slice::from_ref(&reply),
        &options(),
    )
    .unwrap();
    assert_eq!(status.name, "Quake Wars");
    assert_eq!(status.raw["hostname"], "^3Quake ^7Wars");
    assert_eq!(status.map.as_deref(), Some("maps/valley.entities"));
    assert_eq!(status.game_type.as_deref(), Some("sdGameRulesCampaign"));
    assert_eq!((status.num_players, status.max_players), (2, 24));
    assert_eq!(status.password, Some(true));
    let players: Vec<_> = status
        .players
        .iter()
        .map(|p| {
            (
                p.id,
                p.name.as_str(),
                p.ping,
                p.extra.get("clan").map(String::as_str),
            )
        })
        .collect();
    assert_eq!(
        players,
        [
            (Some(0), "Grunt", Some(48), Some("[TAG]")),
            (Some(5), "Boté", Some(0), None)
        ]
    );
    assert_eq!(status.players[1].extra["bot"], "1");
    assert!(status.players[0].extra.get("bot").is_none());
    assert_eq!(status.players[0].team, None);
    assert_eq!(status.raw["layout"], "etqw");
    assert_eq!(status.raw["form"], "infoResponse");
    assert_eq!(status.raw["version"], "10.21");
    assert_eq!(status.raw["ranked"], true);
    assert_eq!(status.raw["time_left_ms"], 600_000);
    assert_eq!(status.raw["game_state"], 2);
    assert_eq!(status.raw["server_type"]["interested_clients"], 3);
    assert!(status.raw.get("task_id").is_none());

    // Every cut is an error inside the input, never a panic or a shorter reply.
    for len in 0..reply.len() {
        let error = Reply::decode(&reply[..len]).expect_err("a cut reply");
        assert!(error.offset() <= len, "{len}: {error}");
    }
    // A size that does not count the rest is refused.
    let mut wrong = reply.clone();
    wrong[27] += 1;
    assert!(Reply::decode(&wrong).is_err());
}
