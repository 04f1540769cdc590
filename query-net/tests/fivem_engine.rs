//! FiveM: the `getinfo` session without sockets (the challenge echo, garbage), the player list
//! merged from `/players.json`, the responder alone, the whole query over loopback against
//! the responder and a small HTTP server on the same port, and against the responder with
//! the HTTP responder under the listener's caps, hostile clients included.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use query_net::driver;
use query_net::engine::ClientSession;
use query_net::engines::fivem::{
    self, with_players, FivemConfig, FivemHttpResponder, FivemResponder,
};
use query_net::service::Service;
use query_net::state::{PlayerState, ServerState, SharedState};
use query_net::tcp::{serve_stream, ListenerLimits, ListenerStats};
use query_net::{Options, Protocol, QueryError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UdpSocket};
use tokio_util::sync::CancellationToken;

fn target() -> SocketAddr {
    "127.0.0.1:30120".parse().unwrap()
}

fn options() -> Options {
    Options {
        timeout: Duration::from_millis(200),
        retries: 2,
        ..Options::default()
    }
}

fn reply(challenge: &str, clients: u32) -> Vec<u8> {
    let pairs = format!(
        "infoResponse\n\\sv_maxclients\\48\\clients\\{clients}\\challenge\\{challenge}\\gamename\\CitizenFX\\protocol\\4\\hostname\\^1Los ^7Santos 🚓\\gametype\\RP\\mapname\\fivem-map-hipster\\iv\\-12"
    );
    [&b"\xff\xff\xff\xff"[..], pairs.as_bytes()].concat()
}

