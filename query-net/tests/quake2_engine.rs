//! The Quake 2 status session without sockets (both dialects, resends, garbage and other
//! sources, with explicit instants), the responder alone, and the client against the responder
//! over loopback UDP, through a lossy link too.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use query_net::driver;
use query_net::engine::ClientSession;
use query_net::engines::quake2::{self, Quake2Config, Quake2Responder};
use query_net::service::Service;
use query_net::state::{PlayerState, RuleValue, ServerState, SharedState};
use query_net::testing::lossy::{Impairments, LossyProxy};
use query_net::{Options, Protocol, QueryError, ServerStatus};
use tokio::net::UdpSocket;
use tokio_util::sync::CancellationToken;

const TIMEOUT: Duration = Duration::from_millis(100);
const STATUS: &[u8] = b"\xff\xff\xff\xffstatus\n";

fn target() -> SocketAddr {
    "127.0.0.1:27910".parse().unwrap()
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

fn session(t0: Instant) -> impl ClientSession<Output = ServerStatus> {
    let mut session = quake2::client(target(), &options()).unwrap();
    let sent = session.poll_transmit(t0).map(<[u8]>::to_vec);
    assert_eq!(sent.as_deref(), Some(STATUS));
    assert!(session.poll_transmit(t0).is_none());
    session
}

#[test]
fn a_quake2_reply_ends_the_query_with_its_round_trip() {
    let t0 = Instant::now();
    let mut s = session(t0);
    s.handle_datagram(
        target(),
        b"\xff\xff\xff\xffprint\n\\hostname\\Box\\mapname\\q2dm1\\maxclients\\8\\needpass\\1\\gamedir\\ctf\n3 50 \"Ann\"\n-2 999 \"\xc2\xef\"\n",
        t0 + ms(7),
    );
    let status = s.poll_result().unwrap().unwrap();
    assert_eq!(status.protocol, Protocol::Quake2);
    assert_eq!(status.name, "Box");
    assert_eq!(status.map.as_deref(), Some("q2dm1"));
    assert_eq!(status.game_type.as_deref(), Some("ctf"));
    assert_eq!((status.max_players, status.num_players), (8, 2));
    assert_eq!(status.password, Some(true));
    assert_eq!(status.ping_ms, 7.0);
    assert!(status.complete);
    assert_eq!(status.players[1].name, "Âï", "Windows-1252 by default");
    assert_eq!(
        query_specs::quake2::plain_name(b"\xc2\xef"),
        "Bo",
        "Quake's gold letters, for a caller that wants them folded"
    );
    assert_eq!(
        (status.players[1].score, status.players[1].ping),
        (Some(-2), Some(999))
    );
    assert_eq!(status.raw["dialect"], "quake2");
    assert!(s.poll_timeout().is_none() && s.poll_transmit(t0 + ms(8)).is_none());
}

#[test]
fn a_quakeworld_reply_gives_ids_teams_skins_and_spectators() {
    let t0 = Instant::now();
    let mut s = session(t0);
    s.handle_datagram(
        target(),
        b"\xff\xff\xff\xffn\\hostname\\QW Box\\map\\dm6\\*version\\MVDSV 0.36\\*gamedir\\qw\\maxclients\\16\\maxspectators\\4\n\
          5 12 3 40 \"Ann\" \"base\" 4 13 \"red\"\n\
          9 -9999 1 0 \"\\s\\Spec\" \"\" 0 0\n",
        t0 + ms(2),
    );
    let status = s.poll_result().unwrap().unwrap();
    assert_eq!(status.raw["dialect"], "quakeworld");
    assert_eq!(status.map.as_deref(), Some("dm6"));
    assert_eq!(status.version.as_deref(), Some("MVDSV 0.36"));
    assert_eq!(status.game_type.as_deref(), Some("qw"));
    let ann = &status.players[0];
    assert_eq!((ann.id, ann.score, ann.ping), (Some(5), Some(12), Some(40)));
    assert_eq!(ann.team.as_deref(), Some("red"));
    assert_eq!(ann.duration, Some(180.0));
    assert_eq!(ann.extra["skin"], "base");
    assert_eq!(ann.extra["colors"], "4 13");
    let spec = &status.players[1];
    assert_eq!(spec.name, "Spec");
    assert_eq!(spec.team.as_deref(), Some("spectator"));
    assert_eq!(spec.score, None);
}

#[test]
fn an_unreadable_player_line_costs_that_line_and_says_so() {
    let t0 = Instant::now();
    let mut s = session(t0);
    s.handle_datagram(
        target(),
        b"\xff\xff\xff\xffprint\n\\hostname\\Box\n1 2 \"a\"\n1 x \"bad\"\n3 4 \"c",
        t0 + ms(1),
    );
    let status = s.poll_result().unwrap().unwrap();
    assert_eq!(status.players.len(), 1);
    assert!(!status.complete);
    assert_eq!(
        status.raw["incomplete"].as_array().unwrap().len(),
        2,
        "{}",
        status.raw
    );
}

#[test]
fn a_lost_request_is_sent_again_and_silence_is_a_timeout() {
    let t0 = Instant::now();
    let mut s = session(t0);
    let mut sent = 1;
    let mut now = t0;
    while let Some(at) = s.poll_timeout() {
        now = at;
        s.handle_timeout(now);
        sent += usize::from(s.poll_transmit(now).is_some());
    }
    assert_eq!(sent, 3, "one send and two retries");
    assert!(matches!(
        s.poll_result(),
        Some(Err(QueryError::Timeout { .. }))
    ));
    assert_eq!(now, t0 + 3 * TIMEOUT);
}

#[test]
fn garbage_other_protocols_and_other_sources_are_ignored_and_garbage_is_named() {
    let t0 = Instant::now();
    let mut s = session(t0);
    let other: SocketAddr = "127.0.0.1:27911".parse().unwrap();
    s.handle_datagram(
        other,
        b"\xff\xff\xff\xffprint\n\\hostname\\forged\n",
        t0 + ms(1),
    );
    s.handle_datagram(
        target(),
        b"\xff\xff\xff\xffstatusResponse\n\\sv_hostname\\q3\n",
        t0 + ms(2),
    );
    s.handle_datagram(target(), b"\xff\xff\xff\xffprint\n\\odd", t0 + ms(3));
    assert!(s.poll_result().is_none(), "none of those is an answer");
    while let Some(at) = s.poll_timeout() {
        s.handle_timeout(at);
        let _ = s.poll_transmit(at);
    }
    match s.poll_result() {
        Some(Err(QueryError::Malformed(e))) => assert!(e.to_string().contains("at byte"), "{e}"),
        other => panic!("expected the garbage named, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// The responder alone

fn state(players: usize) -> ServerState {
    ServerState {
        name: "Loop\\back — Zoë".to_owned(),
        map: "q2dm1".to_owned(),
        game_type: "ctf".to_owned(),
        version: "gsq 1".to_owned(),
        max_players: 64,
        password: true,
        players: (0..players)
            .map(|i| PlayerState {
                name: format!("Pläyer \"{i}\""),
                score: i as i64 - 5,
                ping: (i % 300) as u32,
                ..PlayerState::default()
            })
            .collect(),
        rules: [
            ("fraglimit".to_owned(), RuleValue::Integer(20)),
            ("weather".to_owned(), RuleValue::Text("Café fog".to_owned())),
        ]
        .into_iter()
        .collect(),
        ..ServerState::default()
    }
}

fn answers(state: ServerState, request: &[u8]) -> Vec<Vec<u8>> {
    let responder = Quake2Responder::new(SharedState::new(state), Quake2Config::default());
    let mut service = Service::new(responder).rate_limit(None);
    let from: SocketAddr = "192.0.2.1:5000".parse().unwrap();
    service.handle(from, request).map(<[u8]>::to_vec).collect()
}

#[test]
fn the_responder_answers_every_form_of_status_and_drops_the_rest() {
    for request in [
        STATUS,
        b"\xff\xff\xff\xffstatus",
        b"\xff\xff\xff\xffstatus\0",
        b"\xff\xff\xff\xffstatus 23\n",
    ] {
        let replies = answers(state(2), request);
        assert_eq!(replies.len(), 1, "{request:?}");
        assert!(replies[0].starts_with(b"\xff\xff\xff\xffprint\n\\hostname\\Loop?back"));
    }
    for request in [
        &b"\xff\xff\xff\xffstatusX\n"[..],
        b"\xff\xff\xff\xffstatus\nsecond line",
        b"\xff\xff\xff\xffgetstatus\n",
        b"status\n",
        b"",
    ] {
        assert!(answers(state(2), request).is_empty(), "{request:?}");
    }
}

/// Like a real server, one datagram within Quake 2's size, players cut where it is full.
#[test]
fn a_large_state_is_one_datagram_with_the_players_that_fit() {
    let replies = answers(state(500), STATUS);
    assert_eq!(replies.len(), 1);
    assert!(
        replies[0].len() <= 1390 && replies[0].len() > 1300,
        "{}",
        replies[0].len()
    );
    let status =
        query_net::replay::status_from_replies(Protocol::Quake2, target(), &replies, &options())
            .unwrap();
    assert!(status.players.len() > 40 && status.players.len() < 500);
}

// ---------------------------------------------------------------------------------------------
// Over loopback

async fn serve(state: ServerState) -> (SocketAddr, CancellationToken, tokio::task::JoinHandle<()>) {
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = socket.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let token = shutdown.clone();
    let task = tokio::spawn(async move {
        let responder = Quake2Responder::new(SharedState::new(state), Quake2Config::default());
        let mut service = Service::new(responder).rate_limit(None);
        driver::serve(&socket, &mut service, &token).await.unwrap();
    });
    (addr, shutdown, task)
}

fn check_status(status: &ServerStatus, served: &ServerState) {
    // `\` cannot be sent in a pair.
    assert_eq!(status.name, "Loop?back — Zoë");
    assert_eq!(status.map.as_deref(), Some("q2dm1"));
    assert_eq!(status.game_type.as_deref(), Some("ctf"));
    assert_eq!(status.version.as_deref(), Some("gsq 1"));
    assert_eq!(status.max_players, 64);
    assert_eq!(status.password, Some(true));
    assert_eq!(status.rules["weather"], "Café fog");
    assert_eq!(status.rules["fraglimit"], "20");
    assert_eq!(status.rules["gamename"], "baseq2");
    let got: Vec<_> = status.players.iter().map(|p| (p.score, p.ping)).collect();
    let want: Vec<_> = served
        .players
        .iter()
        .map(|p| (Some(p.score), Some(p.ping)))
        .collect();
    assert_eq!(got, want);
    for (i, p) in status.raw["players"].as_array().unwrap().iter().enumerate() {
        assert_eq!(p["name"], format!("Pläyer ?{i}?"));
        assert_eq!(status.players[i].name, format!("Pläyer ?{i}?"));
    }
}

#[tokio::test]
async fn the_client_reads_the_responder_over_loopback() {
    let served = state(20);
    let (addr, shutdown, task) = serve(served.clone()).await;
    let status = driver::query_quake2(addr.to_string(), &options())
        .await
        .unwrap();
    assert!(status.complete);
    check_status(&status, &served);
    shutdown.cancel();
    task.await.unwrap();
}

#[tokio::test]
async fn through_a_lossy_reordering_link_the_answer_is_whole_or_a_timeout() {
    let served = state(20);
    let (addr, shutdown, task) = serve(served.clone()).await;
    let proxy = LossyProxy::start(
        addr,
        Impairments {
            drop: 0.3,
            duplicate: 0.3,
            reorder: 0.3,
            ..Impairments::default()
        },
        11,
    )
    .await
    .unwrap();
    let options = Options {
        timeout: Duration::from_millis(200),
        retries: 4,
        ..Options::default()
    };
    let mut whole = 0;
    for _ in 0..10 {
        match driver::query(Protocol::Quake2, &proxy.addr().to_string(), &options).await {
            Ok(status) => {
                check_status(&status, &served);
                whole += 1;
            }
            Err(QueryError::Timeout { .. }) => {}
            Err(e) => panic!("{e}"),
        }
    }
    assert!(whole > 0, "no answer in 10 queries");
    shutdown.cancel();
    task.await.unwrap();
}
