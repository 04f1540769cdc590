//! OneQuery client against the OneQuery responder on loopback sockets: every field, paging,
//! auth, a lossy link, corruption, and spoofed replies.

mod onequery_support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use onequery_support::{comparable, expected, players, sample_state};
use query_net::driver;
use query_net::engine::Responder;
use query_net::engines::onequery::{
    Access, AuthSecret, OneQueryClient, OneQueryResponder, Permissions,
};
use query_net::limit::Stats;
use query_net::service::Service;
use query_net::state::{ServerState, SharedState};
use query_net::testing::lossy::{Impairments, LossyProxy};
use query_net::{Options, Protocol, QueryError};
use query_specs::onequery::{Payload, Reply, ReplyBody, ReplyFamily};
use query_wire::{Decode, Encode};
use tokio::net::UdpSocket;
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;

/// A responder served on a loopback port until dropped.
struct Server {
    addr: SocketAddr,
    stats: Arc<Stats>,
    shutdown: CancellationToken,
    _task: JoinHandle<std::io::Result<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

async fn serve(responder: impl Responder + Send + 'static) -> Server {
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = socket.local_addr().unwrap();
    // Every client of these tests is 127.0.0.1: no rate limit.
    let mut service = Service::new(responder).rate_limit(None);
    let stats = Arc::clone(service.stats());
    let shutdown = CancellationToken::new();
    let token = shutdown.clone();
    let task = tokio::spawn(async move { driver::serve(&socket, &mut service, &token).await });
    Server {
        addr,
        stats,
        shutdown,
        _task: task,
    }
}

fn options(timeout_ms: u64, retries: u32) -> Options {
    Options {
        timeout: Duration::from_millis(timeout_ms),
        retries,
        ..Options::default()
    }
}

#[tokio::test]
async fn every_field_served_is_received() {
    let state = sample_state();
    let shared = SharedState::new(state.clone());
    let server = serve(OneQueryResponder::new(shared.clone())).await;
    let address = server.addr.to_string();
    let status = driver::query(Protocol::OneQuery, &address, &options(10_000, 0))
        .await
        .unwrap();
    // Measured, and within the one attempt's timeout.
    assert!(status.ping_ms > 0.0 && status.ping_ms < 10_000.0);
    let info = &status.raw["server_info"];
    assert_eq!(info["motd"], state.motd.as_str());
    assert_eq!(info["protocol_version"], state.protocol_version);
    assert_eq!(info["protocol_hash"], state.protocol_hash.as_str());
    assert_eq!(info["host"], state.host.as_deref().unwrap());
    assert_eq!(info["port"], state.port);
    assert_eq!(status.raw["is_network"], state.is_network);
    assert_eq!(comparable(status), expected(&state, server.addr));
    let stats = server.stats.snapshot();
    assert_eq!((stats.received, stats.answered), (3, 3));
}

#[tokio::test]
async fn hundreds_of_players_arrive_over_several_pages() {
    let state = ServerState {
        players: players(500),
        ..sample_state()
    };
    let server = serve(OneQueryResponder::new(SharedState::new(state.clone()))).await;
    let session = OneQueryClient::new(server.addr, &options(1000, 0)).unwrap();
    let status = driver::query_session(session).await.unwrap();
    let pages = status.raw["player_pages"].as_u64().unwrap();
    assert!(pages >= 3, "{pages} pages");
    assert_eq!(comparable(status), expected(&state, server.addr));
    assert_eq!(server.stats.snapshot().answered, 2 + pages);
}

#[tokio::test]
async fn auth_is_enforced_over_the_network() {
    let state = sample_state();
    let access = Access {
        public: Permissions::BASIC,
        secrets: vec![AuthSecret {
            secret: "öffne dich".to_owned(),
            grants: Permissions::PLAYERS,
        }],
    };
    let responder = OneQueryResponder::new(SharedState::new(state.clone())).with_access(access);
    let server = serve(responder).await;
    let address = server.addr.to_string();
    // BASIC is public: the status comes, without the players the token would unlock.
    let status = driver::query(Protocol::OneQuery, &address, &options(1000, 0))
        .await
        .unwrap();
    assert!(!status.complete);
    assert!(status.players.is_empty());
    assert!(
        status.raw["players_error"]
            .as_str()
            .is_some_and(|m| m.contains("auth token")),
        "{}",
        status.raw
    );
    let mut without_players = expected(&state, server.addr);
    without_players.players.clear();
    without_players.complete = false;
    assert_eq!(comparable(status), without_players);
    let with_token = Options {
        auth_token: Some("öffne dich".to_owned()),
        ..options(1000, 0)
    };
    let status = driver::query(Protocol::OneQuery, &address, &with_token)
        .await
        .unwrap();
    assert_eq!(comparable(status), expected(&state, server.addr));
    server.shutdown.cancel();

    // A server that shares nothing without a token: the query fails with AuthRequired.
    let private = Access {
        public: Permissions::empty(),
        secrets: Vec::new(),
    };
    let server = serve(OneQueryResponder::new(SharedState::new(state)).with_access(private)).await;
    let err = driver::query(
        Protocol::OneQuery,
        &server.addr.to_string(),
        &options(1000, 0),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, QueryError::AuthRequired(_)), "{err}");
}

async fn query_through(
    proxy: SocketAddr,
    sessions: usize,
    opts: Options,
) -> Vec<Result<query_net::ServerStatus, QueryError>> {
    let mut set = JoinSet::new();
    for _ in 0..sessions {
        let session = OneQueryClient::new(proxy, &opts).unwrap();
        set.spawn(driver::query_session(session));
    }
    let mut results = Vec::new();
    while let Some(joined) = set.join_next().await {
        results.push(joined.unwrap());
    }
    results
}

