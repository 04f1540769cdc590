//! SA:MP client against SA:MP responder over loopback UDP: every field served comes back, also
//! through a lossy link, and forged replies are ignored.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use query_net::driver;
use query_net::engines::samp::{self, OpenMpInfo, SampConfig, SampResponder};
use query_net::service::Service;
use query_net::state::{PlayerState, ServerState, SharedState};
use query_net::testing::lossy::{Impairments, LossyProxy};
use query_net::{Options, Player, Protocol, QueryError, RconCommand, ServerStatus};
use query_wire::TextEncoding;
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
    async fn start(responder: SampResponder) -> Self {
        let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let addr = socket.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        let token = shutdown.clone();
        let task = tokio::spawn(async move {
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

fn player(name: &str, score: i64, ping: u32, id: Option<u32>) -> PlayerState {
    PlayerState {
        name: name.to_owned(),
        score,
        ping,
        id,
        ..PlayerState::default()
    }
}

fn state() -> ServerState {
    ServerState {
        name: "Café Los Santos".into(),
        game_type: "Freeroam/DM".into(),
        language: "Español".into(),
        map: "San Andreas".into(),
        version: "0.3.7-R2".into(),
        max_players: 50,
        password: true,
        players: vec![
            player("Jürgen", 12, 40, Some(3)),
            player("Åsa", -7, 85, Some(9)),
            player("Ñandú", 0, 120, None),
            player("Zoë_Çelik", 2_000_000, 7, Some(200)),
        ],
        rules: [
            ("lagcomp", "On"),
            ("weather", "10"),
            ("weburl", "www.example.com/¿qué?"),
            ("worldtime", "12:00"),
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
    let mut rules = indexmap::IndexMap::new();
    rules.insert("mapname".to_owned(), state.map.clone());
    rules.insert("version".to_owned(), state.version.clone());
    for (k, v) in &state.rules {
        rules.insert(k.clone(), v.to_string());
    }
    ServerStatus {
        protocol: Protocol::Samp,
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
            .enumerate()
            .map(|(i, p)| Player {
                name: p.name.clone(),
                score: Some(p.score),
                ping: Some(p.ping),
                id: Some(p.id.unwrap_or(i as u32)),
                ..Player::default()
            })
            .collect(),
        teams: Vec::new(),
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

/// The client-list (`c`) view of the same players: names and scores only.
fn as_client_list(mut status: ServerStatus) -> ServerStatus {
    for p in &mut status.players {
        p.ping = None;
        p.id = None;
    }
    status
}

#[tokio::test]
async fn every_field_served_is_received_including_windows_1252_names() {
    let server = Server::start(SampResponder::new(
        SharedState::new(state()),
        SampConfig::default(),
    ))
    .await;
    let status = driver::query(Protocol::Samp, &server.addr.to_string(), &options())
        .await
        .unwrap();
    let raw = status.raw.clone();
    assert_eq!(without_timing(status), expected(&state(), server.addr));
    assert_eq!(raw["info"]["language"], "Español");
    assert_eq!(raw["info"]["gamemode"], "Freeroam/DM");
    assert_eq!(raw["info"]["players"], 4);
    assert_eq!(raw["open_mp"], false);
    assert_eq!(raw["player_list"], "d");
    assert_eq!(raw["text_hex"]["players"]["1"], "c57361");
    assert_eq!(
        raw["text_hex"]["rules"]["weburl"],
        "7777772e6578616d706c652e636f6d2fbf7175e93f"
    );
    server.stop().await;
}

#[tokio::test]
async fn an_open_mp_server_is_recognised_over_the_wire() {
    let extra = OpenMpInfo {
        discord: "discord.gg/omp".into(),
        light_banner: "https://example.com/light.png".into(),
        dark_banner: "https://example.com/dark.png".into(),
        logo: "https://example.com/logo.png".into(),
    };
    let server = Server::start(SampResponder::new(
        SharedState::new(state()),
        SampConfig::open_mp(extra.clone()),
    ))
    .await;
    let started = std::time::Instant::now();
    let status = driver::query(Protocol::Samp, &server.addr.to_string(), &options())
        .await
        .unwrap();
    assert!(
        started.elapsed() < options().timeout,
        "no timeout waited for `d`"
    );
    let raw = status.raw.clone();
    assert_eq!(
        without_timing(status),
        as_client_list(expected(&state(), server.addr))
    );
    assert_eq!(raw["open_mp"], true);
    assert_eq!(raw["player_list"], "c");
    for (key, value) in [
        ("discord", &extra.discord),
        ("light_banner", &extra.light_banner),
        ("dark_banner", &extra.dark_banner),
        ("logo", &extra.logo),
    ] {
        assert_eq!(raw["open_mp_extra"][key], value.as_str());
    }
    server.stop().await;
}

#[tokio::test]
async fn a_cyrillic_server_read_as_windows_1251() {
    let russian = ServerState {
        name: "Русский сервер".into(),
        game_type: "Дрифт".into(),
        language: "Русский".into(),
        players: vec![player("Иван", 5, 50, Some(0))],
        ..state()
    };
    let server = Server::start(SampResponder::new(
        SharedState::new(russian.clone()),
        SampConfig {
            encoding: TextEncoding::Windows1251,
            ..SampConfig::default()
        },
    ))
    .await;
    let status = driver::query(
        Protocol::Samp,
        &server.addr.to_string(),
        &Options {
            encoding: Some(TextEncoding::Windows1251),
            ..options()
        },
    )
    .await
    .unwrap();
    // Windows-1252 text of the default state round-trips too: its characters are in 1251
    // only partly, so compare what the Russian state carries.
    assert_eq!(status.name, "Русский сервер");
    assert_eq!(status.game_type.as_deref(), Some("Дрифт"));
    assert_eq!(status.raw["info"]["language"], "Русский");
    assert_eq!(status.players[0].name, "Иван");
    server.stop().await;
}

#[tokio::test]
async fn rcon_over_the_wire() {
    let server = Server::start(
        SampResponder::new(
            SharedState::new(state()),
            SampConfig {
                rcon_password: Some("changeme".into()),
                ..SampConfig::default()
            },
        )
        .with_rcon_handler(|command, state| match command {
            "players" => state
                .players
                .iter()
                .map(|p| format!("{}: {}", p.name, p.score))
                .collect(),
            other => vec![format!("Unknown command or variable: {other}")],
        }),
    )
    .await;
    let run = |password: &str, command: &str| {
        let session = samp::rcon_session(
            server.addr,
            &RconCommand {
                password: password.into(),
                command: command.into(),
            },
            &options(),
        )
        .unwrap()
        .with_quiet_period(Duration::from_millis(100));
        driver::query_session(session)
    };
    assert_eq!(
        run("changeme", "players").await.unwrap(),
        ["Jürgen: 12", "Åsa: -7", "Ñandú: 0", "Zoë_Çelik: 2000000"]
    );
    assert_eq!(
        run("changeme", "gmx").await.unwrap(),
        ["Unknown command or variable: gmx"]
    );
    let err = run("wrong", "players").await.unwrap_err();
    assert!(matches!(err, QueryError::AuthRequired(_)), "{err}");
    server.stop().await;
}

#[tokio::test]
async fn forged_replies_from_another_port_or_with_another_header_are_ignored() {
    let server = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let spoofer = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = server.local_addr().unwrap();
    let evil_state = ServerState {
        name: "EVIL".into(),
        players: vec![player("mallory", 999, 1, None)],
        ..state()
    };
    let forging = tokio::spawn(async move {
        let mut real = Service::new(SampResponder::new(
            SharedState::new(state()),
            SampConfig::default(),
        ))
        .rate_limit(None);
        let mut evil = Service::new(SampResponder::new(
            SharedState::new(evil_state),
            SampConfig::default(),
        ))
        .rate_limit(None);
        let mut buf = vec![0u8; 2048];
        let mut forged_sent = 0;
        loop {
            let Ok(Ok((len, from))) =
                tokio::time::timeout(Duration::from_millis(500), server.recv_from(&mut buf)).await
            else {
                return forged_sent;
            };
            let forged: Vec<Vec<u8>> = evil.handle(from, &buf[..len]).map(<[u8]>::to_vec).collect();
            for reply in &forged {
                // The right header from another port...
                spoofer.send_to(reply, from).await.unwrap();
                // ...and the right port with another header.
                let mut other = reply.clone();
                other[8] ^= 0x40;
                server.send_to(&other, from).await.unwrap();
                forged_sent += 2;
            }
            let replies: Vec<Vec<u8>> =
                real.handle(from, &buf[..len]).map(<[u8]>::to_vec).collect();
            for reply in replies {
                server.send_to(&reply, from).await.unwrap();
            }
        }
    });
    let status = driver::query(Protocol::Samp, &addr.to_string(), &options())
        .await
        .unwrap();
    assert_eq!(without_timing(status), expected(&state(), addr));
    // Two forgeries for each of `i`, `r` and `d`.
    assert!(forging.await.unwrap() >= 6);
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
            let session = samp::client(proxy.addr(), &options).unwrap();
            tokio::spawn(driver::query_session(session))
        })
        .collect();
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await.unwrap());
    }
    (results, proxy)
}

/// The answer the client must give through the proxy: the served state, as `d` or `c` list.
fn right_answer(status: &ServerStatus, proxy: SocketAddr) -> ServerStatus {
    let truth = expected(&state(), proxy);
    match status.raw["player_list"].as_str() {
        Some("d") => truth,
        Some("c") => as_client_list(truth),
        _ => ServerStatus {
            players: Vec::new(),
            complete: false,
            ..truth
        },
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_loss_duplication_reordering_and_delay_the_answer_is_right_or_a_timeout() {
    let server = Server::start(SampResponder::new(
        SharedState::new(state()),
        SampConfig::default(),
    ))
    .await;
    let impairments = Impairments {
        drop: 0.2,
        duplicate: 0.2,
        reorder: 0.2,
        max_delay: Duration::from_millis(5),
        reorder_hold: Duration::from_millis(10),
        ..Impairments::default()
    };
    let (results, proxy) = through_proxy(server.addr, impairments, 4242, 12).await;
    let mut right = 0;
    for result in results {
        match result {
            Ok(status) => {
                let truth = right_answer(&status, proxy.addr());
                assert_eq!(without_timing(status), truth);
                right += 1;
            }
            Err(QueryError::Timeout { attempts: 5, .. }) => {}
            Err(other) => panic!("{other}"),
        }
    }
    assert!(right >= 6, "{right} of 12");
    let stats = proxy.stats();
    assert!(
        stats.dropped > 0 && stats.duplicated > 0 && stats.reordered > 0,
        "{stats:?}"
    );
    server.stop().await;
}

/// SA:MP replies carry no checksum: a byte flipped inside a name or a score decodes to another
/// name or score, and no client can tell. What the client does guarantee: a flip in the header,
/// the echo or a length is ignored (the request is retried), nothing panics or hangs, and an
/// answer differs from the truth only where the flipped bytes were: one flipped byte changes
/// one value, or one rule name (three leaves: the rule gone, a new one, and `map` or `version`
/// when it was their rule).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_corruption_errors_are_clear_and_differences_stay_where_bytes_flipped() {
    let server = Server::start(SampResponder::new(
        SharedState::new(state()),
        SampConfig::default(),
    ))
    .await;
    let impairments = Impairments {
        drop: 0.1,
        duplicate: 0.1,
        corrupt: 0.1,
        ..Impairments::default()
    };
    let (results, proxy) = through_proxy(server.addr, impairments, 77, 12).await;
    let corrupted = proxy.stats().corrupted;
    assert!(corrupted > 0);
    let (mut exact, mut differences) = (0, 0);
    for result in results {
        match result {
            Ok(status) => {
                let truth = right_answer(&status, proxy.addr());
                let status = without_timing(status);
                match differing_leaves(&status, &truth) {
                    0 => exact += 1,
                    n => differences += n,
                }
            }
            Err(QueryError::Timeout { .. } | QueryError::Malformed(_)) => {}
            Err(other) => panic!("{other}"),
        }
    }
    assert!(
        differences <= 3 * corrupted as usize,
        "{differences} values differ after {corrupted} corrupted datagrams"
    );
    assert!(exact >= 2, "{exact} exact of 12");
    server.stop().await;
}
