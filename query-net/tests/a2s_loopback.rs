//! A2S client against A2S responder over loopback UDP: every field served comes back, replies
//! past 1400 bytes arrive in Source parts, one challenge serves the whole query, counts past
//! 255 travel in the keywords, and a lossy link gives the right answer, part of it, or a
//! timeout.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use query_net::driver;
use query_net::engines::a2s::{self, A2sConfig, A2sResponder};
use query_net::limit::Stats;
use query_net::service::Service;
use query_net::state::{PlayerState, RuleValue, ServerState, SharedState};
use query_net::testing::lossy::{Impairments, LossyProxy};
use query_net::{Options, Player, Protocol, QueryError, ServerStatus};
use serde_json::Value;
use tokio::net::UdpSocket;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

struct Server {
    addr: SocketAddr,
    stats: Arc<Stats>,
    shutdown: CancellationToken,
    task: JoinHandle<std::io::Result<()>>,
}

impl Server {
    async fn start(state: ServerState, config: A2sConfig) -> Self {
        let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let addr = socket.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        let token = shutdown.clone();
        let mut service =
            Service::new(A2sResponder::new(SharedState::new(state), config)).rate_limit(None);
        let stats = Arc::clone(service.stats());
        let task = tokio::spawn(async move { driver::serve(&socket, &mut service, &token).await });
        Server {
            addr,
            stats,
            shutdown,
            task,
        }
    }

    async fn stop(self) {
        self.shutdown.cancel();
        self.task.await.unwrap().unwrap();
    }
}

const NAMES: [&str; 4] = ["Zoë", "名無し", "Jürgen «pro»", "plain"];

/// A server with `players` players and `rules` extra rules, names in several scripts.
fn state(players: usize, rules: usize) -> ServerState {
    let mut state = ServerState {
        name: "Café Source ±1".into(),
        map: "de_façade".into(),
        game_type: "Counter-Strike".into(),
        version: "1.38.7.9".into(),
        max_players: 32,
        port: 27015,
        password: true,
        players: (0..players)
            .map(|i| PlayerState {
                name: format!("{} #{i}", NAMES[i % NAMES.len()]),
                score: i as i64 * 7 - 50,
                ..PlayerState::default()
            })
            .collect(),
        ..ServerState::default()
    };
    state.rules = [
        ("mp_friendlyfire".to_owned(), RuleValue::Bool(false)),
        ("mp_timelimit".to_owned(), RuleValue::Integer(45)),
        ("sv_gravity".to_owned(), RuleValue::Float(800.0)),
        (
            "sv_contact".to_owned(),
            RuleValue::from("admin@example.com"),
        ),
    ]
    .into_iter()
    .chain((0..rules).map(|i| (format!("sm_setting_{i:03}"), RuleValue::from("on"))))
    .collect();
    state
}

fn options() -> Options {
    Options {
        timeout: Duration::from_millis(300),
        retries: 2,
        ..Options::default()
    }
}

/// What a client must see of `state`, with `ping_ms` and `raw` zeroed (checked apart).
fn expected(state: &ServerState, address: SocketAddr) -> ServerStatus {
    ServerStatus {
        protocol: Protocol::A2s,
        address,
        name: state.name.clone(),
        map: Some(state.map.clone()),
        game_type: Some(state.game_type.clone()),
        version: Some(state.version.clone()),
        num_players: state.num_players(),
        max_players: state.max_players,
        password: Some(state.password),
        players: state
            .players
            .iter()
            .map(|p| Player {
                name: p.name.clone(),
                score: Some(p.score),
                duration: Some(0.0),
                ..Player::default()
            })
            .collect(),
        teams: Vec::new(),
        rules: state
            .rules
            .iter()
            .map(|(k, v)| {
                let text = match v {
                    RuleValue::Bool(b) => u8::from(*b).to_string(),
                    other => other.to_string(),
                };
                (k.clone(), text)
            })
            .collect(),
        ping_ms: 0.0,
        complete: true,
        raw: Value::Null,
    }
}

fn without_timing(mut status: ServerStatus) -> ServerStatus {
    assert!(
        status.ping_ms > 0.0 && status.ping_ms < 1000.0,
        "{}",
        status.ping_ms
    );
    status.ping_ms = 0.0;
    status.raw = Value::Null;
    status
}

