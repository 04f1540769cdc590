//! A responder that answers with recorded datagrams, and a way to run `gsq` against it.
//!
//! [`ReplayServer`] implements [`Responder`] and runs under the crate's own
//! [`driver::serve`] on a loopback port, so the client under test talks to a real UDP socket.
//! It answers each request with the datagrams of its [`Script`], changing only the bytes that
//! must match the request, and records every request so tests can check what the client sent.

use std::net::{SocketAddr, UdpSocket};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use query_net::clock::Now;
use query_net::driver;
use query_net::engine::{DropReason, ReplySink, Responder, Verdict};
use query_net::service::Service;
use query_specs::a2s;
use query_wire::{Decode, Encode};
use tokio_util::sync::CancellationToken;

/// What the replay server answers.
#[derive(Debug, Clone)]
pub enum Script {
    /// SA:MP: each request is answered with the recorded datagram of the same opcode (byte 10),
    /// its 11-byte header replaced by the request's, as a server echoes it. Opcodes without a
    /// recorded datagram get no answer, like a server that ignores them.
    Samp { datagrams: Vec<Vec<u8>> },
    /// GameSpy v1: every request is answered with the recorded parts, delivered as `delivery`
    /// says.
    GameSpy {
        datagrams: Vec<Vec<u8>>,
        delivery: GameSpyDelivery,
    },
    /// SQP: a challenge request gets `challenge_response` verbatim; a query request whose
    /// challenge is the one issued and whose other bytes are those of an exchange's request
    /// gets that exchange's response datagrams, with the challenge written into bytes 1..5.
    Sqp {
        challenge_response: Vec<u8>,
        exchanges: Vec<SqpExchange>,
    },
    /// A2S, as a current Source server: every request without [`A2S_CHALLENGE`] gets that
    /// challenge; with it, the recorded datagrams of the reply kind asked for (whole packets of
    /// that type, and every split part of a reply of that type), in reverse order, so split
    /// parts arrive last first.
    A2s { datagrams: Vec<Vec<u8>> },
}

/// The challenge the A2S replay issues.
pub const A2S_CHALLENGE: i32 = 0x2a2b_2c2d;

/// One SQP query of the reference client's fixtures.
#[derive(Debug, Clone)]
pub struct SqpExchange {
    /// The request as the fixture has it (placeholder challenge in bytes 1..5).
    pub request: Vec<u8>,
    /// The reply datagrams, in the order they are sent (placeholder challenge in bytes 1..5).
    pub responses: Vec<Vec<u8>>,
}

/// How the parts of a GameSpy v1 reply reach the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GameSpyDelivery {
    /// As captured.
    InOrder,
    /// Last part first.
    Reversed,
    /// Every part twice, first arrivals out of order: 1, n, 2, 1, 3, 2, ...
    Duplicated,
    /// Every part except the one that carries `\final\`.
    WithoutFinal,
}

