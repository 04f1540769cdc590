//! The single-query driver and the serve loop on real loopback sockets, with the echo protocol.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use query_net::driver::{self, run_session};
use query_net::limit::{RateLimit, Stats};
use query_net::service::Service;
use query_net::testing::echo::{EchoResponder, EchoSession};
use query_net::QueryError;
use tokio::net::UdpSocket;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// An echo responder serving on a loopback port until the token is cancelled.
struct Server {
    addr: SocketAddr,
    stats: Arc<Stats>,
    shutdown: CancellationToken,
    task: JoinHandle<std::io::Result<()>>,
}

async fn start_server(responder: EchoResponder, limit: Option<RateLimit>) -> Server {
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = socket.local_addr().unwrap();
    // Echoes test the driver, not the responders' datagram cap: the largest UDP payload.
    let mut service = Service::new(responder)
        .rate_limit(limit)
        .max_datagram(query_net::engine::ReplySink::MAX_UDP_PAYLOAD);
    let stats = Arc::clone(service.stats());
    let shutdown = CancellationToken::new();
    let token = shutdown.clone();
    let task = tokio::spawn(async move { driver::serve(&socket, &mut service, &token).await });
    Server {
        addr,
        stats,
        shutdown,
        task,
    }
}

fn echo(target: SocketAddr, payload: &[u8]) -> EchoSession {
    EchoSession::new(target, payload, Duration::from_millis(200), 3)
}

