//! The lossy proxy on loopback: each impairment on its own, then clients and a responder
//! talking through all of them at once.

use std::net::SocketAddr;
use std::time::Duration;

use query_net::bulk::{bulk, BulkConfig};
use query_net::driver;
use query_net::service::Service;
use query_net::testing::echo::{EchoResponder, EchoSession};
use query_net::testing::lossy::{Chaos, Fate, Impairments, LossyProxy};
use query_net::QueryError;
use tokio::net::UdpSocket;
use tokio_stream::StreamExt;
use tokio_util::sync::CancellationToken;

async fn bind() -> UdpSocket {
    UdpSocket::bind("127.0.0.1:0").await.unwrap()
}

/// Everything that arrives on `socket` until it has been quiet for `quiet`.
async fn drain(socket: &UdpSocket, quiet: Duration) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    let mut buf = [0u8; 2048];
    while let Ok(Ok((len, _))) = tokio::time::timeout(quiet, socket.recv_from(&mut buf)).await {
        got.push(buf[..len].to_vec());
    }
    got
}

#[tokio::test]
async fn dropping_everything_makes_the_client_time_out() {
    let server = bind().await;
    let proxy = LossyProxy::start(
        server.local_addr().unwrap(),
        Impairments {
            drop: 1.0,
            ..Impairments::default()
        },
        1,
    )
    .await
    .unwrap();
    let session = EchoSession::new(proxy.addr(), b"x", Duration::from_millis(30), 3);
    let err = driver::query_session(session).await.unwrap_err();
    assert!(
        matches!(err, QueryError::Timeout { attempts: 3, .. }),
        "{err}"
    );
    assert!(drain(&server, Duration::from_millis(20)).await.is_empty());
    let stats = proxy.stats();
    assert_eq!((stats.received, stats.dropped, stats.sent), (3, 3, 0));
}

#[tokio::test]
async fn duplication_applies_in_both_directions() {
    let shutdown = CancellationToken::new();
    let server = bind().await;
    let server_addr = server.local_addr().unwrap();
    let token = shutdown.clone();
    tokio::spawn(async move {
        let mut service = Service::new(EchoResponder::default()).rate_limit(None);
        driver::serve(&server, &mut service, &token).await
    });
    let proxy = LossyProxy::start(
        server_addr,
        Impairments {
            duplicate: 1.0,
            ..Impairments::default()
        },
        2,
    )
    .await
    .unwrap();
    let client = bind().await;
    client.send_to(b"ECHOtwice", proxy.addr()).await.unwrap();
    let got = drain(&client, Duration::from_millis(100)).await;
    // One request, sent twice to the server, answered twice, each answer sent twice.
    assert_eq!(got, vec![b"ECHOtwice".to_vec(); 4]);
    assert_eq!(proxy.stats().duplicated, 3);
    shutdown.cancel();
}

#[tokio::test]
async fn corruption_changes_one_byte_on_the_way() {
    let server = bind().await;
    let proxy = LossyProxy::start(
        server.local_addr().unwrap(),
        Impairments {
            corrupt: 1.0,
            ..Impairments::default()
        },
        3,
    )
    .await
    .unwrap();
    let client = bind().await;
    let original = vec![0xa5u8; 64];
    client.send_to(&original, proxy.addr()).await.unwrap();
    let got = drain(&server, Duration::from_millis(100)).await;
    assert_eq!(got.len(), 1);
    let changed = got[0].iter().zip(&original).filter(|(a, b)| a != b).count();
    assert_eq!(changed, 1);
}