impl GameSpyDelivery {
    /// The indices of `datagrams` to send, in sending order.
    fn order(self, datagrams: &[Vec<u8>]) -> Vec<usize> {
        let n = datagrams.len();
        match self {
            GameSpyDelivery::InOrder => (0..n).collect(),
            GameSpyDelivery::Reversed => (0..n).rev().collect(),
            GameSpyDelivery::Duplicated => (0..n).flat_map(|i| [i, (i + n - 1) % n]).collect(),
            GameSpyDelivery::WithoutFinal => (0..n)
                .filter(|&i| !contains(&datagrams[i], b"\\final\\"))
                .collect(),
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// SA:MP echoes the first 11 bytes of the request: `SAMP`, address, port, opcode.
const SAMP_HEADER_LEN: usize = 11;
/// SQP's challenge sits in bytes 1..5 of queries and replies alike.
const SQP_CHALLENGE: std::ops::Range<usize> = 1..5;

/// The [`Responder`] half: answers from the script and records requests.
#[derive(Debug)]
struct Replay {
    script: Script,
    requests: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Replay {
    fn answer(&self, request: &[u8], replies: &mut ReplySink) -> Result<(), DropReason> {
        let push = |replies: &mut ReplySink, datagram: &[u8]| {
            replies.push(datagram).map_err(|_| DropReason::Unsupported)
        };
        match &self.script {
            Script::Samp { datagrams } => {
                if request.len() != SAMP_HEADER_LEN || !request.starts_with(b"SAMP") {
                    return Err(DropReason::Malformed);
                }
                let opcode = request[SAMP_HEADER_LEN - 1];
                let recorded = datagrams
                    .iter()
                    .find(|d| d.len() >= SAMP_HEADER_LEN && d[SAMP_HEADER_LEN - 1] == opcode)
                    .ok_or(DropReason::Unsupported)?;
                let mut reply = recorded.clone();
                reply[..SAMP_HEADER_LEN].copy_from_slice(request);
                push(replies, &reply)
            }
            Script::GameSpy {
                datagrams,
                delivery,
            } => {
                if !request.starts_with(b"\\") {
                    return Err(DropReason::Malformed);
                }
                for i in delivery.order(datagrams) {
                    push(replies, &datagrams[i])?;
                }
                Ok(())
            }
            Script::Sqp {
                challenge_response,
                exchanges,
            } => match request.first() {
                Some(0x00) => push(replies, challenge_response),
                Some(0x01) if request.len() >= SQP_CHALLENGE.end => {
                    let issued = &challenge_response[SQP_CHALLENGE];
                    if request[SQP_CHALLENGE] != *issued {
                        return Err(DropReason::BadChallenge);
                    }
                    let exchange = exchanges
                        .iter()
                        .find(|e| {
                            e.request.len() == request.len()
                                && e.request[..SQP_CHALLENGE.start]
                                    == request[..SQP_CHALLENGE.start]
                                && e.request[SQP_CHALLENGE.end..] == request[SQP_CHALLENGE.end..]
                        })
                        .ok_or(DropReason::Unsupported)?;
                    for response in &exchange.responses {
                        let mut reply = response.clone();
                        reply[SQP_CHALLENGE].copy_from_slice(issued);
                        push(replies, &reply)?;
                    }
                    Ok(())
                }
                _ => Err(DropReason::Malformed),
            },
            Script::A2s { datagrams } => {
                let (wanted, challenge): (&[u8], Option<i32>) =
                    match a2s::Request::from_bytes(request) {
                        Ok(a2s::Request::Info(info)) => {
                            (&[a2s::KIND_INFO, a2s::KIND_INFO_DETAILED], info.challenge)
                        }
                        Ok(a2s::Request::Players(c)) => (&[a2s::KIND_PLAYERS], Some(c.challenge)),
                        Ok(a2s::Request::Rules(c)) => (&[a2s::KIND_RULES], Some(c.challenge)),
                        Err(_) => return Err(DropReason::Malformed),
                    };
                if challenge != Some(A2S_CHALLENGE) {
                    let reply = a2s::Reply::Challenge(a2s::Challenge {
                        challenge: A2S_CHALLENGE,
                    });
                    return push(replies, &reply.to_vec_with(0).expect("a challenge encodes"));
                }
                for datagram in datagrams.iter().rev() {
                    if a2s_kind(datagram, datagrams).is_some_and(|kind| wanted.contains(&kind)) {
                        push(replies, datagram)?;
                    }
                }
                Ok(())
            }
        }
    }
}

/// The type of the reply an A2S datagram is or is a part of.
fn a2s_kind(datagram: &[u8], all: &[Vec<u8>]) -> Option<u8> {
    if datagram.starts_with(a2s::SINGLE_BYTES) {
        return datagram.get(4).copied();
    }
    let id = datagram.get(4..8)?;
    let mut parts = a2s::Reassembly::new();
    let same_reply = all
        .iter()
        .filter(|d| d.starts_with(a2s::SPLIT_BYTES) && d.get(4..8) == Some(id));
    for part in same_reply {
        if let Ok(Some(whole)) = parts.push(part) {
            return whole.get(4).copied();
        }
    }
    None
}

impl Responder for Replay {
    fn handle(
        &mut self,
        _from: SocketAddr,
        datagram: &[u8],
        _now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        self.requests
            .lock()
            .expect("request log")
            .push(datagram.to_vec());
        match self.answer(datagram, replies) {
            Ok(()) => Verdict::Answered,
            Err(reason) => Verdict::Dropped(reason),
        }
    }
}

/// A replay responder on a loopback port, served on a thread of its own until dropped.
#[derive(Debug)]
pub struct ReplayServer {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Vec<u8>>>>,
    shutdown: CancellationToken,
    thread: Option<JoinHandle<()>>,
}

impl ReplayServer {
    /// Binds 127.0.0.1 on a free port and starts answering with `script`.
    pub fn start(script: Script) -> Self {
        let socket = UdpSocket::bind("127.0.0.1:0").expect("bind a loopback port");
        socket.set_nonblocking(true).expect("non-blocking socket");
        let addr = socket.local_addr().expect("bound address");
        let requests = Arc::default();
        let shutdown = CancellationToken::new();
        let replay = Replay {
            script,
            requests: Arc::clone(&requests),
        };
        let stop = shutdown.clone();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("tokio runtime");
            runtime.block_on(async move {
                let socket = tokio::net::UdpSocket::from_std(socket).expect("tokio socket");
                // Every request is answered: the client under test is the only sender.
                // Captured replies go out as the real server sent them: whole, unbudgeted.
                let mut service = Service::new(replay)
                    .rate_limit(None)
                    .reply_budget(None)
                    .max_datagram(query_net::engine::ReplySink::MAX_UDP_PAYLOAD);
                driver::serve(&socket, &mut service, &stop)
                    .await
                    .expect("replay socket failed");
            });
        });
        ReplayServer {
            addr,
            requests,
            shutdown,
            thread: Some(thread),
        }
    }

    /// Where the replay answers.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every datagram received so far, in arrival order.
    pub fn requests(&self) -> Vec<Vec<u8>> {
        self.requests.lock().expect("request log").clone()
    }
}

impl Drop for ReplayServer {
    fn drop(&mut self) {
        self.shutdown.cancel();
        if let Some(thread) = self.thread.take() {
            // A panic in the server thread has already been printed; do not panic in drop.
            let _ = thread.join();
        }
    }
}

/// How a `gsq` run ended.
#[derive(Debug)]
pub struct Outcome {
    /// The exit code; `None` if it was killed (it ran past the deadline).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs the `gsq` binary built for these tests with `args`, killing it after `deadline`.
pub fn run_gsq(args: &[&str], deadline: Duration) -> Outcome {
    let output = assert_cmd::Command::cargo_bin("gsq")
        .expect("the gsq binary")
        .args(args)
        .timeout(deadline)
        .output()
        .expect("run gsq");
    Outcome {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Collects every difference between expected and decoded values, so one run shows them all.
#[derive(Debug, Default)]
pub struct Differences {
    found: Vec<String>,
    compared: usize,
}

impl Differences {
    /// Records a difference if `expected != actual`.
    pub fn check<T: PartialEq + std::fmt::Debug>(&mut self, what: &str, expected: T, actual: T) {
        self.compared += 1;
        if expected != actual {
            self.found
                .push(format!("{what}: expected {expected:?}, decoded {actual:?}"));
        }
    }

    /// Panics listing every difference.
    pub fn finish(self, subject: &str) {
        assert!(self.compared > 0, "{subject}: nothing was compared");
        assert!(
            self.found.is_empty(),
            "{subject}: {} of {} values differ:\n  {}",
            self.found.len(),
            self.compared,
            self.found.join("\n  ")
        );
    }
}

impl Differences {
    /// Takes over the differences of `other`, prefixed with `subject`.
    pub fn absorb(&mut self, subject: &str, other: Differences) {
        self.compared += other.compared;
        self.found
            .extend(other.found.into_iter().map(|f| format!("{subject}: {f}")));
    }
}
