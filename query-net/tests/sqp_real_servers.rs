//! The SQP client against responders that behave like the servers people run (see
//! `query_net::testing::sqp_servers`): Unity's SDK (ServerInfo only), the reference client's
//! sample server (ServerInfo and Metrics only) and FPSSample (version 0), on loopback sockets.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use query_net::clock::Now;
use query_net::driver;
use query_net::engine::{ClientSession, ReplySink, Responder};
use query_net::engines::sqp::SqpClient;
use query_net::service::Service;
use query_net::testing::sqp_servers::RealSqpServer;
use query_net::{Options, QueryError, ServerStatus};
use query_specs::sqp::{ChunkSet, QueryRequest, Request};
use query_wire::Encode;
use serde_json::json;
use tokio::net::UdpSocket;
use tokio_util::sync::CancellationToken;

/// Serves `responder` on a loopback port until the token is cancelled.
async fn serve(responder: RealSqpServer) -> (SocketAddr, CancellationToken) {
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = socket.local_addr().unwrap();
    let mut service = Service::new(responder).rate_limit(None);
    let shutdown = CancellationToken::new();
    let token = shutdown.clone();
    tokio::spawn(async move { driver::serve(&socket, &mut service, &token).await });
    (addr, shutdown)
}

fn options(chunks: ChunkSet) -> Options {
    Options {
        timeout: Duration::from_millis(1500),
        retries: 2,
        sqp_chunks: chunks,
        ..Options::default()
    }
}

/// Queries `server` for `chunks` through the library and checks the answer came at the first
/// attempt.
async fn query(server: RealSqpServer, chunks: ChunkSet) -> Result<ServerStatus, QueryError> {
    let (addr, shutdown) = serve(server).await;
    let started = Instant::now();
    let result = driver::query_sqp(addr, &options(chunks)).await;
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "answered without a retry"
    );
    shutdown.cancel();
    result
}

const EVERY_CHUNK_SET: [ChunkSet; 4] = [
    ChunkSet::SERVER_INFO,
    ChunkSet::all(),
    ChunkSet::SERVER_INFO.union(ChunkSet::PLAYER_INFO),
    ChunkSet::SERVER_INFO
        .union(ChunkSet::SERVER_RULES)
        .union(ChunkSet::METRICS),
];

#[tokio::test]
async fn unity_sdk_server_info_only_answers_every_chunk_set() {
    for chunks in EVERY_CHUNK_SET {
        let status = query(RealSqpServer::unity_sdk(), chunks).await.unwrap();
        assert_eq!(status.name, "UE4 Dedicated Server");
        assert_eq!(status.map.as_deref(), Some("Highrise"));
        assert_eq!(
            status.game_type.as_deref(),
            Some("/Script/ShooterGame.ShooterGame_TeamDeathMatch")
        );
        assert_eq!(status.version.as_deref(), Some("001"));
        assert_eq!((status.num_players, status.max_players), (0, 16));
        assert!(status.complete);
        assert_eq!(status.raw["version"], 1);
        assert_eq!(status.raw["server_info"]["port"], 7777);
        let missing: Vec<&str> =
            query_net::engines::sqp::chunk_names(chunks - ChunkSet::SERVER_INFO);
        assert_eq!(status.raw["missing_chunks"], json!(missing), "{chunks:?}");
    }
}

#[tokio::test]
async fn reference_sample_server_sends_info_and_metrics_only() {
    let status = query(RealSqpServer::reference_sample(), ChunkSet::all())
        .await
        .unwrap();
    assert_eq!(status.name, "my server");
    assert_eq!((status.num_players, status.max_players), (5, 10));
    assert_eq!(status.raw["metrics"]["values"][2], json!(55.57_f32));
    assert_eq!(
        status.raw["missing_chunks"],
        json!(["rules", "players", "teams"])
    );
    assert!(status.players.is_empty() && status.rules.is_empty() && status.teams.is_empty());

    // Metrics alone, which it implements: nothing is missing.
    let status = query(RealSqpServer::reference_sample(), ChunkSet::METRICS)
        .await
        .unwrap();
    assert_eq!(status.raw["metrics"]["values"].as_array().unwrap().len(), 4);
    assert_eq!(status.raw["missing_chunks"], json!([]));
    assert_eq!(status.name, "");
}

#[tokio::test]
async fn fps_sample_version_0_is_accepted_and_noted() {
    let status = query(RealSqpServer::fps_sample(), ChunkSet::all())
        .await
        .unwrap();
    assert_eq!(status.name, "FPS Sample");
    assert_eq!(status.map.as_deref(), Some("Level_01"));
    assert_eq!(status.raw["version"], 0);
    assert_eq!(
        status.raw["missing_chunks"],
        json!(["rules", "players", "teams", "metrics"])
    );
}

#[test]
fn the_unity_sdk_reply_is_the_documents_example() {
    // The document's reply, challenge 0xc07a6c3d, to a query for ServerInfo.
    let text = include_str!("../../specs/fixtures/sqp/sqp_query_response.hex");
    let document = hex::decode(text.split_whitespace().collect::<String>()).unwrap();
    let mut server = RealSqpServer::unity_sdk();
    let mut sink = ReplySink::new(1400);
    let now = Now::system();
    server.handle(client(), &[0; 5], now, &mut sink);
    let challenge = u32::from_be_bytes(sink.datagrams().next().unwrap()[1..5].try_into().unwrap());
    let query = Request::Query(QueryRequest {
        challenge,
        version: 1,
        requested: ChunkSet::all(),
    });
    sink.clear();
    server.handle(client(), &query.to_vec().unwrap(), now, &mut sink);
    let mut reply = sink.datagrams().next().unwrap().to_vec();
    reply[1..5].copy_from_slice(&document[1..5]);
    assert_eq!(reply, document);

    // And the client reads it, whatever it asked for.
    let mut session = SqpClient::new(server_addr(), &options(ChunkSet::all()));
    let t0 = Instant::now();
    assert!(session.poll_transmit(t0).is_some());
    session.handle_datagram(server_addr(), &[0, 0xc0, 0x7a, 0x6c, 0x3d], t0);
    assert!(session.poll_transmit(t0).is_some());
    session.handle_datagram(server_addr(), &document, t0);
    let status = session.poll_result().unwrap().unwrap();
    assert_eq!(status.name, "UE4 Dedicated Server");
}

fn client() -> SocketAddr {
    "127.0.0.1:50000".parse().unwrap()
}

fn server_addr() -> SocketAddr {
    "127.0.0.1:7779".parse().unwrap()
}
