//! The RCON client against the RCON server on loopback: split answers, a refused password,
//! the lockout, reconnecting after the server dropped the connection, the connection caps
//! and timeouts, a peer that sends garbage or nothing, and a server that stops answering.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use query_net::rcon::server::{serve, AuthGate, CommandHandler, LockoutPolicy, ServerConfig};
use query_net::rcon::{Client, Flavour};
use query_net::tcp::{ListenerLimits, ListenerStats};
use query_net::{Options, QueryError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

const PASSWORD: &str = "hunter2";

/// Echoes, repeats, sleeps, or counts what it ran.
#[derive(Default)]
struct TestConsole {
    ran: AtomicU32,
}

impl CommandHandler for TestConsole {
    async fn execute(&self, command: String, _peer: SocketAddr) -> String {
        self.ran.fetch_add(1, Ordering::Relaxed);
        match command.split_once(' ') {
            Some(("repeat", n)) => "0123456789".repeat(n.parse().unwrap()),
            Some(("sleep", ms)) => {
                tokio::time::sleep(Duration::from_millis(ms.parse().unwrap())).await;
                "slept".to_owned()
            }
            _ => format!("ran {command}"),
        }
    }
}

struct Running {
    address: SocketAddr,
    console: Arc<TestConsole>,
    stats: Arc<ListenerStats>,
    shutdown: CancellationToken,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

async fn start(config: ServerConfig) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let console = Arc::new(TestConsole::default());
    let stats = Arc::new(ListenerStats::default());
    let shutdown = CancellationToken::new();
    let gate = Arc::new(AuthGate::new(PASSWORD, config.lockout));
    tokio::spawn(serve(
        listener,
        gate,
        Arc::clone(&console),
        config,
        Arc::clone(&stats),
        shutdown.clone(),
    ));
    Running {
        address,
        console,
        stats,
        shutdown,
    }
}

fn options() -> Options {
    Options {
        timeout: Duration::from_secs(2),
        deadline: Duration::from_secs(5),
        max_reply_bytes: 1 << 20,
        ..Options::default()
    }
}

#[tokio::test]
async fn commands_and_split_answers_over_tcp() {
    let server = start(ServerConfig::default()).await;
    let mut client = Client::connect(server.address, Flavour::Source, PASSWORD, &options())
        .await
        .unwrap();
    assert_eq!(client.command("status").await.unwrap(), "ran status");
    // 100 KB: 25 packets of srcds's size, joined.
    let long = client.command("repeat 10000").await.unwrap();
    assert_eq!(long, "0123456789".repeat(10_000));
    assert_eq!(client.command("after").await.unwrap(), "ran after");
    assert_eq!(server.console.ran.load(Ordering::Relaxed), 3);
}

#[tokio::test]
async fn an_answer_over_the_reply_cap_fails_and_closes() {
    let server = start(ServerConfig::default()).await;
    let options = Options {
        max_reply_bytes: 50_000,
        ..options()
    };
    let mut client = Client::connect(server.address, Flavour::Source, PASSWORD, &options)
        .await
        .unwrap();
    let error = client.command("repeat 10000").await.unwrap_err();
    assert!(error.to_string().contains("50000 bytes"), "{error}");
    assert!(!client.is_connected());
    client.reconnect().await.unwrap();
    assert_eq!(client.command("x").await.unwrap(), "ran x");
}

#[tokio::test]
async fn a_wrong_password_is_refused_and_repeated_failures_lock_the_address_out() {
    let policy = LockoutPolicy {
        max_failures: 3,
        ..LockoutPolicy::default()
    };
    let server = start(ServerConfig {
        lockout: policy,
        ..ServerConfig::default()
    })
    .await;
    for _ in 0..3 {
        let error = Client::connect(server.address, Flavour::Source, "wrong", &options())
            .await
            .unwrap_err();
        assert!(matches!(error, QueryError::AuthRequired(_)), "{error}");
    }
    // Locked out: the right password is refused too.
    let error = Client::connect(server.address, Flavour::Source, PASSWORD, &options())
        .await
        .unwrap_err();
    assert!(matches!(error, QueryError::AuthRequired(_)), "{error}");
    assert_eq!(server.console.ran.load(Ordering::Relaxed), 0);
}

#[tokio::test]
async fn reconnect_authenticates_again_after_the_server_dropped_the_connection() {
    let server = start(ServerConfig {
        limits: ListenerLimits {
            idle_timeout: Duration::from_millis(300),
            ..ServerConfig::default().limits
        },
        ..ServerConfig::default()
    })
    .await;
    let mut client = Client::connect(server.address, Flavour::Source, PASSWORD, &options())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(600)).await;
    let error = client.command("lost").await.unwrap_err();
    assert!(matches!(error, QueryError::Io(_)), "{error}");
    assert!(error.to_string().contains("closed"), "{error}");
    assert!(!client.is_connected());
    client.reconnect().await.unwrap();
    assert_eq!(client.command("back").await.unwrap(), "ran back");
    assert!(server.stats.timed_out.load(Ordering::Relaxed) >= 1);
}