#[test]
fn only_a_reply_echoing_the_challenge_is_an_answer() {
    let t0 = Instant::now();
    let mut s = fivem::client(target(), &options()).unwrap();
    let request = s.poll_transmit(t0).unwrap().to_vec();
    assert!(request.starts_with(b"\xff\xff\xff\xffgetinfo "));
    let challenge = String::from_utf8(request[12..].to_vec()).unwrap();
    assert_eq!(challenge.len(), 16);
    let other = fivem::client(target(), &options())
        .unwrap()
        .poll_transmit(t0)
        .unwrap()
        .to_vec();
    assert_ne!(other, request, "a fresh challenge per query");

    s.handle_datagram(target(), &reply("forged", 3), t0 + Duration::from_millis(1));
    s.handle_datagram(
        target(),
        b"\xff\xff\xff\xffinfoResponse\n\\a",
        t0 + Duration::from_millis(2),
    );
    assert!(s.poll_result().is_none());
    s.handle_datagram(
        target(),
        &reply(&challenge, 3),
        t0 + Duration::from_millis(5),
    );
    let status = s.poll_result().unwrap().unwrap();
    assert_eq!(status.protocol, Protocol::Fivem);
    assert_eq!(status.name, "Los Santos 🚓");
    assert_eq!(status.raw["hostname"], "^1Los ^7Santos 🚓");
    assert_eq!(status.map.as_deref(), Some("fivem-map-hipster"));
    assert_eq!(status.game_type.as_deref(), Some("RP"));
    assert_eq!((status.num_players, status.max_players), (3, 48));
    assert_eq!(status.rules["iv"], "-12");
    assert_eq!(status.ping_ms, 5.0);
    // Counted players, none listed: incomplete until /players.json is read.
    assert!(!status.complete);
    assert_eq!(status.raw["players_missing"], 3);

    let listed = with_players(
        status.clone(),
        Ok(r#"[{"endpoint":"127.0.0.1","id":7,"identifiers":["license:ab","discord:1"],"name":"Zoë","ping":41},{"id":9,"name":"Bo","ping":70}]"#.as_bytes().to_vec()),
    );
    assert!(listed.complete, "{}", listed.raw);
    assert_eq!(listed.num_players, 2, "the list is newer than the count");
    assert_eq!(listed.raw["getinfo_clients"], 3);
    assert_eq!(listed.players[0].name, "Zoë");
    assert_eq!(
        (listed.players[0].id, listed.players[0].ping),
        (Some(7), Some(41))
    );
    assert_eq!(
        listed.players[0].extra["identifiers"],
        "license:ab discord:1"
    );
    assert!(listed.raw.get("players_error").is_none());

    let failed = with_players(status.clone(), Ok(b"<html>".to_vec()));
    assert!(!failed.complete);
    assert!(failed.raw["players_error"]
        .as_str()
        .unwrap()
        .contains("/players.json"));
    let refused = with_players(
        status,
        Err(QueryError::ConnectionRefused { target: target() }),
    );
    assert!(!refused.complete && refused.players.is_empty());
}

#[test]
fn silence_is_a_timeout_naming_getinfo() {
    let t0 = Instant::now();
    let mut s = fivem::client(target(), &options()).unwrap();
    let _ = s.poll_transmit(t0);
    while let Some(at) = s.poll_timeout() {
        s.handle_timeout(at);
        let _ = s.poll_transmit(at);
    }
    match s.poll_result() {
        Some(Err(e @ QueryError::Timeout { .. })) => assert!(e.to_string().contains("getinfo")),
        other => panic!("{other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// The responder

fn state() -> ServerState {
    ServerState {
        name: "^2Loop\\back RP".to_owned(),
        map: "fivem-map-skater".to_owned(),
        game_type: "Freeroam".to_owned(),
        max_players: 64,
        players: (0..3)
            .map(|i| PlayerState {
                name: format!("p{i}"),
                ping: 20 + i,
                ..PlayerState::default()
            })
            .collect(),
        ..ServerState::default()
    }
}

fn answers(request: &[u8]) -> Vec<Vec<u8>> {
    let responder = FivemResponder::new(SharedState::new(state()), FivemConfig::default());
    let mut service = Service::new(responder).rate_limit(None);
    let from: SocketAddr = "192.0.2.1:5000".parse().unwrap();
    service.handle(from, request).map(<[u8]>::to_vec).collect()
}

#[test]
fn the_responder_echoes_the_challenge_and_drops_the_rest() {
    let replies = answers(b"\xff\xff\xff\xffgetinfo abc");
    assert_eq!(replies.len(), 1);
    let text = String::from_utf8(replies[0][4..].to_vec()).unwrap();
    assert!(
        text.starts_with("infoResponse\n\\challenge\\abc\\hostname\\^2Loop?back RP\\"),
        "{text}"
    );
    assert!(text.contains("\\clients\\3\\sv_maxclients\\64\\"), "{text}");
    for request in [
        &b"\xff\xff\xff\xffgetstatus\n"[..],
        b"\xff\xff\xff\xffgetinfo a\\b",
        b"\xff\xff\xff\xffgetinfoX",
        b"getinfo x",
    ] {
        assert!(answers(request).is_empty(), "{request:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Over loopback

/// The responder on UDP and a one-route HTTP server on TCP, on the same port.
async fn serve(players_json: &'static str) -> (SocketAddr, CancellationToken) {
    let (udp, tcp) = loop {
        let udp = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        if let Ok(tcp) = TcpListener::bind(udp.local_addr().unwrap()).await {
            break (udp, tcp);
        }
    };
    let addr = udp.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let token = shutdown.clone();
    tokio::spawn(async move {
        let responder = FivemResponder::new(SharedState::new(state()), FivemConfig::default());
        let mut service = Service::new(responder).rate_limit(None);
        driver::serve(&udp, &mut service, &token).await.unwrap();
    });
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = tcp.accept().await {
            let mut request = vec![0u8; 1024];
            let n = stream.read(&mut request).await.unwrap_or(0);
            let head = String::from_utf8_lossy(&request[..n]).into_owned();
            let response = if head.starts_with("GET /players.json HTTP/1.0\r\n") {
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{players_json}",
                    players_json.len()
                )
            } else {
                "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_owned()
            };
            let _ = stream.write_all(response.as_bytes()).await;
        }
    });
    (addr, shutdown)
}

#[tokio::test]
async fn the_query_reads_getinfo_and_players_json_on_one_port() {
    let (addr, shutdown) = serve(
        r#"[{"id":1,"name":"p0","ping":20},{"id":2,"name":"p1","ping":21},{"id":3,"name":"p2","ping":22}]"#,
    )
    .await;
    let status = driver::query_fivem(addr.to_string(), &options())
        .await
        .unwrap();
    assert!(status.complete, "{}", status.raw);
    assert_eq!(status.name, "Loop?back RP");
    assert_eq!((status.num_players, status.max_players), (3, 64));
    let players: Vec<_> = status
        .players
        .iter()
        .map(|p| (p.name.as_str(), p.ping))
        .collect();
    assert_eq!(
        players,
        [("p0", Some(20)), ("p1", Some(21)), ("p2", Some(22))]
    );
    shutdown.cancel();
}

#[tokio::test]
async fn a_broken_player_list_leaves_an_honest_incomplete_status() {
    let (addr, shutdown) = serve("not json").await;
    let status = driver::query(Protocol::Fivem, &addr.to_string(), &options())
        .await
        .unwrap();
    assert!(!status.complete);
    assert_eq!(status.num_players, 3);
    assert!(status.players.is_empty());
    assert!(
        status.raw["players_error"]
            .as_str()
            .unwrap()
            .contains("/players.json"),
        "{}",
        status.raw
    );
    shutdown.cancel();
}

// ---------------------------------------------------------------------------------------------
// The HTTP responder under the listener's caps

/// Both responders on one port, the TCP listener under `limits`.
async fn serve_both(limits: ListenerLimits) -> (SocketAddr, Arc<ListenerStats>, CancellationToken) {
    let (udp, tcp) = loop {
        let udp = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        if let Ok(tcp) = TcpListener::bind(udp.local_addr().unwrap()).await {
            break (udp, tcp);
        }
    };
    let addr = udp.local_addr().unwrap();
    let shared = SharedState::new(state());
    let shutdown = CancellationToken::new();
    let stats = Arc::new(ListenerStats::default());
    let token = shutdown.clone();
    let udp_state = shared.clone();
    tokio::spawn(async move {
        let responder = FivemResponder::new(udp_state, FivemConfig::default());
        let mut service = Service::new(responder).rate_limit(None);
        driver::serve(&udp, &mut service, &token).await.unwrap();
    });
    tokio::spawn(serve_stream(
        tcp,
        move || FivemHttpResponder::new(shared.clone()),
        limits,
        Arc::clone(&stats),
        shutdown.clone(),
    ));
    (addr, stats, shutdown)
}

#[tokio::test]
async fn the_query_reads_the_players_the_http_responder_lists() {
    let (addr, _, shutdown) = serve_both(ListenerLimits::default()).await;
    let status = driver::query_fivem(addr.to_string(), &options())
        .await
        .unwrap();
    assert!(status.complete, "{}", status.raw);
    assert_eq!(status.raw["players_source"], "/players.json");
    let players: Vec<_> = status
        .players
        .iter()
        .map(|p| (p.name.as_str(), p.ping, p.id))
        .collect();
    assert_eq!(
        players,
        [
            ("p0", Some(20), Some(1)),
            ("p1", Some(21), Some(2)),
            ("p2", Some(22), Some(3))
        ]
    );
    shutdown.cancel();
}

#[tokio::test]
async fn hostile_http_clients_are_cut_and_the_listener_keeps_serving() {
    let limits = ListenerLimits {
        max_per_source: 2,
        idle_timeout: Duration::from_millis(200),
        session_timeout: Duration::from_millis(600),
        ..ListenerLimits::default()
    };
    let (addr, stats, shutdown) = serve_both(limits).await;
    let read_all = |mut stream: TcpStream| async move {
        let mut answer = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(3), stream.read_to_end(&mut answer));
        read.await.expect("the server closes").ok();
        answer
    };

    // Slow headers: a byte every 100 ms keeps the connection busy but never finishes the
    // head; the session timeout cuts it.
    let t0 = Instant::now();
    let (mut reader, mut writer) = TcpStream::connect(addr).await.unwrap().into_split();
    let drip = async move {
        for byte in b"GET /players.json HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" {
            if writer.write_all(&[*byte]).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        std::future::pending::<()>().await;
    };
    let mut answer = Vec::new();
    tokio::select! {
        () = drip => unreachable!(),
        read = tokio::time::timeout(Duration::from_secs(3), reader.read_to_end(&mut answer)) => {
            read.expect("the server cuts a slow client").ok();
        }
    }
    assert!(answer.is_empty(), "{}", String::from_utf8_lossy(&answer));
    assert!(t0.elapsed() < Duration::from_secs(2));

    // A silent client is cut at the idle timeout.
    let silent = TcpStream::connect(addr).await.unwrap();
    let t1 = Instant::now();
    assert!(read_all(silent).await.is_empty());
    assert!(t1.elapsed() < Duration::from_secs(2));
    assert!(stats.timed_out.load(Ordering::Relaxed) >= 2);

    // An oversized head is refused at the cap, without waiting for the rest.
    let mut big = TcpStream::connect(addr).await.unwrap();
    let mut request = b"GET /players.json HTTP/1.1\r\n".to_vec();
    request.extend(std::iter::repeat_n(b'x', 64 * 1024));
    let _ = big.write_all(&request).await;
    let answer = read_all(big).await;
    assert!(
        answer.starts_with(b"HTTP/1.1 431 "),
        "{}",
        String::from_utf8_lossy(&answer)
    );

    // Past the per-address cap, connections are closed at once.
    let held: Vec<TcpStream> = vec![
        TcpStream::connect(addr).await.unwrap(),
        TcpStream::connect(addr).await.unwrap(),
    ];
    tokio::time::sleep(Duration::from_millis(50)).await;
    let refused = TcpStream::connect(addr).await.unwrap();
    assert!(read_all(refused).await.is_empty());
    assert!(stats.refused.load(Ordering::Relaxed) >= 1);
    drop(held);

    // Everyone else is still served.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let status = driver::query_fivem(addr.to_string(), &options())
        .await
        .unwrap();
    assert!(status.complete, "{}", status.raw);
    assert_eq!(status.players.len(), 3);
    shutdown.cancel();
}