#[tokio::test]
async fn through_a_lossy_link_answers_are_right_or_a_timeout() {
    let state = ServerState {
        players: players(150),
        ..sample_state()
    };
    let server = serve(OneQueryResponder::new(SharedState::new(state.clone()))).await;
    let proxy = LossyProxy::start(
        server.addr,
        Impairments {
            drop: 0.2,
            duplicate: 0.2,
            reorder: 0.2,
            max_delay: Duration::from_millis(5),
            reorder_hold: Duration::from_millis(10),
            ..Impairments::default()
        },
        5,
    )
    .await
    .unwrap();
    let results = query_through(proxy.addr(), 30, options(80, 6)).await;
    let want = expected(&state, proxy.addr());
    let mut answered = 0;
    for result in results {
        match result {
            Ok(status) => {
                assert_eq!(comparable(status), want);
                answered += 1;
            }
            Err(QueryError::Timeout { attempts: 7, .. }) => {}
            Err(other) => panic!("{other}"),
        }
    }
    assert!(answered >= 24, "only {answered} of 30 answered");
    let stats = proxy.stats();
    assert!(
        stats.dropped > 0 && stats.duplicated > 0 && stats.reordered > 0,
        "{stats:?}"
    );
}

/// As for SQP: OneQuery has no checksum, so a changed byte inside a name can pass unnoticed;
/// the client must survive everything else and report what it could not use.
#[tokio::test]
async fn corrupted_datagrams_are_survived_and_mostly_caught() {
    let state = sample_state();
    let server = serve(OneQueryResponder::new(SharedState::new(state.clone()))).await;
    let proxy = LossyProxy::start(
        server.addr,
        Impairments {
            corrupt: 0.2,
            duplicate: 0.3,
            ..Impairments::default()
        },
        13,
    )
    .await
    .unwrap();
    let results = query_through(proxy.addr(), 30, options(80, 4)).await;
    let want = expected(&state, proxy.addr());
    let (mut right, mut wrong, mut failed) = (0, 0, 0);
    for result in results {
        match result {
            Ok(status) if comparable(status.clone()) == want => right += 1,
            Ok(_) => wrong += 1,
            Err(
                QueryError::Timeout { .. } | QueryError::Malformed(_) | QueryError::Protocol(_),
            ) => failed += 1,
            Err(other) => panic!("{other}"),
        }
    }
    let stats = proxy.stats();
    println!("right {right}, wrong {wrong}, failed {failed}; proxy {stats:?}");
    assert!(stats.corrupted > 0, "{stats:?}");
    assert!(right >= 15, "right {right}, wrong {wrong}, failed {failed}");
    assert!(wrong <= stats.corrupted as usize);
    let served = server.stats.snapshot();
    assert!(
        served.dropped_malformed + served.dropped_bad_challenge > 0,
        "{served:?}"
    );
}

/// Relays to the responder and, before each real query reply, sends forgeries with another
/// server name: from another port with the right request id, and from the right address with
/// another request id and with the other family's magic.
async fn spoofing_relay(upstream: SocketAddr) -> (SocketAddr, JoinHandle<()>) {
    let front = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = front.local_addr().unwrap();
    let spoofer = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let back = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let task = tokio::spawn(async move {
        let mut buf = vec![0u8; 65_536];
        let mut reply_buf = vec![0u8; 65_536];
        loop {
            let Ok((len, client)) = front.recv_from(&mut buf).await else {
                return;
            };
            back.send_to(&buf[..len], upstream).await.unwrap();
            let (reply_len, _) = back.recv_from(&mut reply_buf).await.unwrap();
            let reply = &reply_buf[..reply_len];
            let decoded = Reply::from_bytes(reply).expect("the responder's reply decodes");
            if let ReplyBody::Query(real) = &decoded.body {
                let mut forged = real.clone();
                for entry in &mut forged.payload {
                    if let Payload::ServerInfo(info) = entry {
                        info.server_name = "FORGED";
                    }
                    if let Payload::PlayerList(page) = entry {
                        page.players.iter_mut().for_each(|p| p.username = "FORGED");
                    }
                }
                let encode = |family, request_id| {
                    let mut body = forged.clone();
                    body.request_id = request_id;
                    Reply {
                        family,
                        body: ReplyBody::Query(body),
                    }
                    .to_vec()
                    .unwrap()
                };
                let id = real.request_id;
                spoofer
                    .send_to(&encode(ReplyFamily::OneReply, id), client)
                    .await
                    .unwrap();
                for forgery in [
                    encode(ReplyFamily::OneReply, id.wrapping_add(1)),
                    encode(ReplyFamily::HyReply2, id),
                ] {
                    front.send_to(&forgery, client).await.unwrap();
                }
            }
            front.send_to(reply, client).await.unwrap();
        }
    });
    (addr, task)
}

#[tokio::test]
async fn spoofed_replies_are_ignored_and_the_real_one_accepted() {
    let state = ServerState {
        players: players(120),
        ..sample_state()
    };
    let server = serve(OneQueryResponder::new(SharedState::new(state.clone()))).await;
    let (relay, task) = spoofing_relay(server.addr).await;
    for _ in 0..3 {
        let session = OneQueryClient::new(relay, &options(1000, 0)).unwrap();
        let status = driver::query_session(session).await.unwrap();
        assert_eq!(comparable(status), expected(&state, relay));
    }
    task.abort();
}
