//! The BattlEye client and server on loopback, through the lossy proxy: lost, duplicated,
//! reordered and corrupted datagrams in both directions. Short answers always come through
//! (resends, and the server answering a resent command from its cache); split answers come
//! whole or fail as incomplete, never cut short or mixed up.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use query_net::rcon::battleye::server::{serve, BattlEyeConfig, MAX_PART_BODY};
use query_net::rcon::battleye::Client;
use query_net::rcon::server::{AuthGate, CommandHandler};
use query_net::testing::lossy::{Impairments, LossyProxy};
use query_net::{Options, QueryError};
use tokio::net::UdpSocket;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

struct Console;

impl CommandHandler for Console {
    async fn execute(&self, command: String, _peer: SocketAddr) -> String {
        match command.strip_prefix("long ") {
            Some(n) => long(n.parse().unwrap()),
            None => format!("ran {command}"),
        }
    }
}

fn long(n: usize) -> String {
    (0..n).map(|i| format!("line {i:05}\n")).collect()
}

async fn start_server(password: &str) -> (SocketAddr, mpsc::Sender<String>, CancellationToken) {
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let address = socket.local_addr().unwrap();
    let config = BattlEyeConfig::default();
    let gate = Arc::new(AuthGate::new(password, config.lockout));
    let (say, messages) = mpsc::channel(16);
    let shutdown = CancellationToken::new();
    tokio::spawn(serve(
        socket,
        gate,
        Arc::new(Console),
        config,
        messages,
        shutdown.clone(),
    ));
    (address, say, shutdown)
}

fn options() -> Options {
    Options {
        timeout: Duration::from_millis(150),
        retries: 5,
        deadline: Duration::from_secs(5),
        ..Options::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_come_through_loss_duplicates_reordering_and_corruption() {
    let (server, say, shutdown) = start_server("pw").await;
    let impairments = Impairments {
        drop: 0.1,
        duplicate: 0.2,
        reorder: 0.2,
        corrupt: 0.05,
        max_delay: Duration::from_millis(5),
        ..Impairments::default()
    };
    let proxy = LossyProxy::start(server, impairments, 28).await.unwrap();
    let mut client = Client::connect(proxy.addr(), "pw", &options())
        .await
        .unwrap();
    for i in 0..40 {
        let command = format!("cmd {i}");
        assert_eq!(
            client.command(&command).await.unwrap(),
            format!("ran {command}")
        );
    }
    // Past 255 the sequence wraps; the session goes on.
    assert!(client.is_connected());

    let (mut whole, mut incomplete) = (0, 0);
    for _ in 0..10 {
        match client.command("long 600").await {
            Ok(text) => {
                assert_eq!(text, long(600));
                whole += 1;
            }
            Err(QueryError::Protocol(message)) if message.contains("incomplete") => incomplete += 1,
            Err(other) => panic!("{other}"),
        }
    }
    assert!(long(600).len() > 4 * MAX_PART_BODY);
    assert!(whole > 0, "{whole} whole, {incomplete} incomplete");

    // Server messages arrive once each, whatever the duplicates and resends.
    for i in 0..5 {
        say.send(format!("message {i}")).await.unwrap();
    }
    let mut got = Vec::new();
    while let Ok(Some(message)) =
        tokio::time::timeout(Duration::from_secs(3), client.messages().recv()).await
    {
        got.push(String::from_utf8(message).unwrap());
        if got.last().is_some_and(|m| m == "message 4") {
            break;
        }
    }
    let mut deduplicated = got.clone();
    deduplicated.dedup();
    assert_eq!(got, deduplicated, "no message twice");
    assert!(got.iter().any(|m| m == "message 4"), "{got:?}");
    shutdown.cancel();
}

#[tokio::test]
async fn a_refused_password_and_a_silent_port() {
    let (server, _say, shutdown) = start_server("pw").await;
    let error = Client::connect(server, "wrong", &options())
        .await
        .unwrap_err();
    assert!(matches!(error, QueryError::AuthRequired(_)), "{error}");
    shutdown.cancel();

    // A bound socket that never answers: the login is resent, then the deadline or the
    // attempts end it.
    let silent = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let options = Options {
        timeout: Duration::from_millis(50),
        retries: 1,
        deadline: Duration::from_secs(2),
        ..Options::default()
    };
    let error = Client::connect(silent.local_addr().unwrap(), "pw", &options)
        .await
        .unwrap_err();
    assert!(
        matches!(error, QueryError::Timeout { attempts: 2, .. }),
        "{error}"
    );
}