#[tokio::test]
async fn client_and_responder_exchange_over_loopback() {
    let server = start_server(EchoResponder::default(), None).await;
    // A timeout no busy machine's loopback comes near, so one attempt always does.
    let session = EchoSession::new(server.addr, b"hello", Duration::from_secs(10), 3);
    let reply = driver::query_session(session).await.unwrap();
    assert_eq!(reply.payload, b"hello");
    assert_eq!(reply.attempts, 1);
    assert!(reply.rtt < Duration::from_secs(10));

    let stats = server.stats.snapshot();
    assert_eq!(stats.received, 1);
    assert_eq!(stats.answered, 1);
    assert_eq!(stats.replies_sent, 1);
    server.shutdown.cancel();
    server.task.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_silent_server_times_out_after_every_attempt() {
    let silent = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let started = Instant::now();
    let session = EchoSession::new(
        silent.local_addr().unwrap(),
        b"x",
        Duration::from_millis(60),
        3,
    );
    let err = driver::query_session(session).await.unwrap_err();
    match err {
        QueryError::Timeout {
            waiting_for,
            attempts,
            after,
        } => {
            assert_eq!(waiting_for, "echo request");
            assert_eq!(attempts, 3);
            assert!(after >= Duration::from_millis(180), "{after:?}");
        }
        other => panic!("{other:?}"),
    }
    // Three timeouts of 60 ms: the upper bound only catches a hang.
    assert!(started.elapsed() < Duration::from_secs(30));
    // Each attempt really went out.
    let mut buf = [0u8; 64];
    for _ in 0..3 {
        let (len, _) = silent.recv_from(&mut buf).await.unwrap();
        assert_eq!(&buf[..len], b"ECHOx");
    }
}

#[tokio::test]
async fn spoofed_replies_from_another_address_are_ignored() {
    // The "server" never answers itself; a spoofer sends the exact expected bytes from another
    // port, then the real server answers late.
    let server = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let spoofer = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let client = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let client_addr = client.local_addr().unwrap();
    let session = EchoSession::new(
        server.local_addr().unwrap(),
        b"secret",
        Duration::from_millis(300),
        1,
    );
    let run = tokio::spawn(async move { run_session(&client, session).await });

    let mut buf = [0u8; 64];
    let (len, from) = server.recv_from(&mut buf).await.unwrap();
    assert_eq!(from, client_addr);
    spoofer.send_to(&buf[..len], client_addr).await.unwrap();
    server.send_to(b"ECHOwrong", client_addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    server.send_to(&buf[..len], client_addr).await.unwrap();

    let reply = run.await.unwrap().unwrap();
    assert_eq!(reply.payload, b"secret");
    assert_eq!(
        reply.ignored, 1,
        "only the wrong payload from the server counts"
    );
}

#[tokio::test]
async fn serve_survives_bad_datagrams_and_keeps_answering() {
    let server = start_server(EchoResponder::default(), None).await;
    let junk = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    for bad in [&b""[..], b"\xff\xff", b"ECH", &[0u8; 2000]] {
        junk.send_to(bad, server.addr).await.unwrap();
    }
    let reply = driver::query_session(echo(server.addr, b"still here"))
        .await
        .unwrap();
    assert_eq!(reply.payload, b"still here");
    let stats = server.stats.snapshot();
    assert_eq!(stats.dropped_malformed, 4);
    assert_eq!(stats.answered, 1);
    server.shutdown.cancel();
    server.task.await.unwrap().unwrap();
}

#[tokio::test]
async fn large_datagrams_are_read_whole_both_ways() {
    let server = start_server(EchoResponder::default(), None).await;
    let payload: Vec<u8> = (0..60_000u32).map(|i| (i % 251) as u8).collect();
    let reply = driver::query_session(echo(server.addr, &payload))
        .await
        .unwrap();
    assert_eq!(reply.payload, payload);
    server.shutdown.cancel();
}

#[tokio::test]
async fn several_replies_per_request_all_reach_the_client() {
    let server = start_server(
        EchoResponder {
            copies: 5,
            ..EchoResponder::default()
        },
        None,
    )
    .await;
    let client = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    client.send_to(b"ECHOparts", server.addr).await.unwrap();
    let mut buf = [0u8; 64];
    for _ in 0..5 {
        let (len, from) = client.recv_from(&mut buf).await.unwrap();
        assert_eq!(from, server.addr);
        assert_eq!(&buf[..len], b"ECHOparts");
    }
    assert_eq!(server.stats.snapshot().replies_sent, 5);
}

#[tokio::test]
async fn the_rate_limit_applies_per_source_on_the_wire() {
    let limit = RateLimit {
        per_second: 1.try_into().unwrap(),
        burst: 3.try_into().unwrap(),
        max_sources: 16,
    };
    let server = start_server(EchoResponder::default(), Some(limit)).await;
    let client = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    for i in 0..10u8 {
        client
            .send_to(&[b'E', b'C', b'H', b'O', i], server.addr)
            .await
            .unwrap();
    }
    let mut answered = 0;
    let mut buf = [0u8; 16];
    while let Ok(Ok(_)) =
        tokio::time::timeout(Duration::from_millis(150), client.recv_from(&mut buf)).await
    {
        answered += 1;
    }
    assert_eq!(answered, 3);
    let stats = server.stats.snapshot();
    assert_eq!(stats.received, 10);
    assert_eq!(stats.dropped_rate_limited, 7);
}

#[tokio::test]
async fn shutdown_stops_the_serve_loop_promptly() {
    let server = start_server(EchoResponder::default(), None).await;
    server.shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(1), server.task)
        .await
        .expect("serve returned")
        .unwrap()
        .unwrap();
}

#[test]
fn the_blocking_wrapper_runs_a_session_without_a_runtime() {
    let server = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = server.local_addr().unwrap();
    let echo_thread = std::thread::spawn(move || {
        let mut buf = [0u8; 64];
        let (len, from) = server.recv_from(&mut buf).unwrap();
        server.send_to(&buf[..len], from).unwrap();
    });
    let reply = driver::query_session_blocking(echo(addr, b"sync")).unwrap();
    assert_eq!(reply.payload, b"sync");
    echo_thread.join().unwrap();
}

/// A task woken late finds its timer due and the rest of the reply already waiting: what
/// arrived counts before the wait for more parts ends. A GameSpy v1 server sends its first
/// part at once and the final part 30 ms later, while the runtime's only thread is held up
/// from 10 to 130 ms, past the 50 ms the client waits for a next part.
#[test]
fn parts_that_arrived_while_the_task_was_held_up_count_before_its_timeout() {
    let ms = Duration::from_millis;
    let options = query_net::Options {
        timeout: ms(1000),
        retries: 0,
        ..query_net::Options::default()
    };
    // The old driver chose between a due timer and a waiting datagram at random: six rounds
    // make a lucky pass unlikely.
    for round in 0..6 {
        let server = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = server.local_addr().unwrap();
        let parts = std::thread::spawn(move || {
            let mut buf = [0u8; 512];
            let (_, client) = server.recv_from(&mut buf).unwrap();
            server
                .send_to(
                    b"\\hostname\\held\\mapname\\DM-Deck16\\queryid\\5.1",
                    client,
                )
                .unwrap();
            std::thread::sleep(ms(30));
            server
                .send_to(
                    b"\\numplayers\\0\\maxplayers\\8\\queryid\\5.2\\final\\",
                    client,
                )
                .unwrap();
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let status = runtime.block_on(async {
            let query = driver::query(query_net::Protocol::GameSpy1, addr, &options);
            let hold_up = async {
                tokio::time::sleep(ms(10)).await;
                std::thread::sleep(ms(120));
                std::future::pending::<()>().await
            };
            tokio::select! {
                status = query => status,
                () = hold_up => unreachable!(),
            }
        });
        let status = status.unwrap();
        parts.join().unwrap();
        assert!(status.complete, "round {round}: {:#}", status.raw);
        assert_eq!(status.name, "held");
        assert_eq!(status.max_players, 8);
    }
}
