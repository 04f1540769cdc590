//! Every serve loop — one system call per datagram, and (on Linux) batches of `recvmmsg` and
//! `sendmmsg`, with runs of replies to one client segmented (GSO) or not — answers a burst of
//! requests from many sources with exactly the datagrams the responder makes of each, to the
//! right source, and counts them the same way.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use query_net::driver;
use query_net::engine::DropReason;
use query_net::engines::all::AllProtocols;
use query_net::limit::StatsSnapshot;
use query_net::service::Service;
use query_net::state::{PlayerState, ServerState, SharedState};
use tokio::net::UdpSocket;
use tokio_util::sync::CancellationToken;

const CLIENTS: usize = 16;
const ROUNDS: usize = 20;

fn state() -> SharedState {
    SharedState::new(ServerState {
        name: "Batch — Zoë".to_owned(),
        map: "Arena".to_owned(),
        max_players: 400,
        players: (0..300)
            .map(|i| PlayerState {
                name: format!("player {i:03}"),
                score: i,
                ping: 30,
                ..PlayerState::default()
            })
            .collect(),
        ..ServerState::default()
    })
}

fn samp(opcode: u8) -> Vec<u8> {
    let mut request = b"SAMP\x7f\x00\x00\x01\x61\x1e".to_vec();
    request.push(opcode);
    request
}

/// Requests whose replies depend only on the request and the state: SA:MP info and rules,
/// a Quake 3 status in several datagrams, garbage (no reply).
fn requests() -> Vec<Vec<u8>> {
    vec![
        samp(b'i'),
        samp(b'r'),
        b"\xff\xff\xff\xffgetstatus\n".to_vec(),
        b"garbage".to_vec(),
    ]
}

/// What the responder makes of `request`, in order, without sockets.
fn expected(request: &[u8]) -> Vec<Vec<u8>> {
    let mut service = Service::new(AllProtocols::new(state()))
        .rate_limit(None)
        .reply_budget(None);
    let from: SocketAddr = "127.0.0.1:40000".parse().unwrap();
    service.handle(from, request).map(<[u8]>::to_vec).collect()
}

#[derive(Debug, Clone, Copy)]
enum Path {
    Plain,
    #[cfg(target_os = "linux")]
    Batched,
    #[cfg(target_os = "linux")]
    Segmented,
}

async fn burst(path: Path) -> (StatsSnapshot, usize) {
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = socket.local_addr().unwrap();
    let mut service = Service::new(AllProtocols::new(state()))
        .rate_limit(None)
        .reply_budget(None);
    let stats = std::sync::Arc::clone(service.stats());
    let shutdown = CancellationToken::new();
    let token = shutdown.clone();
    let server = tokio::spawn(async move {
        let mut drops = 0;
        let on_drop = |_: SocketAddr, reason| {
            assert_eq!(reason, DropReason::Malformed);
            drops += 1;
        };
        match path {
            Path::Plain => driver::serve_plain_with(&socket, &mut service, &token, on_drop).await,
            #[cfg(target_os = "linux")]
            Path::Batched => {
                driver::serve_batched_with(&socket, &mut service, &token, on_drop).await
            }
            #[cfg(target_os = "linux")]
            Path::Segmented => {
                driver::serve_segmented_with(&socket, &mut service, &token, on_drop).await
            }
        }
        .unwrap();
        drops
    });

    let requests = requests();
    let mut clients = Vec::new();
    for _ in 0..CLIENTS {
        let client = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        client.connect(addr).await.unwrap();
        clients.push(client);
    }
    let mut want: HashMap<Vec<u8>, usize> = HashMap::new();
    for request in &requests {
        for reply in expected(request) {
            *want.entry(reply).or_default() += 1;
        }
    }
    let per_round: usize = want.values().sum();
    let mut buf = vec![0u8; 65_536];
    // Each round, every client sends every request without waiting, so that datagrams from
    // many sources queue up at the server and the batched path reads many at once; then each
    // client reads its replies (a round is bounded so that no socket buffer overflows).
    for round in 0..ROUNDS {
        for client in &clients {
            for request in &requests {
                client.send(request).await.unwrap();
            }
        }
        for client in &clients {
            let mut got: HashMap<Vec<u8>, usize> = HashMap::new();
            for _ in 0..per_round {
                let len = tokio::time::timeout(Duration::from_secs(5), client.recv(&mut buf))
                    .await
                    .unwrap_or_else(|_| panic!("{path:?}: a reply of round {round} is missing"))
                    .unwrap();
                *got.entry(buf[..len].to_vec()).or_default() += 1;
            }
            assert_eq!(got, want, "{path:?}, round {round}");
        }
    }
    for client in &clients {
        let extra = tokio::time::timeout(Duration::from_millis(50), client.recv(&mut buf)).await;
        assert!(extra.is_err(), "{path:?}: a reply more than expected");
    }
    shutdown.cancel();
    let drops = server.await.unwrap();
    (stats.snapshot(), drops)
}

async fn check(path: Path) {
    let (stats, drops) = burst(path).await;
    let datagrams_per_round: usize = requests().iter().map(|r| expected(r).len()).sum();
    let received = (CLIENTS * ROUNDS * requests().len()) as u64;
    assert_eq!(stats.received, received, "{path:?}: {stats:?}");
    assert_eq!(
        stats.replies_sent,
        (CLIENTS * ROUNDS * datagrams_per_round) as u64,
        "{path:?}: {stats:?}"
    );
    assert_eq!(stats.send_errors, 0, "{path:?}");
    assert_eq!(
        drops,
        CLIENTS * ROUNDS,
        "{path:?}: one garbage datagram a round"
    );
}

#[tokio::test]
async fn the_plain_path_answers_every_request_exactly() {
    check(Path::Plain).await;
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_batched_path_answers_every_request_exactly() {
    check(Path::Batched).await;
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_batched_path_with_segmentation_answers_every_request_exactly() {
    check(Path::Segmented).await;
}
