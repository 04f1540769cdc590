//! SQP client against the SQP responder on loopback sockets: every field, a lossy link,
//! corruption, and spoofed replies.

mod sqp_support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use query_net::driver;
use query_net::engine::Responder;
use query_net::engines::sqp::{SqpClient, SqpResponder};
use query_net::limit::Stats;
use query_net::service::Service;
use query_net::state::SharedState;
use query_net::testing::lossy::{Impairments, LossyProxy};
use query_net::{Options, Protocol, QueryError};
use query_specs::sqp::{ChallengeResponse, ChunkSet, Request, Response};
use query_wire::{Decode, Encode};
use sqp_support::{comparable, expected, sample_state};
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

/// Every chunk: the responder serves them all.
fn options(timeout_ms: u64, retries: u32) -> Options {
    Options {
        timeout: Duration::from_millis(timeout_ms),
        retries,
        sqp_chunks: ChunkSet::all(),
        ..Options::default()
    }
}

#[tokio::test]
async fn every_field_served_is_received() {
    let state = sample_state();
    let shared = SharedState::new(state.clone());
    let server = serve(SqpResponder::new(shared.clone())).await;
    let address = server.addr.to_string();
    let status = driver::query(Protocol::Sqp, &address, &options(1000, 0))
        .await
        .unwrap();
    assert!(
        status.ping_ms > 0.0 && status.ping_ms < 1000.0,
        "{}",
        status.ping_ms
    );
    assert_eq!(status.raw["server_info"]["port"], 7777);
    assert_eq!(comparable(status), expected(&state, server.addr));

    // The next query sees the game's update.
    shared.update(|s| {
        s.name = "Neuer Name — 新".to_owned();
        s.players.truncate(1);
    });
    let status = driver::query(Protocol::Sqp, &address, &options(1000, 0))
        .await
        .unwrap();
    assert_eq!(status.name, "Neuer Name — 新");
    assert_eq!(status.players.len(), 1);

    let stats = server.stats.snapshot();
    assert_eq!(
        (stats.received, stats.answered, stats.replies_sent),
        (4, 4, 4)
    );
}

/// Runs `sessions` queries through `proxy` at once; returns the outcomes.
async fn query_through(
    proxy: SocketAddr,
    sessions: usize,
    opts: Options,
) -> Vec<Result<query_net::ServerStatus, QueryError>> {
    let mut set = JoinSet::new();
    for _ in 0..sessions {
        let session = SqpClient::new(proxy, &opts);
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
    let state = sample_state();
    let server = serve(SqpResponder::new(SharedState::new(state.clone()))).await;
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
        7,
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

/// A changed byte inside a string or a number is undetectable: SQP has no checksum (UDP's
/// own catches real line errors, which this proxy bypasses). What the client must do is never
/// crash and report broken replies clearly: a damaged reply that still echoes the challenge
/// ends the query with its error (only the server knows the challenge), while damaged
/// challenges and requests cost a retry.
#[tokio::test]
async fn corrupted_datagrams_are_survived_and_mostly_caught() {
    let state = sample_state();
    let server = serve(SqpResponder::new(SharedState::new(state.clone()))).await;
    let proxy = LossyProxy::start(
        server.addr,
        Impairments {
            corrupt: 0.2,
            duplicate: 0.3,
            ..Impairments::default()
        },
        11,
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
                QueryError::Timeout { .. }
                | QueryError::Malformed(_)
                | QueryError::Protocol(_)
                | QueryError::ServerReply(_),
            ) => failed += 1,
            Err(other) => panic!("{other}"),
        }
    }
    let stats = proxy.stats();
    println!("right {right}, wrong {wrong}, failed {failed}; proxy {stats:?}");
    assert!(stats.corrupted > 0, "{stats:?}");
    assert!(right >= 15, "right {right}, wrong {wrong}, failed {failed}");
    assert!(wrong <= stats.corrupted as usize);
    // The responder counted the damaged requests it refused.
    let served = server.stats.snapshot();
    assert!(
        served.dropped_malformed + served.dropped_bad_challenge + served.dropped_unsupported > 0
    );
}

/// Sits between the client and the responder, and before each real reply sends forgeries: the
/// same reply with another server name from another port, and one with another challenge from
/// its own (the right) address. A challenge from another port comes before the real one.
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
            let request = buf[..len].to_vec();
            back.send_to(&request, upstream).await.unwrap();
            let (reply_len, _) = back.recv_from(&mut reply_buf).await.unwrap();
            let reply = &reply_buf[..reply_len];
            match Request::from_bytes(&request) {
                Ok(Request::Challenge(_)) => {
                    let fake = Response::Challenge(ChallengeResponse { challenge: 0xbad })
                        .to_vec_with(ChunkSet::empty())
                        .unwrap();
                    spoofer.send_to(&fake, client).await.unwrap();
                }
                Ok(Request::Query(query)) => {
                    let requested = query.requested;
                    let Ok(Response::Query(mut real)) = Response::from_bytes_with(reply, requested)
                    else {
                        panic!("the responder's reply does not decode");
                    };
                    if let Some(info) = real.chunks.server_info.as_mut() {
                        info.server_name = "FORGED";
                    }
                    let same_challenge = Response::Query(real.clone());
                    spoofer
                        .send_to(&same_challenge.to_vec_with(requested).unwrap(), client)
                        .await
                        .unwrap();
                    real.challenge ^= 0x5a5a;
                    let other_challenge = Response::Query(real);
                    front
                        .send_to(&other_challenge.to_vec_with(requested).unwrap(), client)
                        .await
                        .unwrap();
                }
                Err(e) => panic!("the client sent an undecodable request: {e}"),
            }
            front.send_to(reply, client).await.unwrap();
        }
    });
    (addr, task)
}

#[tokio::test]
async fn spoofed_replies_are_ignored_and_the_real_one_accepted() {
    let state = sample_state();
    let server = serve(SqpResponder::new(SharedState::new(state.clone()))).await;
    let (relay, task) = spoofing_relay(server.addr).await;
    for _ in 0..5 {
        let status = driver::query_session(SqpClient::new(relay, &options(1000, 0)))
            .await
            .unwrap();
        assert_eq!(comparable(status), expected(&state, relay));
    }
    task.abort();
}
