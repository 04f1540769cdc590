//! GameSpy v1 client against GameSpy v1 responder over loopback UDP: every field served comes
//! back, a large reply in several datagrams, what a lossy link leaves marked incomplete, and
//! forged datagrams from another port ignored.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use indexmap::IndexMap;
use query_net::driver;
use query_net::engines::gamespy1::{self, GameSpy1Config, GameSpy1Responder};
use query_net::service::Service;
use query_net::state::{PlayerState, ServerState, SharedState, TeamState};
use query_net::testing::lossy::{Impairments, LossyProxy};
use query_net::{Options, Player, Protocol, QueryError, ServerStatus, Team};
use serde_json::Value;
use tokio::net::UdpSocket;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

struct Server {
    addr: SocketAddr,
    shutdown: CancellationToken,
    task: JoinHandle<std::io::Result<()>>,
}

impl Server {
    async fn start(state: ServerState) -> Self {
        let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let addr = socket.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        let token = shutdown.clone();
        let task = tokio::spawn(async move {
            let responder = GameSpy1Responder::new(SharedState::new(state), config());
            let mut service = Service::new(responder).rate_limit(None);
            driver::serve(&socket, &mut service, &token).await
        });
        Server {
            addr,
            shutdown,
            task,
        }
    }

    async fn stop(self) {
        self.shutdown.cancel();
        self.task.await.unwrap().unwrap();
    }
}

fn config() -> GameSpy1Config {
    GameSpy1Config {
        game_name: "ut".into(),
        ..GameSpy1Config::default()
    }
}

const NAMES: [&str; 5] = ["Jürgen", "Åsa", "Ñandú", "Zoë «the» Ölmez", "plain"];

/// A server with `n` players on two teams, names with Windows-1252 letters.
fn state(n: usize) -> ServerState {
    ServerState {
        name: "Café Fortress ±1".into(),
        map: "CTF-Façade".into(),
        game_type: "CTFGame".into(),
        version: "451".into(),
        max_players: 64,
        port: 7777,
        password: false,
        players: (0..n)
            .map(|i| PlayerState {
                name: format!("{} #{i}", NAMES[i % NAMES.len()]),
                score: i as i64 * 7 - 50,
                ping: 10 + i as u32,
                team: Some(if i % 3 == 0 { "Blue" } else { "Red" }.into()),
                ..PlayerState::default()
            })
            .collect(),
        teams: vec![
            TeamState {
                name: "Red".into(),
                score: 5,
            },
            TeamState {
                name: "Blue".into(),
                score: -2,
            },
        ],
        rules: [
            ("timelimit", "20"),
            ("AdminName", "Señor Admin"),
            ("mutators", "InstaGib, NoRedeemer"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.into()))
        .collect(),
        ..ServerState::default()
    }
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
    let mut rules = IndexMap::new();
    rules.insert("gamename".to_owned(), "ut".to_owned());
    rules.insert("hostport".to_owned(), state.port.to_string());
    for (k, v) in &state.rules {
        rules.insert(k.clone(), v.to_string());
    }
    ServerStatus {
        protocol: Protocol::GameSpy1,
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
                ping: Some(p.ping),
                team: p.team.clone(),
                ..Player::default()
            })
            .collect(),
        teams: state
            .teams
            .iter()
            .map(|t| Team {
                name: t.name.clone(),
                score: Some(t.score),
                ..Team::default()
            })
            .collect(),
        rules,
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
async fn every_field_served_is_received_including_windows_1252_text() {
    let state = state(5);
    let server = Server::start(state.clone()).await;
    let status = driver::query(Protocol::GameSpy1, &server.addr.to_string(), &options())
        .await
        .unwrap();
    let raw = status.raw.clone();
    assert_eq!(without_timing(status), expected(&state, server.addr));
    assert_eq!(raw["total_parts"], 1);
    assert_eq!(raw["query_id"], 1);
    assert_eq!(raw["stale_players"], 0);
    server.stop().await;
}

