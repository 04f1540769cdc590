//! `gsq query` against SQP servers that behave like real ones: Unity's SDK (ServerInfo only),
//! the reference client's sample server (ServerInfo and Metrics only), FPSSample (version 0),
//! and a server whose replies carry a version no client reads.

mod cli_support;

use std::net::SocketAddr;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use query_net::clock::Now;
use query_net::driver;
use query_net::engine::{ReplySink, Responder, Verdict};
use query_net::engines::samp::{SampConfig, SampResponder};
use query_net::service::Service;
use query_net::state::{ServerState, SharedState};
use query_net::testing::sqp_servers::RealSqpServer;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use cli_support::run;

/// Exit code of a malformed reply.
const MALFORMED: i32 = 9;

/// A responder served on a loopback port by a thread of its own, until dropped.
struct Served {
    addr: SocketAddr,
    shutdown: CancellationToken,
    thread: Option<JoinHandle<()>>,
}

impl Served {
    fn start(responder: impl Responder + Send + 'static) -> Served {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        socket.set_nonblocking(true).unwrap();
        let addr = socket.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        let stop = shutdown.clone();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let socket = tokio::net::UdpSocket::from_std(socket).unwrap();
                let mut service = Service::new(responder).rate_limit(None);
                driver::serve(&socket, &mut service, &stop).await.unwrap();
            });
        });
        Served {
            addr,
            shutdown,
            thread: Some(thread),
        }
    }

    fn addr(&self) -> String {
        self.addr.to_string()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.shutdown.cancel();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// `gsq query PROTOCOL ADDRESS --json` with a 1-second timeout; checks it succeeded silently.
fn query_ok(protocol: &str, served: &Served, extra: &[&str]) -> Value {
    let address = served.addr();
    let mut args = vec!["query", protocol, &address, "--json", "--timeout", "1s"];
    args.extend_from_slice(extra);
    let ran = run(&args);
    assert_eq!(
        ran.code,
        Some(0),
        "stdout: {}\nstderr: {}",
        ran.stdout,
        ran.stderr
    );
    assert_eq!(ran.stderr, "", "no hint or note on success");
    ran.json()
}

#[test]
fn defaults_read_a_server_info_only_server() {
    let served = Served::start(RealSqpServer::unity_sdk());
    let started = Instant::now();
    let status = query_ok("sqp", &served, &[]);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "no retry was needed"
    );
    assert_eq!(status["protocol"], "sqp");
    assert_eq!(status["name"], "UE4 Dedicated Server");
    assert_eq!(status["map"], "Highrise");
    assert_eq!(
        status["game_type"],
        "/Script/ShooterGame.ShooterGame_TeamDeathMatch"
    );
    assert_eq!(status["version"], "001");
    assert_eq!(
        (status["num_players"].clone(), status["max_players"].clone()),
        (json!(0), json!(16))
    );
    assert_eq!(status["complete"], true);
    assert_eq!(status["raw"]["version"], 1);
    assert_eq!(
        status["raw"]["missing_chunks"],
        json!(["rules", "players", "teams", "metrics"])
    );

    // Exactly the chunks asked for, one of which it lacks.
    let status = query_ok("sqp", &served, &["--chunks", "info,players"]);
    assert_eq!(status["raw"]["missing_chunks"], json!(["players"]));
    assert_eq!(status["players"], json!([]));
}

#[test]
fn defaults_read_the_reference_sample_server() {
    let served = Served::start(RealSqpServer::reference_sample());
    let status = query_ok("sqp", &served, &[]);
    assert_eq!(status["name"], "my server");
    assert_eq!(status["map"], "map");
    assert_eq!(
        (status["num_players"].clone(), status["max_players"].clone()),
        (json!(5), json!(10))
    );
    assert_eq!(
        status["raw"]["metrics"]["values"].as_array().unwrap().len(),
        4
    );
    assert_eq!(
        status["raw"]["missing_chunks"],
        json!(["rules", "players", "teams"])
    );
}

#[test]
fn defaults_read_a_version_0_server() {
    let served = Served::start(RealSqpServer::fps_sample());
    let status = query_ok("sqp", &served, &[]);
    assert_eq!(status["name"], "FPS Sample");
    assert_eq!(status["map"], "Level_01");
    assert_eq!(status["raw"]["version"], 0);
}

#[test]
fn auto_names_sqp_for_a_server_info_only_server() {
    let served = Served::start(RealSqpServer::unity_sdk());
    let status = query_ok("auto", &served, &[]);
    assert_eq!(status["protocol"], "sqp");
    assert_eq!(status["name"], "UE4 Dedicated Server");
}

#[test]
fn a_reply_of_an_unknown_version_fails_at_once_and_says_why() {
    let served = Served::start(RealSqpServer::unity_sdk().with_version(2));
    let address = served.addr();
    let started = Instant::now();
    let ran = run(&[
        "query",
        "sqp",
        &address,
        "--timeout",
        "20s",
        "--retries",
        "2",
    ]);
    // Waiting out even one attempt takes 20 s; failing at once takes milliseconds.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "not waited out"
    );
    ran.assert_error(MALFORMED, &["version 2", "speaks the protocol"]);
    assert!(!ran.stderr.contains("right protocol"), "{}", ran.stderr);
    assert!(!ran.stderr.contains("chunk"), "{}", ran.stderr);
}

/// SQP broken (version 2) and SA:MP working on one port.
struct BrokenSqpAndSamp {
    sqp: RealSqpServer,
    samp: SampResponder,
}

impl Responder for BrokenSqpAndSamp {
    fn handle(
        &mut self,
        from: SocketAddr,
        datagram: &[u8],
        now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        if datagram.starts_with(b"SAMP") {
            self.samp.handle(from, datagram, now, replies)
        } else {
            self.sqp.handle(from, datagram, now, replies)
        }
    }
}

#[test]
fn auto_passes_over_a_malformed_answer_to_the_protocol_that_decodes() {
    let state = SharedState::new(ServerState {
        name: "Both".into(),
        map: "dust".into(),
        max_players: 8,
        ..ServerState::default()
    });
    let served = Served::start(BrokenSqpAndSamp {
        sqp: RealSqpServer::unity_sdk().with_version(2),
        samp: SampResponder::new(state, SampConfig::default()),
    });
    let status = query_ok("auto", &served, &[]);
    assert_eq!(status["protocol"], "samp");
    assert_eq!(status["name"], "Both");
}