#[tokio::test]
async fn a_slow_command_is_answered_by_the_server_timeout() {
    let server = start(ServerConfig {
        command_timeout: Duration::from_millis(100),
        ..ServerConfig::default()
    })
    .await;
    let mut client = Client::connect(server.address, Flavour::Source, PASSWORD, &options())
        .await
        .unwrap();
    let answer = client.command("sleep 5000").await.unwrap();
    assert!(answer.contains("did not finish"), "{answer}");
    assert_eq!(client.command("next").await.unwrap(), "ran next");
}

#[tokio::test]
async fn a_client_gives_up_on_a_server_that_stops_answering() {
    let server = start(ServerConfig::default()).await;
    let options = Options {
        deadline: Duration::from_millis(300),
        ..options()
    };
    let mut client = Client::connect(server.address, Flavour::Source, PASSWORD, &options)
        .await
        .unwrap();
    let started = Instant::now();
    let error = client.command("sleep 3000").await.unwrap_err();
    assert!(matches!(error, QueryError::Deadline { .. }), "{error}");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn nothing_listening_and_a_silent_peer_end_in_time() {
    let free = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = free.local_addr().unwrap();
    drop(free);
    let error = Client::connect(address, Flavour::Minecraft, PASSWORD, &options())
        .await
        .unwrap_err();
    assert!(
        matches!(error, QueryError::ConnectionRefused { .. }),
        "{error}"
    );

    // Accepts and never answers.
    let silent = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = silent.local_addr().unwrap();
    let _hold = tokio::spawn(async move {
        let (_stream, _) = silent.accept().await.unwrap();
        tokio::time::sleep(Duration::from_secs(30)).await;
    });
    let options = Options {
        deadline: Duration::from_millis(300),
        ..options()
    };
    let error = Client::connect(address, Flavour::Source, PASSWORD, &options)
        .await
        .unwrap_err();
    assert!(matches!(error, QueryError::Deadline { .. }), "{error}");
}

#[tokio::test]
async fn garbage_silence_and_too_many_connections_are_cut() {
    let server = start(ServerConfig {
        auth_timeout: Duration::from_millis(200),
        limits: ListenerLimits {
            max_per_source: 2,
            ..ServerConfig::default().limits
        },
        ..ServerConfig::default()
    })
    .await;
    // A size word over the cap: closed before its body arrives.
    let mut garbage = TcpStream::connect(server.address).await.unwrap();
    garbage.write_all(b"\xff\xff\xff\x7f").await.unwrap();
    let mut buf = [0u8; 64];
    let read = tokio::time::timeout(Duration::from_secs(2), garbage.read(&mut buf)).await;
    assert!(matches!(read, Ok(Ok(0)) | Ok(Err(_))), "{read:?}");

    // Connected, never authenticating: cut at the auth deadline.
    let mut silent = TcpStream::connect(server.address).await.unwrap();
    let read = tokio::time::timeout(Duration::from_secs(2), silent.read(&mut buf)).await;
    assert!(matches!(read, Ok(Ok(0)) | Ok(Err(_))), "{read:?}");

    // Two held open from this address; the third is closed at once.
    let _one = TcpStream::connect(server.address).await.unwrap();
    let _two = TcpStream::connect(server.address).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut third = TcpStream::connect(server.address).await.unwrap();
    let read = tokio::time::timeout(Duration::from_secs(1), third.read(&mut buf)).await;
    assert!(matches!(read, Ok(Ok(0)) | Ok(Err(_))), "{read:?}");
    assert!(server.stats.refused.load(Ordering::Relaxed) >= 1);
}

#[tokio::test]
async fn minecraft_commands_over_its_cap_are_refused_before_sending() {
    let server = start(ServerConfig::default()).await;
    let mut client = Client::connect(server.address, Flavour::Minecraft, PASSWORD, &options())
        .await
        .unwrap();
    let error = client.command(&"a".repeat(1447)).await.unwrap_err();
    assert!(error.to_string().contains("1446"), "{error}");
    assert!(
        client.is_connected(),
        "nothing was sent: the connection stays"
    );
    assert_eq!(server.console.ran.load(Ordering::Relaxed), 0);
    assert_eq!(client.command("ok").await.unwrap(), "ran ok");
}
