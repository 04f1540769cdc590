//! Every protocol over IPv6: the generic `driver::query` against each responder on `[::1]`.
//!
//! A machine without IPv6 on loopback skips these tests with a message, except under `CI=true`,
//! where a missing `::1` fails them: CI must prove IPv6 works.

use std::net::SocketAddr;
use std::time::Duration;

use query_net::driver;
use query_net::engine::Responder;
use query_net::engines::gamespy1::{GameSpy1Config, GameSpy1Responder};
use query_net::engines::onequery::OneQueryResponder;
use query_net::engines::samp::{SampConfig, SampResponder};
use query_net::engines::sqp::{ChunkSet, SqpResponder};
use query_net::service::Service;
use query_net::state::{PlayerState, ServerState, SharedState};
use query_net::{Options, Protocol, ServerStatus};
use tokio::net::UdpSocket;
use tokio_util::sync::CancellationToken;

fn state() -> ServerState {
    ServerState {
        name: "IPv6 Ünïcode server".to_owned(),
        map: "Dust".to_owned(),
        game_type: "tdm".to_owned(),
        version: "1.2".to_owned(),
        max_players: 32,
        port: 7777,
        players: vec![
            PlayerState {
                name: "Zoë".to_owned(),
                score: 7,
                ping: 20,
                ..PlayerState::default()
            },
            PlayerState {
                name: "Åsa".to_owned(),
                score: 3,
                ping: 40,
                ..PlayerState::default()
            },
        ],
        rules: [("mode".to_owned(), "tdm".into())].into_iter().collect(),
        ..ServerState::default()
    }
}

/// A socket on `[::1]`, or `None` (with the reason printed) when this machine has no IPv6
/// loopback. Under `CI=true` a missing `::1` is a failure.
async fn bind_v6() -> Option<UdpSocket> {
    match UdpSocket::bind("[::1]:0").await {
        Ok(socket) => Some(socket),
        Err(e) => {
            let ci = std::env::var("CI").is_ok_and(|v| v == "true");
            assert!(!ci, "CI=true but [::1] is not available: {e}");
            println!("skipped: cannot bind [::1] on this machine ({e})");
            None
        }
    }
}

/// Serves `responder` on `[::1]` until the returned token is cancelled (or dropped with the
/// test's runtime).
async fn serve_v6(
    responder: impl Responder + Send + 'static,
) -> Option<(SocketAddr, CancellationToken)> {
    let socket = bind_v6().await?;
    let addr = socket.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let token = shutdown.clone();
    tokio::spawn(async move {
        let mut service = Service::new(responder).rate_limit(None);
        driver::serve(&socket, &mut service, &token).await
    });
    Some((addr, shutdown))
}

fn options() -> Options {
    Options {
        timeout: Duration::from_millis(500),
        retries: 2,
        sqp_chunks: ChunkSet::all(),
        ..Options::default()
    }
}

/// Queries `protocol` at `addr` by its `[v6]:port` text and checks what the state served.
async fn query_and_check(protocol: Protocol, addr: SocketAddr) -> ServerStatus {
    assert!(addr.is_ipv6());
    let status = driver::query(protocol, addr.to_string().as_str(), &options())
        .await
        .unwrap_or_else(|e| panic!("{protocol} over {addr}: {e}"));
    let truth = state();
    assert_eq!(status.protocol, protocol);
    assert_eq!(status.address, addr);
    assert_eq!(status.name, truth.name, "{protocol}");
    assert_eq!(status.num_players, 2, "{protocol}");
    assert_eq!(status.max_players, 32, "{protocol}");
    assert!(status.complete, "{protocol}");
    let mut names: Vec<&str> = status.players.iter().map(|p| p.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["Zoë", "Åsa"], "{protocol}");
    status
}

#[tokio::test]
async fn sqp_over_ipv6() {
    let Some((addr, _stop)) = serve_v6(SqpResponder::new(SharedState::new(state()))).await else {
        return;
    };
    let status = query_and_check(Protocol::Sqp, addr).await;
    assert_eq!(status.map.as_deref(), Some("Dust"));
    assert_eq!(status.rules["mode"], "tdm");
}

#[tokio::test]
async fn onequery_over_ipv6() {
    let Some((addr, _stop)) = serve_v6(OneQueryResponder::new(SharedState::new(state()))).await
    else {
        return;
    };
    let status = query_and_check(Protocol::OneQuery, addr).await;
    assert_eq!(status.version.as_deref(), Some("1.2"));
}

#[tokio::test]
async fn samp_over_ipv6() {
    let responder = SampResponder::new(SharedState::new(state()), SampConfig::default());
    let Some((addr, _stop)) = serve_v6(responder).await else {
        return;
    };
    let status = query_and_check(Protocol::Samp, addr).await;
    assert_eq!(status.rules["mode"], "tdm");
}

#[tokio::test]
async fn gamespy1_over_ipv6() {
    let responder = GameSpy1Responder::new(SharedState::new(state()), GameSpy1Config::default());
    let Some((addr, _stop)) = serve_v6(responder).await else {
        return;
    };
    let status = query_and_check(Protocol::GameSpy1, addr).await;
    assert_eq!(status.map.as_deref(), Some("Dust"));
    assert_eq!(status.rules["mode"], "tdm");
}

/// The per-protocol calls take a socket address directly.
#[tokio::test]
async fn the_per_protocol_calls_take_an_ipv6_socket_address() {
    let Some((addr, _stop)) = serve_v6(SqpResponder::new(SharedState::new(state()))).await else {
        return;
    };
    let status = driver::query_sqp(addr, &Options::default()).await.unwrap();
    assert_eq!(status.name, state().name);
    // ServerInfo only by default: no player table asked for.
    assert!(status.players.is_empty());
    assert_eq!(status.num_players, 2);
}
