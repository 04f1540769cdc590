//! Minecraft Java over loopback TCP: the client against the responder (status ping and every
//! legacy form), the legacy fallback against an old server, a server that drips its reply,
//! and every limit of the listener against a hostile client.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use query_net::engines::minecraft::{JavaResponder, LegacyPing, LegacySession};
use query_net::state::{PlayerState, ServerState, SharedState};
use query_net::tcp::{self, ListenerLimits, ListenerStats, StreamLimits};
use query_net::{Options, QueryError};
use query_specs::minecraft_legacy::Kick;
use query_wire::{Decode, Encode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

fn state() -> SharedState {
    SharedState::new(ServerState {
        name: "Café Zoë".into(),
        version: "1.21.4".into(),
        protocol_version: 769,
        max_players: 20,
        players: vec![
            PlayerState {
                name: "Alice".into(),
                uuid: Some(uuid::Uuid::from_u128(
                    0x4566_e69f_c907_48ee_8d71_d7ba_5aa0_0d20,
                )),
                ..PlayerState::default()
            },
            PlayerState {
                name: "Bob".into(),
                ..PlayerState::default()
            },
        ],
        ..ServerState::default()
    })
}

struct Server {
    address: SocketAddr,
    stats: Arc<ListenerStats>,
    stop: CancellationToken,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn serve(limits: ListenerLimits) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let stats = Arc::new(ListenerStats::default());
    let stop = CancellationToken::new();
    let shared = state();
    tokio::spawn(tcp::serve_stream(
        listener,
        move || JavaResponder::new(shared.clone()),
        limits,
        Arc::clone(&stats),
        stop.clone(),
    ));
    Server {
        address,
        stats,
        stop,
    }
}

fn options() -> Options {
    Options {
        timeout: Duration::from_secs(2),
        deadline: Duration::from_secs(5),
        ..Options::default()
    }
}

#[tokio::test]
async fn the_client_reads_the_responders_status_and_pong() {
    let server = serve(ListenerLimits::default()).await;
    let status = tcp::query_minecraft(server.address, &options())
        .await
        .unwrap();
    assert_eq!(status.name, "Café Zoë");
    assert_eq!(status.version.as_deref(), Some("1.21.4"));
    assert_eq!((status.num_players, status.max_players), (2, 20));
    let names: Vec<_> = status.players.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["Alice", "Bob"]);
    assert_eq!(
        status.players[0].uuid.unwrap().to_string(),
        "4566e69f-c907-48ee-8d71-d7ba5aa00d20"
    );
    assert_eq!(status.rules["protocol"], "769");
    assert_eq!(status.raw["pong"], true);
}

