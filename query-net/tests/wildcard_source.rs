//! A responder bound to a wildcard address answers each request from the address it was sent
//! to (`IP_PKTINFO` / `IPV6_RECVPKTINFO`), so that clients which check where replies come
//! from (`gsq` does) accept them on a host with several addresses. Loopback has them all:
//! 127.0.0.2 is not the address the system would choose to answer 127.0.0.1 from.
#![cfg(target_os = "linux")]

use std::net::SocketAddr;
use std::time::Duration;

use query_net::driver;
use query_net::engines::all::AllProtocols;
use query_net::service::Service;
use query_net::state::{PlayerState, ServerState, SharedState};
use query_net::{Options, Protocol};
use tokio::net::UdpSocket;
use tokio_util::sync::CancellationToken;

fn state() -> SharedState {
    SharedState::new(ServerState {
        name: "Wildcard".to_owned(),
        map: "Arena".to_owned(),
        max_players: 64,
        players: (0..40)
            .map(|i| PlayerState {
                name: format!("player {i:02}"),
                ..PlayerState::default()
            })
            .collect(),
        ..ServerState::default()
    })
}

#[derive(Debug, Clone, Copy)]
enum Path {
    Batched,
    Segmented,
}

/// Serves every protocol on `bind` (a wildcard address) until the token is cancelled;
/// returns the port.
async fn serve(bind: &str, path: Path, stop: &CancellationToken) -> u16 {
    let socket = UdpSocket::bind(bind).await.unwrap();
    let port = socket.local_addr().unwrap().port();
    let stop = stop.clone();
    tokio::spawn(async move {
        let mut service = Service::new(AllProtocols::new(state()))
            .rate_limit(None)
            .reply_budget(None);
        let result = match path {
            Path::Batched => {
                driver::serve_batched_with(&socket, &mut service, &stop, |_, _| {}).await
            }
            Path::Segmented => {
                driver::serve_segmented_with(&socket, &mut service, &stop, |_, _| {}).await
            }
        };
        result.unwrap();
    });
    port
}

/// Sends a Quake 3 status request (answered in several datagrams) to `to` from 127.0.0.1 and
/// returns the source of every reply.
async fn sources_of_replies(to: SocketAddr) -> Vec<SocketAddr> {
    let client = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    client
        .send_to(b"\xff\xff\xff\xffgetstatus\n", to)
        .await
        .unwrap();
    let mut sources = Vec::new();
    let mut buf = vec![0u8; 65_536];
    while let Ok(Ok((_, from))) =
        tokio::time::timeout(Duration::from_millis(300), client.recv_from(&mut buf)).await
    {
        sources.push(from);
    }
    sources
}

#[tokio::test]
async fn replies_leave_from_the_address_each_request_was_sent_to() {
    for bind in ["0.0.0.0:0", "[::]:0"] {
        for path in [Path::Batched, Path::Segmented] {
            let stop = CancellationToken::new();
            let port = serve(bind, path, &stop).await;
            for ip in ["127.0.0.2", "127.0.0.1", "127.0.0.3"] {
                let to: SocketAddr = format!("{ip}:{port}").parse().unwrap();
                let sources = sources_of_replies(to).await;
                assert!(!sources.is_empty(), "{bind} {path:?}: no reply to {to}");
                assert!(
                    sources.iter().all(|&from| from == to),
                    "{bind} {path:?}: asked {to}, answered from {sources:?}"
                );
            }
            stop.cancel();
        }
    }
}

#[tokio::test]
async fn gsq_queries_a_wildcard_server_at_a_secondary_address() {
    let stop = CancellationToken::new();
    let port = serve("0.0.0.0:0", Path::Batched, &stop).await;
    let options = Options {
        timeout: Duration::from_millis(500),
        retries: 1,
        ..Options::default()
    };
    let target: SocketAddr = format!("127.0.0.2:{port}").parse().unwrap();
    for protocol in [Protocol::Quake3, Protocol::A2s, Protocol::Samp] {
        let status = driver::query(protocol, target, &options).await.unwrap();
        assert_eq!(status.name, "Wildcard", "{protocol}");
        assert_eq!(status.address, target);
    }
    stop.cancel();
}

/// What a server bound to the wildcard without `IP_PKTINFO` does on a host with several
/// addresses: it answers a request sent to 127.0.0.2 from 127.0.0.1. The client drops those
/// replies as possibly spoofed and its timeout names where they came from.
#[tokio::test]
async fn a_reply_from_another_address_of_the_port_is_named_in_the_timeout() {
    let asked = UdpSocket::bind("127.0.0.2:0").await.unwrap();
    let port = asked.local_addr().unwrap().port();
    let answering = UdpSocket::bind(("127.0.0.1", port)).await.unwrap();
    tokio::spawn(async move {
        let mut buf = [0u8; 1500];
        while let Ok((_, client)) = asked.recv_from(&mut buf).await {
            // Any reply will do: it is dropped for its source before it is read.
            let _ = answering.send_to(b"\xff\xff\xff\xffI\x11", client).await;
        }
    });
    let options = Options {
        timeout: Duration::from_millis(200),
        retries: 1,
        ..Options::default()
    };
    let target: SocketAddr = format!("127.0.0.2:{port}").parse().unwrap();
    let error = driver::query(Protocol::A2s, target, &options)
        .await
        .unwrap_err();
    let text = error.to_string();
    assert!(
        matches!(
            error,
            query_net::QueryError::AnsweredElsewhere { datagrams: 2, .. }
        ),
        "{error:?}"
    );
    assert!(text.starts_with("no reply to the info request"), "{text}");
    assert!(
        text.contains(&format!("came from 127.0.0.1:{port}, not {target}")),
        "{text}"
    );
}