#[tokio::test]
async fn a_held_datagram_arrives_after_its_successor() {
    let imp = Impairments {
        reorder: 0.5,
        reorder_hold: Duration::from_millis(200),
        ..Impairments::default()
    };
    // Pick a seed whose first datagram is held and second is not.
    let seed = (0..1000)
        .find(|&seed| {
            let mut chaos = Chaos::new(imp.clone(), seed);
            let held = |fate| matches!(fate, Fate::Deliver { hold: true, .. });
            held(chaos.decide(&mut [1]).0) && !held(chaos.decide(&mut [2]).0)
        })
        .expect("a seed that holds then passes");
    let server = bind().await;
    let proxy = LossyProxy::start(server.local_addr().unwrap(), imp, seed)
        .await
        .unwrap();
    let client = bind().await;
    client.send_to(&[1], proxy.addr()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    client.send_to(&[2], proxy.addr()).await.unwrap();
    let got = drain(&server, Duration::from_millis(100)).await;
    assert_eq!(
        got,
        [vec![2], vec![1]],
        "swapped, and well before the hold expired"
    );
    assert_eq!(proxy.stats().reordered, 1);
}

#[tokio::test]
async fn a_held_datagram_without_successor_still_arrives() {
    let server = bind().await;
    let proxy = LossyProxy::start(
        server.local_addr().unwrap(),
        Impairments {
            reorder: 1.0,
            reorder_hold: Duration::from_millis(30),
            ..Impairments::default()
        },
        4,
    )
    .await
    .unwrap();
    let client = bind().await;
    client.send_to(b"alone", proxy.addr()).await.unwrap();
    let got = drain(&server, Duration::from_millis(150)).await;
    assert_eq!(got, [b"alone".to_vec()]);
}

#[tokio::test]
async fn waiting_datagrams_are_bounded() {
    let server = bind().await;
    let proxy = LossyProxy::start(
        server.local_addr().unwrap(),
        Impairments {
            max_delay: Duration::from_millis(50),
            max_pending: 4,
            ..Impairments::default()
        },
        5,
    )
    .await
    .unwrap();
    let client = bind().await;
    for i in 0..20u8 {
        client.send_to(&[i], proxy.addr()).await.unwrap();
    }
    let got = drain(&server, Duration::from_millis(150)).await;
    let stats = proxy.stats();
    assert_eq!(stats.received, 20);
    assert_eq!(got.len() as u64, stats.sent);
    assert_eq!(stats.sent + stats.overflowed, 20);
    assert!(stats.overflowed >= 10, "{stats:?}");
}

#[tokio::test]
async fn clients_recover_through_a_bad_link_and_never_accept_damaged_replies() {
    const SESSIONS: usize = 40;
    let shutdown = CancellationToken::new();
    let server = bind().await;
    let server_addr: SocketAddr = server.local_addr().unwrap();
    let token = shutdown.clone();
    tokio::spawn(async move {
        let mut service = Service::new(EchoResponder::default()).rate_limit(None);
        driver::serve(&server, &mut service, &token).await
    });
    let proxy = LossyProxy::start(
        server_addr,
        Impairments {
            drop: 0.15,
            duplicate: 0.2,
            reorder: 0.2,
            corrupt: 0.15,
            max_delay: Duration::from_millis(5),
            reorder_hold: Duration::from_millis(10),
            ..Impairments::default()
        },
        2024,
    )
    .await
    .unwrap();
    let target = proxy.addr();
    let mut results = bulk(
        tokio_stream::iter(0..SESSIONS),
        move |&i: &usize| {
            Ok(EchoSession::new(
                target,
                format!("session {i}").as_bytes(),
                Duration::from_millis(40),
                8,
            ))
        },
        BulkConfig {
            sockets: 4,
            concurrency: 8,
            ..BulkConfig::default()
        },
    );
    let (mut ok, mut timed_out) = (0, 0);
    while let Some(done) = results.next().await {
        match done.result {
            Ok(reply) => {
                assert_eq!(reply.payload, format!("session {}", done.target).as_bytes());
                ok += 1;
            }
            Err(QueryError::Timeout { attempts: 8, .. }) => timed_out += 1,
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(ok + timed_out, SESSIONS);
    assert!(ok >= SESSIONS / 2, "{ok} of {SESSIONS} got through");
    let stats = proxy.stats();
    assert!(stats.dropped > 0, "{stats:?}");
    assert!(stats.duplicated > 0, "{stats:?}");
    assert!(stats.reordered > 0, "{stats:?}");
    assert!(stats.corrupted > 0, "{stats:?}");
    shutdown.cancel();
}