#[tokio::test]
async fn without_the_ping_the_query_ends_at_the_status_and_frees_the_server_at_once() {
    let server = serve(ListenerLimits::default()).await;
    let options = Options {
        minecraft_ping: false,
        ..options()
    };
    let status = tcp::query_minecraft(server.address, &options)
        .await
        .unwrap();
    assert_eq!(status.name, "Café Zoë");
    assert_eq!(status.players.len(), 2);
    assert_eq!(status.raw["pong"], false);
    // The client closed (reset) its connection as soon as it had the status: the responder,
    // still waiting for a ping, sees the end well before its 2 s idle timeout would cut it.
    let waiting = Instant::now();
    while server.stats.served.load(Ordering::Relaxed) == 0 {
        assert!(
            waiting.elapsed() < Duration::from_secs(1),
            "the connection stayed open"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(server.stats.timed_out.load(Ordering::Relaxed), 0);
}

#[tokio::test]
async fn every_legacy_form_is_answered() {
    let server = serve(ListenerLimits::default()).await;
    let limits = StreamLimits::from_options(&options());
    for ping in [
        LegacyPing::V1_6 {
            host: "localhost".into(),
            port: server.address.port(),
        },
        LegacyPing::V1_4,
        LegacyPing::Beta,
    ] {
        let beta = ping == LegacyPing::Beta;
        let session = LegacySession::with_request(server.address, ping);
        let status = tcp::run_stream(server.address, session, limits)
            .await
            .unwrap();
        assert_eq!(status.name, "Café Zoë");
        assert_eq!((status.num_players, status.max_players), (2, 20));
        assert_eq!(status.version.is_none(), beta);
    }
}

#[tokio::test]
async fn the_1_6_prefix_alone_is_answered_as_vanilla_servers_do() {
    // mcstatus's legacy ping is `FE 01 FA` without the `MC|PingHost` message.
    let server = serve(ListenerLimits::default()).await;
    let mut stream = TcpStream::connect(server.address).await.unwrap();
    stream.write_all(b"\xfe\x01\xfa").await.unwrap();
    let reply = read_to_close(&mut stream, Duration::from_secs(2))
        .await
        .expect("an answer, then the close");
    let kick = Kick::from_bytes(&reply).expect("a legacy kick");
    let text = kick.text();
    assert!(text.starts_with("§1\0"), "{text:?}");
    assert!(text.contains("Café Zoë"), "{text:?}");
}

/// A server before 1.7: it reads whatever comes and answers with a legacy kick.
async fn old_server(drip: bool) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 512];
                let _ = stream.read(&mut buf).await;
                let kick = Kick::new("\u{a7}1\u{0}61\u{0}1.5.2\u{0}Old times\u{0}3\u{0}10");
                let bytes = kick.to_vec().unwrap();
                if drip {
                    for byte in bytes {
                        let _ = stream.write_all(&[byte]).await;
                        tokio::time::sleep(Duration::from_millis(2)).await;
                    }
                } else {
                    let _ = stream.write_all(&bytes).await;
                }
            });
        }
    });
    address
}

#[tokio::test]
async fn an_old_server_is_read_through_the_legacy_fallback_even_dripped() {
    for drip in [false, true] {
        let address = old_server(drip).await;
        let status = tcp::query_minecraft(address, &options()).await.unwrap();
        assert_eq!(status.name, "Old times");
        assert_eq!(status.version.as_deref(), Some("1.5.2"));
        assert_eq!((status.num_players, status.max_players), (3, 10));
    }
}

#[tokio::test]
async fn a_silent_server_ends_at_the_deadline() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let held = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        tokio::time::sleep(Duration::from_secs(5)).await;
        drop(stream);
    });
    let quick = Options {
        deadline: Duration::from_millis(300),
        ..options()
    };
    let started = Instant::now();
    let error = tcp::query_minecraft(address, &quick).await.unwrap_err();
    assert!(matches!(error, QueryError::Deadline { .. }), "{error}");
    assert!(started.elapsed() < Duration::from_secs(2));
    held.abort();
}

fn tight() -> ListenerLimits {
    ListenerLimits {
        max_connections: 6,
        max_per_source: 3,
        idle_timeout: Duration::from_millis(200),
        session_timeout: Duration::from_millis(600),
    }
}

/// Reads until the server closes, within `within`; the bytes read.
async fn read_to_close(stream: &mut TcpStream, within: Duration) -> Option<Vec<u8>> {
    let mut all = Vec::new();
    tokio::time::timeout(within, stream.read_to_end(&mut all))
        .await
        .ok()?
        .ok()?;
    Some(all)
}

#[tokio::test]
async fn a_client_that_sends_nothing_is_cut_when_idle() {
    let server = serve(tight()).await;
    let mut stream = TcpStream::connect(server.address).await.unwrap();
    let started = Instant::now();
    let bytes = read_to_close(&mut stream, Duration::from_secs(2)).await;
    assert_eq!(bytes, Some(Vec::new()), "closed without a reply");
    let after = started.elapsed();
    assert!(
        after >= Duration::from_millis(150) && after < Duration::from_secs(1),
        "{after:?}"
    );
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(server.stats.timed_out.load(Ordering::Relaxed), 1);
}