#[tokio::test]
async fn forty_players_and_more_arrive_in_several_datagrams() {
    let state = state(48);
    let server = Server::start(state.clone()).await;
    let status = driver::query(Protocol::GameSpy1, &server.addr.to_string(), &options())
        .await
        .unwrap();
    let raw = status.raw.clone();
    assert_eq!(without_timing(status), expected(&state, server.addr));
    let parts = raw["total_parts"].as_u64().unwrap();
    assert!(parts >= 3, "{parts} parts");
    assert_eq!(raw["parts_received"], parts);
    server.stop().await;
}

#[tokio::test]
async fn other_requests_get_their_sections() {
    let state = state(3);
    let server = Server::start(state.clone()).await;
    let status = driver::query(
        Protocol::GameSpy1,
        &server.addr.to_string(),
        &Options {
            gamespy_request: "\\info\\\\echo\\hello".into(),
            ..options()
        },
    )
    .await
    .unwrap();
    assert_eq!(status.name, state.name);
    assert_eq!(status.num_players, 3);
    assert!(status.players.is_empty(), "\\info\\ has no players");
    assert_eq!(status.password, None, "nor rules");
    assert_eq!(status.raw["echo"], "hello");
    server.stop().await;
}

#[tokio::test]
async fn forged_datagrams_from_another_port_are_ignored() {
    let server = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let spoofer = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = server.local_addr().unwrap();
    let truth = state(45);
    let evil = ServerState {
        name: "EVIL".into(),
        ..state(45)
    };
    let real_state = truth.clone();
    let forging = tokio::spawn(async move {
        let mut real = Service::new(GameSpy1Responder::new(
            SharedState::new(real_state),
            config(),
        ))
        .rate_limit(None);
        let mut evil =
            Service::new(GameSpy1Responder::new(SharedState::new(evil), config())).rate_limit(None);
        let mut buf = vec![0u8; 2048];
        let (len, from) = server.recv_from(&mut buf).await.unwrap();
        // Same query id, same parts, another name, sent first from another port.
        let forged: Vec<Vec<u8>> = evil.handle(from, &buf[..len]).map(<[u8]>::to_vec).collect();
        for datagram in &forged {
            spoofer.send_to(datagram, from).await.unwrap();
        }
        let replies: Vec<Vec<u8>> = real.handle(from, &buf[..len]).map(<[u8]>::to_vec).collect();
        for datagram in replies.iter().rev() {
            server.send_to(datagram, from).await.unwrap();
        }
        forged.len()
    });
    let status = driver::query(Protocol::GameSpy1, &addr.to_string(), &options())
        .await
        .unwrap();
    assert_eq!(without_timing(status), expected(&truth, addr));
    assert!(forging.await.unwrap() >= 2);
}

/// Queries `server` through a proxy with `impairments`, `sessions` times at once.
async fn through_proxy(
    server: SocketAddr,
    impairments: Impairments,
    seed: u64,
    sessions: usize,
) -> (Vec<Result<ServerStatus, QueryError>>, LossyProxy) {
    let proxy = LossyProxy::start(server, impairments, seed).await.unwrap();
    let options = Options {
        timeout: Duration::from_millis(150),
        retries: 4,
        ..Options::default()
    };
    let tasks: Vec<_> = (0..sessions)
        .map(|_| {
            let session = gamespy1::client(proxy.addr(), &options).unwrap();
            tokio::spawn(driver::query_session(session))
        })
        .collect();
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await.unwrap());
    }
    (results, proxy)
}