#[tokio::test]
async fn every_field_served_is_received_with_one_challenge_for_the_query() {
    let state = state(5, 0);
    let config = A2sConfig {
        folder: "cstrike".into(),
        app_id: 240,
        keywords: "secure,casual".into(),
        steam_id: Some(90_071_996_842_377_216),
        ..A2sConfig::default()
    };
    let server = Server::start(state.clone(), config).await;
    let status = driver::query(Protocol::A2s, &server.addr.to_string(), &options())
        .await
        .unwrap();
    let raw = status.raw.clone();
    assert_eq!(without_timing(status), expected(&state, server.addr));
    assert_eq!(raw["folder"], "cstrike");
    assert_eq!(raw["app_id"], 240);
    assert_eq!(raw["protocol"], 17);
    assert_eq!(raw["server_type"], "d");
    assert_eq!(raw["vac"], false);
    assert_eq!(raw["port"], 27015);
    assert_eq!(raw["keywords"], "secure,casual");
    assert_eq!(raw["steam_id"], "90071996842377216");
    assert_eq!(raw["players_count"], 5);
    assert_eq!(raw["rules_count"], 4);
    // INFO without a challenge, INFO with it, then PLAYER and RULES with the same one.
    let stats = server.stats.snapshot();
    assert_eq!((stats.received, stats.answered), (4, 4), "{stats:?}");
    server.stop().await;
}

#[tokio::test]
async fn replies_past_1400_bytes_arrive_whole_in_source_parts() {
    let state = state(120, 150);
    let server = Server::start(state.clone(), A2sConfig::default()).await;
    let status = driver::query(Protocol::A2s, &server.addr.to_string(), &options())
        .await
        .unwrap();
    assert_eq!(without_timing(status), expected(&state, server.addr));
    // Four requests, but more datagrams: the challenge and INFO, then PLAYER and RULES in two
    // parts or more each.
    let stats = server.stats.snapshot();
    assert_eq!(stats.received, 4, "{stats:?}");
    assert!(stats.replies_sent >= 2 + 2 + 2, "{stats:?}");
    server.stop().await;
}

#[tokio::test]
async fn counts_past_255_come_back_through_the_keywords() {
    let mut state = state(300, 0);
    state.max_players = 1000;
    let server = Server::start(state.clone(), A2sConfig::default()).await;
    let status = driver::query(Protocol::A2s, &server.addr.to_string(), &options())
        .await
        .unwrap();
    assert_eq!((status.num_players, status.max_players), (300, 1000));
    assert_eq!(status.players.len(), 255, "PLAYER's count is a u8");
    assert_eq!(status.raw["players_count"], 255);
    // The list is shorter than the count, and the status says so.
    assert!(!status.complete);
    assert_eq!(status.raw["players_missing"], 45);
    server.stop().await;
}

#[tokio::test]
async fn info_answered_without_a_challenge_when_configured() {
    let state = state(3, 0);
    let config = A2sConfig {
        info_challenge: false,
        ..A2sConfig::default()
    };
    let server = Server::start(state.clone(), config).await;
    let status = driver::query(Protocol::A2s, &server.addr.to_string(), &options())
        .await
        .unwrap();
    assert_eq!(without_timing(status), expected(&state, server.addr));
    // INFO at once; PLAYER first gets the challenge, then it and RULES are answered.
    let stats = server.stats.snapshot();
    assert_eq!(stats.received, 4, "{stats:?}");
    server.stop().await;
}

/// Checks that an incomplete answer holds nothing the server did not serve.
fn assert_part_of(status: &ServerStatus, truth: &ServerStatus) {
    assert_eq!(status.name, truth.name, "INFO is never partial");
    for player in &status.players {
        assert!(truth.players.contains(player), "{player:?} was not served");
    }
    for (key, value) in &status.rules {
        assert_eq!(truth.rules.get(key), Some(value), "rule {key}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_a_lossy_link_the_answer_is_right_partial_or_a_timeout() {
    let state = state(80, 100);
    let server = Server::start(state.clone(), A2sConfig::default()).await;
    let impairments = Impairments {
        drop: 0.1,
        duplicate: 0.2,
        reorder: 0.3,
        max_delay: Duration::from_millis(5),
        reorder_hold: Duration::from_millis(10),
        ..Impairments::default()
    };
    let proxy = LossyProxy::start(server.addr, impairments, 2020)
        .await
        .unwrap();
    let options = Options {
        timeout: Duration::from_millis(150),
        retries: 4,
        ..Options::default()
    };
    let tasks: Vec<_> = (0..12)
        .map(|_| {
            let session = a2s::client(proxy.addr(), &options).unwrap();
            tokio::spawn(driver::query_session(session))
        })
        .collect();
    let truth = expected(&state, proxy.addr());
    let (mut complete, mut partial) = (0, 0);
    for task in tasks {
        match task.await.unwrap() {
            Ok(status) if status.complete => {
                assert_eq!(without_timing(status), truth);
                complete += 1;
            }
            Ok(status) => {
                assert_part_of(&without_timing(status), &truth);
                partial += 1;
            }
            Err(QueryError::Timeout { .. }) => {}
            Err(other) => panic!("{other}"),
        }
    }
    assert!(
        complete + partial >= 9,
        "{complete} complete, {partial} partial of 12"
    );
    assert!(complete >= 1, "{complete} complete");
    let stats = proxy.stats();
    assert!(
        stats.dropped > 0 && stats.duplicated > 0 && stats.reordered > 0,
        "{stats:?}"
    );
    server.stop().await;
}