#[tokio::test]
async fn a_client_that_drips_a_byte_at_a_time_is_cut_at_the_session_timeout() {
    // The idle timeout is eight drips long, so a loaded machine that holds the dripping task
    // up for a while does not turn this into an idle cut.
    let limits = ListenerLimits {
        idle_timeout: Duration::from_millis(400),
        session_timeout: Duration::from_millis(800),
        ..tight()
    };
    let server = serve(limits).await;
    let mut stream = TcpStream::connect(server.address).await.unwrap();
    let started = Instant::now();
    // A handshake's first 19 of 22 bytes, one every 50 ms: never idle, never done.
    let drip = async {
        let handshake = b"\x15\x00\xff\xff\xff\xff\x0f\x09localhost\x63\xdd";
        for byte in handshake {
            if stream.write_all(&[*byte]).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        read_to_close(&mut stream, Duration::from_secs(2)).await
    };
    let bytes = drip.await;
    assert_eq!(bytes, Some(Vec::new()));
    let after = started.elapsed();
    assert!(
        after >= Duration::from_millis(750) && after < Duration::from_millis(2500),
        "{after:?}"
    );
}

#[tokio::test]
async fn connections_over_the_caps_are_closed_at_once() {
    let server = serve(tight()).await;
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(TcpStream::connect(server.address).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    // A fourth from the same address is over the per-source cap.
    let mut extra = TcpStream::connect(server.address).await.unwrap();
    let bytes = read_to_close(&mut extra, Duration::from_millis(150)).await;
    assert_eq!(bytes, Some(Vec::new()), "closed before the idle timeout");
    assert_eq!(server.stats.refused.load(Ordering::Relaxed), 1);
    // The total cap: three more from another loopback address fill it, the next is refused.
    for _ in 0..3 {
        held.push(connect_from([127, 0, 0, 2], server.address).await);
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut extra = connect_from([127, 0, 0, 3], server.address).await;
    let bytes = read_to_close(&mut extra, Duration::from_millis(150)).await;
    assert_eq!(bytes, Some(Vec::new()));
    assert_eq!(server.stats.refused.load(Ordering::Relaxed), 2);
    // Once they close, a new connection is served.
    drop(held);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let status = tcp::query_minecraft(server.address, &options())
        .await
        .unwrap();
    assert_eq!(status.name, "Café Zoë");
}

async fn connect_from(ip: [u8; 4], to: SocketAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::from((ip, 0))).unwrap();
    socket.connect(to).await.unwrap()
}

#[tokio::test]
async fn an_oversized_frame_or_garbage_closes_the_connection_without_a_reply() {
    let server = serve(ListenerLimits::default()).await;
    for request in [
        &b"\xff\xff\x7f"[..],        // a frame of 2 MiB
        b"\x05\x09garbage",          // an unknown packet id
        b"\x80\x80\x80\x80\x80\x80", // a length VarInt over 5 bytes
        b"\xfe\x02",                 // no legacy ping
    ] {
        let mut stream = TcpStream::connect(server.address).await.unwrap();
        stream.write_all(request).await.unwrap();
        let bytes = read_to_close(&mut stream, Duration::from_secs(1)).await;
        assert_eq!(bytes, Some(Vec::new()), "{request:02x?}");
    }
    // A flood of legacy bytes is cut too, and the listener keeps serving.
    let mut stream = TcpStream::connect(server.address).await.unwrap();
    let mut flood = vec![0xfe, 0x01, 0xfa];
    flood.extend(std::iter::repeat_n(0u8, 4096));
    let _ = stream.write_all(&flood).await;
    let bytes = read_to_close(&mut stream, Duration::from_secs(1)).await;
    assert!(bytes.is_none_or(|b| b.is_empty()));
    let status = tcp::query_minecraft(server.address, &options())
        .await
        .unwrap();
    assert_eq!(status.num_players, 2);
}