/// Checks that an incomplete answer holds nothing the server did not serve: each field is
/// either absent or right, each player and rule that came is one that was served.
fn assert_part_of(status: &ServerStatus, truth: &ServerStatus) {
    assert!(
        status.name.is_empty() || status.name == truth.name,
        "{status:?}"
    );
    for (got, want) in [
        (&status.map, &truth.map),
        (&status.game_type, &truth.game_type),
        (&status.version, &truth.version),
    ] {
        assert!(got.is_none() || got == want, "{got:?}");
    }
    assert!(status.password.is_none() || status.password == truth.password);
    assert!(status.max_players == 0 || status.max_players == truth.max_players);
    // A player's keys may straddle two parts, so a player may come without some of them, and
    // without the part that names the teams, a team is the number it was sent as.
    for player in &status.players {
        let served = truth.players.iter().any(|p| {
            let number = p
                .team
                .as_ref()
                .and_then(|name| truth.teams.iter().position(|t| &t.name == name))
                .map(|n| n.to_string());
            p.name == player.name
                && (player.score.is_none() || player.score == p.score)
                && (player.ping.is_none() || player.ping == p.ping)
                && (player.team.is_none() || player.team == p.team || player.team == number)
                && player.extra.is_empty()
                && player.id.is_none()
        });
        assert!(served, "{player:?} was not served");
    }
    for team in &status.teams {
        assert!(truth.teams.contains(team), "{team:?} was not served");
    }
    for (key, value) in &status.rules {
        assert_eq!(truth.rules.get(key), Some(value), "rule {key}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_a_lossy_link_the_answer_is_right_incomplete_or_a_timeout() {
    let state = state(60);
    let server = Server::start(state.clone()).await;
    let impairments = Impairments {
        drop: 0.15,
        duplicate: 0.2,
        reorder: 0.3,
        max_delay: Duration::from_millis(5),
        reorder_hold: Duration::from_millis(10),
        ..Impairments::default()
    };
    let (results, proxy) = through_proxy(server.addr, impairments, 31337, 12).await;
    let truth = expected(&state, proxy.addr());
    let (mut complete, mut incomplete) = (0, 0);
    for result in results {
        match result {
            Ok(status) if status.complete => {
                assert_eq!(status.raw["missing_parts"], serde_json::json!([]));
                assert_eq!(without_timing(status), truth);
                complete += 1;
            }
            Ok(status) => {
                assert!(
                    !status.raw["missing_parts"].as_array().unwrap().is_empty()
                        || status.raw["total_parts"].is_null()
                );
                assert!(
                    status.players.len() < truth.players.len()
                        || status.name.is_empty()
                        || status.raw["total_parts"].is_null()
                        || status.rules.len() < truth.rules.len()
                );
                assert_part_of(&without_timing(status), &truth);
                incomplete += 1;
            }
            Err(QueryError::Timeout { attempts: 5, .. }) => {}
            Err(other) => panic!("{other}"),
        }
    }
    assert!(
        complete + incomplete >= 9,
        "{complete} complete, {incomplete} incomplete of 12"
    );
    assert!(complete >= 1, "{complete} complete");
    let stats = proxy.stats();
    assert!(
        stats.dropped > 0 && stats.duplicated > 0 && stats.reordered > 0,
        "{stats:?}"
    );
    server.stop().await;
}

/// A forwarder between one client and `server` that always drops the reply datagrams that are
/// part `drop_part` of their query (`\queryid\X.<drop_part>`). Returns its address, and how many
/// requests it forwarded and replies it dropped.
async fn dropping_forwarder(
    server: SocketAddr,
    drop_part: u32,
) -> (
    SocketAddr,
    Arc<AtomicUsize>,
    Arc<AtomicUsize>,
    JoinHandle<()>,
) {
    let front = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let back = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = front.local_addr().unwrap();
    let (requests, dropped) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (counted_requests, counted_drops) = (Arc::clone(&requests), Arc::clone(&dropped));
    let task = tokio::spawn(async move {
        let mut client = None;
        let (mut up, mut down) = (vec![0u8; 65_535], vec![0u8; 65_535]);
        loop {
            tokio::select! {
                Ok((len, from)) = front.recv_from(&mut up) => {
                    client = Some(from);
                    counted_requests.fetch_add(1, Ordering::Relaxed);
                    back.send_to(&up[..len], server).await.unwrap();
                }
                Ok((len, _)) = back.recv_from(&mut down) => {
                    let Some(client) = client else { continue };
                    if part_number(&down[..len]) == Some(drop_part) {
                        counted_drops.fetch_add(1, Ordering::Relaxed);
                        continue;
                    }
                    front.send_to(&down[..len], client).await.unwrap();
                }
            }
        }
    });
    (addr, requests, dropped, task)
}

/// `Y` of the `\queryid\X.Y` a reply datagram carries.
fn part_number(datagram: &[u8]) -> Option<u32> {
    let text = String::from_utf8_lossy(datagram);
    let (_, after) = text.split_once("\\queryid\\")?;
    let id = after.split('\\').next()?;
    id.split_once('.')?.1.parse().ok()
}

#[tokio::test]
async fn a_part_that_never_arrives_leaves_the_rest_marked_incomplete() {
    let state = state(48);
    let server = Server::start(state.clone()).await;
    let (addr, requests, dropped, forwarder) = dropping_forwarder(server.addr, 2).await;
    let status = driver::query(Protocol::GameSpy1, &addr.to_string(), &options())
        .await
        .expect("the parts that came, not an error");
    forwarder.abort();
    let truth = expected(&state, addr);
    assert!(!status.complete);
    assert_eq!(status.raw["missing_parts"], serde_json::json!([2]));
    let total = status.raw["total_parts"].as_u64().unwrap();
    assert!(total >= 3, "{total} parts");
    assert_eq!(status.raw["parts_received"], total - 1);
    assert_eq!(dropped.load(Ordering::Relaxed), 1);
    // Once parts arrive, the request is not sent again: a new one would get a new query id.
    assert_eq!(requests.load(Ordering::Relaxed), 1);
    // The other parts all came: the server fields, the rules, players before and after the gap.
    let status = without_timing(status);
    assert_eq!(status.name, truth.name);
    assert_eq!(status.map, truth.map);
    assert_eq!(status.num_players, truth.num_players);
    assert_eq!(status.rules, truth.rules);
    assert!(!status.players.is_empty());
    assert!(status.players.len() < truth.players.len());
    assert_eq!(status.players[0], truth.players[0]);
    assert_eq!(status.players.last(), truth.players.last());
    assert_part_of(&status, &truth);
    server.stop().await;
}

/// Paths and values of every leaf of a JSON value.
fn leaves(value: &Value, path: String, out: &mut BTreeMap<String, Value>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                leaves(v, format!("{path}/{k}"), out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                leaves(v, format!("{path}/{i}"), out);
            }
        }
        leaf => {
            out.insert(path, leaf.clone());
        }
    }
}

