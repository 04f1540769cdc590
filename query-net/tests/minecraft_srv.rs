//! Minecraft Java's SRV lookup against a name server on loopback: a record moves the query to
//! its target and port, the handshake keeps the name the user gave, and a name without a
//! record, or a name server that never answers, falls back quickly.

use std::net::{Ipv4Addr, SocketAddr};
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hickory_proto::op::{Message, MessageType, OpCode, ResponseCode};
use hickory_proto::rr::rdata::{A, SRV};
use hickory_proto::rr::{Name, RData, Record, RecordType};
use query_net::address::HostPort;
use query_net::engines::minecraft::JavaResponder;
use query_net::srv::{SrvResolver, SRV_WAIT};
use query_net::state::{ServerState, SharedState};
use query_net::tcp::{self, ListenerLimits, ListenerStats};
use query_net::Options;
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, UdpSocket};
use tokio_util::sync::CancellationToken;

/// A name server for the zone `test.`: `_minecraft._tcp.moved.test` points at
/// `box.test:<port>` (with a worse record beside it), `box.test` is 127.0.0.1, every other
/// name does not exist.
async fn name_server(srv_port: u16) -> SocketAddr {
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let address = socket.local_addr().unwrap();
    tokio::spawn(async move {
        let mut buf = vec![0u8; 1500];
        loop {
            let Ok((len, from)) = socket.recv_from(&mut buf).await else {
                continue;
            };
            let Ok(query) = Message::from_vec(&buf[..len]) else {
                continue;
            };
            let mut reply = Message::new(query.metadata.id, MessageType::Response, OpCode::Query);
            reply.metadata.recursion_desired = query.metadata.recursion_desired;
            reply.metadata.recursion_available = true;
            reply.metadata.authoritative = true;
            let mut known = false;
            for question in &query.queries {
                reply.add_query(question.clone());
                let name = question.name().to_ascii().to_ascii_lowercase();
                let answer = |data| Record::from_rdata(question.name().clone(), 60, data);
                match (name.as_str(), question.query_type()) {
                    ("_minecraft._tcp.moved.test.", RecordType::SRV) => {
                        known = true;
                        let target = Name::from_str("box.test.").unwrap();
                        let worse = Name::from_str("elsewhere.test.").unwrap();
                        reply.add_answer(answer(RData::SRV(SRV::new(5, 0, 1, worse))));
                        reply.add_answer(answer(RData::SRV(SRV::new(0, 5, srv_port, target))));
                    }
                    ("box.test.", RecordType::A) => {
                        known = true;
                        reply.add_answer(answer(RData::A(A(Ipv4Addr::LOCALHOST))));
                    }
                    ("box.test.", _) | ("_minecraft._tcp.moved.test.", _) => known = true,
                    _ => {}
                }
            }
            if !known {
                reply.metadata.response_code = ResponseCode::NXDomain;
            }
            let _ = socket.send_to(&reply.to_vec().unwrap(), from).await;
        }
    });
    address
}

fn state() -> SharedState {
    SharedState::new(ServerState {
        name: "Moved by SRV".into(),
        max_players: 20,
        ..ServerState::default()
    })
}

#[tokio::test]
async fn an_srv_record_moves_the_query_to_its_target_and_port() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let stop = CancellationToken::new();
    let shared = state();
    tokio::spawn(tcp::serve_stream(
        listener,
        move || JavaResponder::new(shared.clone()),
        ListenerLimits::default(),
        Arc::new(ListenerStats::default()),
        stop.clone(),
    ));
    let resolver = SrvResolver::with_name_server(name_server(port).await).unwrap();

    assert_eq!(
        resolver.minecraft("moved.test").await,
        Some(("box.test".to_owned(), port))
    );
    let host: HostPort = "moved.test".parse().unwrap();
    let address = resolver.resolve_minecraft(&host).await.unwrap();
    assert_eq!(address, SocketAddr::from((Ipv4Addr::LOCALHOST, port)));

    let options = Options {
        timeout: Duration::from_secs(2),
        ..Options::default()
    };
    let status = tcp::query_minecraft_with("moved.test", Some(&resolver), &options)
        .await
        .unwrap();
    assert_eq!(status.name, "Moved by SRV");
    assert_eq!(status.address.port(), port);
    stop.cancel();
}

#[tokio::test]
async fn the_handshake_carries_the_name_the_user_gave() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let resolver = SrvResolver::with_name_server(name_server(port).await).unwrap();
    let server = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut seen = Vec::new();
        let mut buf = [0u8; 256];
        // The handshake is a few dozen bytes; read until the name is in or the client stops.
        while !seen.windows(10).any(|w| w == b"moved.test") {
            match tokio::time::timeout(Duration::from_secs(2), stream.read(&mut buf)).await {
                Ok(Ok(len)) if len > 0 => seen.extend_from_slice(&buf[..len]),
                _ => break,
            }
        }
        seen
    });
    let options = Options {
        timeout: Duration::from_millis(300),
        deadline: Duration::from_millis(600),
        ..Options::default()
    };
    // The server says nothing back: the query fails, what matters is what it sent.
    let _ = tcp::query_minecraft_with("moved.test", Some(&resolver), &options).await;
    let seen = server.await.unwrap();
    assert!(
        seen.windows(10).any(|w| w == b"moved.test"),
        "handshake {seen:02x?}"
    );
    assert!(!seen.windows(8).any(|w| w == b"box.test"), "{seen:02x?}");
}

#[tokio::test]
async fn no_record_and_no_answer_fall_back_without_waiting_long() {
    let resolver = SrvResolver::with_name_server(name_server(1).await).unwrap();
    let started = Instant::now();
    assert_eq!(resolver.minecraft("plain.test").await, None);
    assert!(started.elapsed() < SRV_WAIT, "{:?}", started.elapsed());
    // Addresses and localhost are never looked up.
    assert_eq!(resolver.minecraft("127.0.0.1").await, None);
    assert_eq!(resolver.minecraft("localhost").await, None);

    // A name server that never answers costs at most the wait, then nothing is found.
    let mute = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let resolver = SrvResolver::with_name_server(mute.local_addr().unwrap()).unwrap();
    let started = Instant::now();
    assert_eq!(resolver.minecraft("moved.test").await, None);
    let waited = started.elapsed();
    assert!(waited < SRV_WAIT + Duration::from_millis(500), "{waited:?}");

    // A port given, or an IP address, skips the lookup altogether.
    let host: HostPort = "127.0.0.1".parse().unwrap();
    let address = resolver.resolve_minecraft(&host).await.unwrap();
    assert_eq!(address, "127.0.0.1:25565".parse().unwrap());
}