/// How many leaf values two statuses differ in.
fn differing_leaves(a: &ServerStatus, b: &ServerStatus) -> usize {
    let (mut x, mut y) = (BTreeMap::new(), BTreeMap::new());
    leaves(&serde_json::to_value(a).unwrap(), String::new(), &mut x);
    leaves(&serde_json::to_value(b).unwrap(), String::new(), &mut y);
    let keys: std::collections::BTreeSet<_> = x.keys().chain(y.keys()).collect();
    keys.into_iter().filter(|k| x.get(*k) != y.get(*k)).count()
}

/// GameSpy text carries no checksum: a byte flipped inside a value is another value, and no
/// client can tell. What the client guarantees: a flip that breaks the format (a delimiter, a
/// number, the `\queryid\`) is dropped or reported, nothing panics or hangs, and a complete
/// answer differs from the truth only around the flipped bytes (a flipped key moves one value
/// to another key: a few leaves per flipped byte).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_corruption_errors_are_clear_and_differences_stay_where_bytes_flipped() {
    let state = state(20);
    let server = Server::start(state.clone()).await;
    let impairments = Impairments {
        drop: 0.05,
        corrupt: 0.15,
        ..Impairments::default()
    };
    let (results, proxy) = through_proxy(server.addr, impairments, 99, 12).await;
    let truth = expected(&state, proxy.addr());
    let corrupted = proxy.stats().corrupted;
    assert!(corrupted > 0);
    let (mut exact, mut differences) = (0, 0);
    for result in results {
        match result {
            Ok(status) if status.complete => {
                match differing_leaves(&without_timing(status), &truth) {
                    0 => exact += 1,
                    n => differences += n,
                }
            }
            Ok(_) | Err(QueryError::Timeout { .. } | QueryError::Malformed(_)) => {}
            Err(other) => panic!("{other}"),
        }
    }
    assert!(
        differences <= 6 * corrupted as usize,
        "{differences} values differ after {corrupted} corrupted datagrams"
    );
    assert!(exact >= 2, "{exact} exact of 12");
    server.stop().await;
}
