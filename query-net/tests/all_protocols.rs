//! The all-protocols responder: each protocol reaches its own responder, and a flood of random
//! and truncated datagrams neither crashes it, nor grows its memory, nor keeps valid clients
//! from being answered.

use std::net::{SocketAddr, UdpSocket as StdUdpSocket};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use query_net::clock::Now;
use query_net::driver;
use query_net::engine::{DropReason, ReplySink, Responder, Verdict};
use query_net::engines::a2s::{A2sConfig, A2sResponder};
use query_net::engines::all::{route, AllProtocols, ROUTED};
use query_net::engines::bedrock::{BedrockConfig, BedrockResponder};
use query_net::engines::doom3::{Doom3Config, Doom3Responder};
use query_net::engines::gamespy1::{GameSpy1Config, GameSpy1Responder};
use query_net::engines::gamespy2::{GameSpy2Config, GameSpy2Responder};
use query_net::engines::gamespy3::{GameSpy3Config, GameSpy3Responder};
use query_net::engines::onequery::OneQueryResponder;
use query_net::engines::quake2::{Quake2Config, Quake2Responder};
use query_net::engines::quake3::{Quake3Config, Quake3Responder};
use query_net::engines::samp::{SampConfig, SampResponder};
use query_net::engines::sqp::SqpResponder;
use query_net::engines::teeworlds::{TeeworldsConfig, TeeworldsResponder};
use query_net::engines::unreal2::{Unreal2Config, Unreal2Responder};
use query_net::limit::{Stats, StatsSnapshot};
use query_net::service::Service;
use query_net::state::{PlayerState, ServerState, SharedState};
use query_net::{Options, Protocol};
use query_specs::unreal2;
use query_wire::{Decode, Encode};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use tokio::net::UdpSocket;
use tokio_util::sync::CancellationToken;

fn state() -> SharedState {
    SharedState::new(ServerState {
        name: "Flood Test Server".to_owned(),
        map: "Arena".to_owned(),
        game_type: "ffa".to_owned(),
        version: "1.0".to_owned(),
        max_players: 64,
        port: 7777,
        players: (0..20)
            .map(|i| PlayerState {
                name: format!("player{i}"),
                score: i,
                ping: 30,
                ..PlayerState::default()
            })
            .collect(),
        rules: [("mode".to_owned(), "ffa".into())].into_iter().collect(),
        ..ServerState::default()
    })
}

fn samp_request(opcode: u8) -> Vec<u8> {
    let mut request = b"SAMP\x7f\x00\x00\x01\x61\x1e".to_vec();
    request.push(opcode);
    request
}

/// An A2S request: `FF FF FF FF`, the kind, then INFO's payload or a challenge.
fn a2s_request(kind: u8, challenge: Option<i32>) -> Vec<u8> {
    let mut request = vec![0xff, 0xff, 0xff, 0xff, kind];
    if kind == b'T' {
        request.extend_from_slice(b"Source Engine Query\0");
    }
    if let Some(challenge) = challenge {
        request.extend_from_slice(&challenge.to_le_bytes());
    }
    request
}

/// A Bedrock unconnected ping as mcstatus and the game send it: `01`, the time, the magic, a
/// GUID.
fn bedrock_ping(time: u64) -> Vec<u8> {
    let mut ping = vec![0x01];
    ping.extend_from_slice(&time.to_be_bytes());
    ping.extend_from_slice(query_specs::bedrock::MAGIC);
    ping.extend_from_slice(&0x0102_0304_0506_0708u64.to_be_bytes());
    ping
}

/// Real requests of every protocol, each with the protocol that must answer it.
fn requests_of_every_protocol() -> Vec<(Protocol, Vec<u8>)> {
    let mut requests = vec![
        (Protocol::Sqp, vec![0; 5]),
        (Protocol::Sqp, vec![1, 0, 0, 0, 0, 0, 1, 0x1f]),
        (Protocol::OneQuery, b"ONEQUERY\x00".to_vec()),
        (Protocol::OneQuery, b"HYQUERY2\x00".to_vec()),
        (Protocol::GameSpy1, b"\\status\\".to_vec()),
        (Protocol::GameSpy1, b"\\info\\\\echo\\x".to_vec()),
        (Protocol::A2s, a2s_request(b'T', None)),
        (Protocol::A2s, a2s_request(b'T', Some(-1))),
        (Protocol::A2s, a2s_request(b'U', Some(-1))),
        (Protocol::A2s, a2s_request(b'V', Some(0x1234_5678))),
        (Protocol::Quake3, b"\xff\xff\xff\xffgetstatus\n".to_vec()),
        (Protocol::Quake3, b"\xff\xff\xff\xffgetstatus\0".to_vec()),
        (Protocol::Quake3, b"\xff\xff\xff\xffgetinfo xyz\n".to_vec()),
        (Protocol::Quake2, b"\xff\xff\xff\xffstatus\n".to_vec()),
        (Protocol::Quake2, b"\xff\xff\xff\xffstatus 23\n".to_vec()),
        (Protocol::Doom3, b"\xff\xffgetInfo\0PiNGPoNg\0".to_vec()),
        (Protocol::Doom3, b"\xff\xffgetInfo\0\0\0\0\0".to_vec()),
        (Protocol::GameSpy2, b"\xfe\xfd\x00CORY\xff\xff\xff".to_vec()),
        (Protocol::GameSpy2, b"\xfe\xfd\x00CORY\xff\x00\x00".to_vec()),
        (Protocol::GameSpy2, b"\xfe\xfd\x00CORX\x00\xff\xff".to_vec()),
        (Protocol::GameSpy3, b"\xfe\xfd\x09\x01\x02\x03\x04".to_vec()),
        (
            Protocol::GameSpy3,
            b"\xfe\xfd\x00\x01\x02\x03\x04\xff\xff\xff\x01".to_vec(),
        ),
        (
            Protocol::GameSpy3,
            b"\xfe\xfd\x00\x01\x02\x03\x04\x00\x00\x30\x39\xff\xff\xff\x01".to_vec(),
        ),
        (
            Protocol::Teeworlds,
            b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffgie3\x05".to_vec(),
        ),
        (
            Protocol::Teeworlds,
            b"xe\x12\x34\x00\x00\xff\xff\xff\xffgie3\x07".to_vec(),
        ),
        (Protocol::Bedrock, bedrock_ping(0)),
        (Protocol::Bedrock, bedrock_ping(0x0000_0193_5d2b_7c00)),
    ];
    // UT2003's and qstat's `78`, UT2004's `79`, each query.
    for version in [unreal2::REQUEST_UT2003, unreal2::REQUEST_UT2004] {
        for query in [
            unreal2::Query::Info,
            unreal2::Query::Rules,
            unreal2::Query::Players,
            unreal2::Query::Everything,
        ] {
            let request = unreal2::Request { version, query }.to_vec().unwrap();
            requests.push((Protocol::Unreal2, request));
        }
    }
    requests.extend(b"ircd".iter().map(|&op| (Protocol::Samp, samp_request(op))));
    let mut ping = samp_request(b'p');
    ping.extend_from_slice(&[1, 2, 3, 4]);
    requests.push((Protocol::Samp, ping));
    requests
}

/// The responder `AllProtocols` hands `protocol`'s requests to, alone; `None` for Minecraft's
/// query, which is GameSpy 4 and answered by the GameSpy 3 responder. Every protocol is named,
/// so one added to the enum cannot be forgotten here.
fn responder_of(protocol: Protocol, shared: &SharedState) -> Option<Box<dyn Responder>> {
    let shared = shared.clone();
    Some(match protocol {
        Protocol::Sqp => Box::new(SqpResponder::new(shared)),
        Protocol::OneQuery => Box::new(OneQueryResponder::new(shared)),
        Protocol::Samp => Box::new(SampResponder::new(shared, SampConfig::default())),
        Protocol::GameSpy1 => Box::new(GameSpy1Responder::new(shared, GameSpy1Config::default())),
        Protocol::A2s => Box::new(A2sResponder::new(shared, A2sConfig::default())),
        Protocol::Quake3 => Box::new(Quake3Responder::new(shared, Quake3Config::default())),
        Protocol::Quake2 => Box::new(Quake2Responder::new(shared, Quake2Config::default())),
        Protocol::GameSpy2 => Box::new(GameSpy2Responder::new(shared, GameSpy2Config::default())),
        Protocol::GameSpy3 => Box::new(GameSpy3Responder::new(shared, GameSpy3Config::default())),
        Protocol::MinecraftQuery => return None,
        Protocol::Teeworlds => {
            Box::new(TeeworldsResponder::new(shared, TeeworldsConfig::default()))
        }
        Protocol::Doom3 => Box::new(Doom3Responder::new(shared, Doom3Config::default())),
        Protocol::Bedrock => Box::new(BedrockResponder::new(shared, BedrockConfig::default())),
        Protocol::Unreal2 => Box::new(Unreal2Responder::new(shared, Unreal2Config::default())),
        Protocol::Mumble
        | Protocol::Ase
        | Protocol::Fivem
        | Protocol::Minecraft
        | Protocol::Frostbite
        | Protocol::TeamSpeak3 => panic!("{protocol} is not routed"),
    })
}

#[test]
fn every_request_is_claimed_by_its_own_protocol_and_refused_by_the_others() {
    let shared = state();
    let mut responders: Vec<(Protocol, Box<dyn Responder>)> = ROUTED
        .into_iter()
        .filter_map(|protocol| Some((protocol, responder_of(protocol, &shared)?)))
        .collect();
    // Every routed protocol's requests are in the list (Minecraft's are GameSpy 3's).
    let requests = requests_of_every_protocol();
    for protocol in ROUTED {
        let owner = match protocol {
            Protocol::MinecraftQuery => Protocol::GameSpy3,
            other => other,
        };
        assert!(
            requests.iter().any(|(p, _)| *p == owner),
            "no {protocol} request"
        );
    }
    let from: SocketAddr = "192.0.2.1:5000".parse().unwrap();
    let mut sink = ReplySink::default();
    for (owner, request) in requests {
        assert_eq!(route(&request), Some(owner), "{request:?}");
        for (protocol, responder) in &mut responders {
            sink.clear();
            let verdict = responder.handle(from, &request, Now::system(), &mut sink);
            if *protocol == owner {
                // Answered, or refused for its made-up challenge: read as a request either way.
                assert!(
                    matches!(
                        verdict,
                        Verdict::Answered | Verdict::Dropped(DropReason::BadChallenge)
                    ),
                    "{owner} {request:?}: {verdict:?}"
                );
            } else {
                // Even tried in turn, no other protocol would read it as its own.
                assert!(
                    matches!(
                        verdict,
                        Verdict::Dropped(DropReason::Malformed | DropReason::Unsupported)
                    ) && sink.is_empty(),
                    "{protocol} took the {owner} request {request:?}: {verdict:?}"
                );
            }
        }
    }
}

#[test]
fn each_protocol_reaches_its_own_responder() {
    let mut service = Service::new(AllProtocols::new(state())).rate_limit(None);
    let from: SocketAddr = "192.0.2.1:5000".parse().unwrap();
    let mut ask = |request: &[u8]| -> Vec<Vec<u8>> {
        service.handle(from, request).map(<[u8]>::to_vec).collect()
    };

    let sqp = ask(&[0; 5]);
    assert_eq!((sqp.len(), sqp[0].len(), sqp[0][0]), (1, 5, 0));
    for (request, magic) in [
        (&b"ONEQUERY\x00"[..], &b"ONEREPLY"[..]),
        (b"HYQUERY2\x00", b"HYREPLY2"),
    ] {
        let reply = ask(request);
        assert_eq!((reply[0].len(), &reply[0][..8]), (48, magic));
    }
    let samp = ask(&samp_request(b'i'));
    assert_eq!(&samp[0][..11], &samp_request(b'i')[..]);
    let gamespy = ask(b"\\info\\");
    let text = String::from_utf8_lossy(&gamespy[0]);
    assert!(text.contains("\\hostname\\Flood Test Server"), "{text}");
    let a2s = ask(&a2s_request(b'T', None));
    assert_eq!((a2s[0].len(), &a2s[0][..5]), (9, &b"\xff\xff\xff\xffA"[..]));
    // Bedrock's pong echoes the ping's time and carries the state's name as its MOTD.
    let pong = ask(&bedrock_ping(42));
    let pong = query_specs::bedrock::UnconnectedPong::from_bytes(&pong[0]).unwrap();
    assert_eq!(pong.time, 42);
    let server = pong.server_text();
    assert!(server.starts_with("MCPE;Flood Test Server;"), "{server}");

    for garbage in [
        &b""[..],
        b"hello",
        &[0; 4],
        &[0; 6],
        &[1; 9],
        &[2; 5],
        b"\xff\xff\xff\xffW",
        b"\xfe\xff\xff\xffT",
    ] {
        assert_eq!(route(garbage), None);
        assert!(ask(garbage).is_empty());
    }
    // Routed to A2S by its first bytes, then refused there for its size.
    assert!(ask(b"\xff\xff\xff\xffU\xff").is_empty());
    let stats = service.stats().snapshot();
    assert_eq!(stats.answered, 7);
    assert_eq!(stats.dropped_malformed, 9);
}

/// The sizes an oversized datagram takes: past any request of the four protocols and past a
/// 1500-byte MTU, up to nearly the largest UDP datagram.
/// Far above what a flood test takes even on a loaded machine (seconds): only a hang reaches it.
const HANG: Duration = Duration::from_secs(180);

const OVERSIZED: std::ops::RangeInclusive<usize> = 2000..=65_000;

/// An oversized datagram: random bytes, or the start of a real request of some protocol padded
/// with random bytes, `len` bytes in all.
fn oversized(rng: &mut StdRng, len: usize, out: &mut Vec<u8>) {
    out.clear();
    let prefixes: [&[u8]; 7] = [
        &[],
        &[0; 5],
        b"ONEQUERY\x00",
        b"SAMP\x7f\x00\x00\x01\x61\x1ei",
        b"\\status\\",
        &[1, 0, 0, 0, 0, 0, 1, 0x1f],
        b"\xff\xff\xff\xffTSource Engine Query\0",
    ];
    out.extend_from_slice(prefixes[rng.random_range(0..prefixes.len())]);
    let start = out.len();
    out.resize(len, 0);
    rng.fill(&mut out[start..]);
}

/// One hostile datagram: random bytes, or a request of any protocol cut short, damaged, or
/// complete but with a made-up challenge or token; one in a hundred is oversized.
fn hostile(rng: &mut StdRng, out: &mut Vec<u8>) {
    out.clear();
    if rng.random_ratio(1, 100) {
        let len = rng.random_range(OVERSIZED);
        oversized(rng, len, out);
        return;
    }
    let truncate = |out: &mut Vec<u8>, rng: &mut StdRng| {
        let keep = rng.random_range(0..=out.len());
        out.truncate(keep);
    };
    match rng.random_range(0..12u8) {
        0 => {
            out.resize(rng.random_range(0..=64), 0);
            rng.fill(&mut out[..]);
        }
        1 => {
            out.resize(rng.random_range(0..=1500), 0);
            rng.fill(&mut out[..]);
        }
        2 => {
            // SQP challenge request.
            out.extend_from_slice(&[0; 5]);
            truncate(out, rng);
        }
        3 => {
            // SQP query request with a made-up challenge.
            out.push(1);
            out.extend_from_slice(&rng.random::<u32>().to_be_bytes());
            out.extend_from_slice(&[0, 1, 0x1f]);
            truncate(out, rng);
        }
        4 => {
            out.extend_from_slice(b"ONEQUERY\x00");
            truncate(out, rng);
        }
        5 | 6 => {
            // OneQuery query with a made-up token, in either family.
            let magic = if rng.random_bool(0.5) {
                b"ONEQUERY"
            } else {
                b"HYQUERY2"
            };
            out.extend_from_slice(magic);
            out.push(rng.random_range(1..=2));
            out.resize(51, 0);
            rng.fill(&mut out[9..]);
            truncate(out, rng);
        }
        7 => {
            let opcode = *b"ircdpox".get(rng.random_range(0..7)).unwrap_or(&b'i');
            out.extend_from_slice(&samp_request(opcode));
            truncate(out, rng);
        }
        8 => {
            out.extend_from_slice(b"\\status\\xserverquery");
            truncate(out, rng);
            let extra = rng.random_range(0..=16);
            out.extend((0..extra).map(|_| rng.random::<u8>()));
        }
        9 => {
            // An A2S request with a made-up challenge, or INFO without one.
            let kind = *b"TUV".get(rng.random_range(0..3)).unwrap_or(&b'T');
            let challenge = (kind != b'T' || rng.random_bool(0.5)).then(|| rng.random());
            out.extend_from_slice(&a2s_request(kind, challenge));
            truncate(out, rng);
        }
        10 => {
            // An Unreal 2 request of either version, for any query or none, possibly cut.
            let version = if rng.random_bool(0.5) {
                unreal2::REQUEST_UT2003
            } else {
                unreal2::REQUEST_UT2004
            };
            out.extend_from_slice(&version.to_le_bytes());
            out.push(rng.random_range(0..=4));
            truncate(out, rng);
        }
        _ => {
            // A whole request of some protocol with one byte flipped.
            match rng.random_range(0..6u8) {
                0 => out.extend_from_slice(&[1, 0, 0, 0, 0, 0, 1, 0x1f]),
                1 => out.extend_from_slice(&[0u8; 51]),
                2 => out.extend_from_slice(&samp_request(b'r')),
                3 => out.extend_from_slice(&a2s_request(b'U', Some(-1))),
                4 => out.extend_from_slice(b"\x79\x00\x00\x00\x03"),
                _ => out.extend_from_slice(b"\\players\\"),
            }
            let at = rng.random_range(0..out.len());
            out[at] ^= rng.random_range(1..=255u8);
        }
    }
}

/// Resident memory of this process, from `/proc/self/statm` (pages of 4 KiB on Linux x86-64
/// and aarch64 with default kernels).
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .expect("resident pages");
    pages * 4096
}

/// At most this many flood datagrams are sent ahead of what the server has read. The kernel
/// charges a loopback datagram of up to 1,500 bytes at most about 2.3 KiB of a socket's
/// receive buffer (212,992 bytes by default), so 64 fit even when all of them are that large.
/// More in flight could be dropped by the kernel, unseen by the responder: the flood would then
/// wait for a datagram the server never gets, and a valid client's request could go with them.
const IN_FLIGHT: u64 = 64;

/// The most datagrams one flood sends, whatever else happens.
const FLOOD_CAP: usize = 1_000_000;

/// A flood from 127.0.0.2: hostile datagrams as fast as the server reads them.
struct Flood {
    target: SocketAddr,
    seed: u64,
    /// Sends at least this many, then stops once `stop` is set.
    at_least: usize,
    stop: Arc<AtomicBool>,
    /// How many have been sent so far.
    sent: Arc<AtomicUsize>,
    /// How many of those were oversized.
    oversized: Arc<AtomicUsize>,
    /// The server's counters, for the back-pressure.
    server: Arc<Stats>,
}

impl Flood {
    fn new(server: &Server, seed: u64, at_least: usize) -> Self {
        Flood {
            target: server.addr,
            seed,
            at_least,
            stop: Arc::default(),
            sent: Arc::default(),
            oversized: Arc::default(),
            server: Arc::clone(&server.stats),
        }
    }

    /// Runs on the current thread until done; returns the number sent and the time taken.
    fn run(&self) -> (usize, Duration) {
        let socket = StdUdpSocket::bind("127.0.0.2:0").expect("127.0.0.2 is a loopback address");
        let mut rng = StdRng::seed_from_u64(self.seed);
        let mut datagram = Vec::with_capacity(*OVERSIZED.end());
        let base = self.server.received.load(Ordering::Relaxed);
        let started = Instant::now();
        let mut sent = 0usize;
        // Waits until at most `in_flight` datagrams are unread by the server.
        let wait_for_server = |sent: usize, in_flight: u64| {
            let waiting = Instant::now();
            while sent as u64 > self.server.received.load(Ordering::Relaxed) - base + in_flight {
                // A hang, not a busy machine: reading 64 datagrams takes microseconds.
                assert!(
                    waiting.elapsed() < Duration::from_secs(60),
                    "the server stopped reading"
                );
                std::thread::sleep(Duration::from_micros(20));
            }
        };
        while sent < FLOOD_CAP && (sent < self.at_least || !self.stop.load(Ordering::Relaxed)) {
            wait_for_server(sent, IN_FLIGHT);
            hostile(&mut rng, &mut datagram);
            let big = datagram.len() > 1500;
            if big {
                // One oversized datagram fills much of a socket buffer: send it alone.
                wait_for_server(sent, 0);
            }
            socket
                .send_to(&datagram, self.target)
                .expect("loopback send");
            sent += 1;
            self.sent.store(sent, Ordering::Relaxed);
            if big {
                self.oversized.fetch_add(1, Ordering::Relaxed);
                wait_for_server(sent, 0);
            }
        }
        (sent, started.elapsed())
    }
}

struct Server {
    addr: SocketAddr,
    stats: Arc<Stats>,
    shutdown: CancellationToken,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

async fn serve(service: Service<AllProtocols>) -> Server {
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = socket.local_addr().unwrap();
    let stats = Arc::clone(service.stats());
    let shutdown = CancellationToken::new();
    let token = shutdown.clone();
    tokio::spawn(async move {
        let mut service = service;
        driver::serve(&socket, &mut service, &token).await
    });
    Server {
        addr,
        stats,
        shutdown,
    }
}

/// Waits until the server has read everything sent to it (no new datagram for 200 ms).
async fn settle(stats: &Stats) -> StatsSnapshot {
    let mut last = stats.snapshot();
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = stats.snapshot();
        if now.received == last.received {
            return now;
        }
        last = now;
    }
}

fn accounted(s: &StatsSnapshot) -> u64 {
    s.answered
        + s.dropped_malformed
        + s.dropped_rate_limited
        + s.dropped_bad_challenge
        + s.dropped_unsupported
        + s.dropped_declined
        + s.dropped_netblock_budget
        + s.dropped_total_budget
}

/// The count once it has passed `from`, or as it is after two seconds.
async fn progress_of(count: &AtomicUsize, from: usize) -> usize {
    let waiting = Instant::now();
    loop {
        let now = count.load(Ordering::Relaxed);
        if now > from || waiting.elapsed() > Duration::from_secs(2) {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Queries every protocol once from 127.0.0.1 and checks the name that comes back. With the
/// retries a user would set: a query left unanswered fails the test.
async fn query_all(target: &str) {
    let options = Options {
        timeout: Duration::from_millis(500),
        retries: 2,
        ..Options::default()
    };
    for protocol in ROUTED {
        let status = driver::query(protocol, target, &options)
            .await
            .unwrap_or_else(|e| panic!("{protocol}: {e}"));
        assert_eq!(status.name, "Flood Test Server", "{protocol}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limited_flood_does_not_keep_valid_clients_from_being_answered() {
    const AT_LEAST: usize = 100_000;
    let server = serve(Service::new(AllProtocols::new(state()))).await;
    let started = Instant::now();
    let flood = Arc::new(Flood::new(&server, 1, AT_LEAST));
    let running = Arc::clone(&flood);
    let flooding = tokio::task::spawn_blocking(move || running.run());
    // Meanwhile, a client on 127.0.0.1 queries every protocol three times, within its own
    // rate limit (10 per second, bursts of 40): a round sends about two requests per routed
    // protocol (27 for 14), and the pause between rounds refills more than a round takes.
    let address = server.addr.to_string();
    for round in 0..3 {
        if round > 0 {
            tokio::time::sleep(Duration::from_millis(1500)).await;
        }
        // The flood is under way before the round starts...
        let before = progress_of(&flood.sent, 0).await;
        assert!(before > 0, "the flood has not started before round {round}");
        query_all(&address).await;
        // ...and still going after it: a round of quick answers can be over before the
        // flood's thread runs again, so the flood gets a moment to show it was not stopped.
        let after = progress_of(&flood.sent, before).await;
        assert!(after > before, "the flood stopped during round {round}");
    }
    flood.stop.store(true, Ordering::Relaxed);
    let (sent, flooding_for) = flooding.await.unwrap();
    let stats = settle(&server.stats).await;
    println!(
        "rate-limited flood: {sent} sent in {flooding_for:.2?} ({:.0}/s), {} received; {stats:?}",
        sent as f64 / flooding_for.as_secs_f64(),
        stats.received
    );
    assert!(sent >= AT_LEAST);
    assert!(
        flood.oversized.load(Ordering::Relaxed) > 0,
        "no oversized datagram"
    );
    // Nothing was lost on the way: the flood waits for the server to read.
    assert!(stats.received >= sent as u64, "{stats:?}");
    assert_eq!(
        accounted(&stats),
        stats.received,
        "every datagram is counted once"
    );
    // All but a few flood datagrams were stopped by their source's limit, and the few that
    // got through were refused by the protocols or answered. The limit admits a burst of 40
    // and 10 a second for as long as the server ran, which a loaded machine stretches, and
    // a margin for the client's own queries.
    let admitted = 40 + 10 * started.elapsed().as_secs() + 100;
    assert!(
        stats.dropped_rate_limited >= sent as u64 - admitted,
        "{admitted} admitted at most; {stats:?}"
    );
    assert!(stats.dropped_malformed > 0, "{stats:?}");
    assert!(stats.answered >= 12, "{stats:?}");
    // A hang detector, not a speed check (that is the benchmarks'): the work is bounded by
    // count and takes seconds, so only a stuck server comes near this on a loaded machine.
    assert!(started.elapsed() < HANG);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unlimited_flood_reaches_every_parser_without_growing_memory() {
    const WARM_UP: usize = 20_000;
    const FLOOD: usize = 100_000;
    // No rate limit: every datagram reaches the protocols' decoders.
    let server = serve(
        Service::new(AllProtocols::new(state()))
            .rate_limit(None)
            .reply_budget(None),
    )
    .await;
    let address = server.addr.to_string();
    let started = Instant::now();

    let warm_up = Flood::new(&server, 2, WARM_UP);
    warm_up.stop.store(true, Ordering::Relaxed);
    tokio::task::spawn_blocking(move || warm_up.run())
        .await
        .unwrap();
    let warmed = settle(&server.stats).await;
    let rss_before = resident_bytes();

    let flood = Flood::new(&server, 3, FLOOD);
    flood.stop.store(true, Ordering::Relaxed);
    let flood = Arc::new(flood);
    let running = Arc::clone(&flood);
    let (sent, took) = tokio::task::spawn_blocking(move || running.run())
        .await
        .unwrap();
    assert!(
        flood.oversized.load(Ordering::Relaxed) > 0,
        "no oversized datagram"
    );
    let stats = settle(&server.stats).await;
    let rss_after = resident_bytes();
    let handled = stats.received - warmed.received;
    println!(
        "unlimited flood: {handled} handled in {took:.2?} ({:.0}/s); RSS {} KiB before, \
         {} KiB after; {stats:?}",
        handled as f64 / took.as_secs_f64(),
        rss_before / 1024,
        rss_after / 1024
    );

    assert_eq!(sent, FLOOD);
    assert!(handled >= FLOOD as u64, "{stats:?}");
    assert_eq!(accounted(&stats), stats.received);
    assert!(stats.dropped_malformed > handled / 2, "{stats:?}");
    assert!(stats.dropped_bad_challenge > 0, "{stats:?}");
    assert!(
        stats.answered > 0,
        "complete requests in the flood are answered"
    );
    assert!(
        rss_after <= rss_before + 4 * 1024 * 1024,
        "resident memory grew from {rss_before} to {rss_after} bytes"
    );
    // And the server still answers a real client, every protocol.
    query_all(&address).await;
    // A hang detector, not a speed check (that is the benchmarks'): the work is bounded by
    // count and takes seconds, so only a stuck server comes near this on a loaded machine.
    assert!(started.elapsed() < HANG);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_datagrams_are_read_whole_counted_as_dropped_and_never_answered() {
    let server = serve(Service::new(AllProtocols::new(state())).rate_limit(None)).await;
    let before = settle(&server.stats).await;
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let mut rng = StdRng::seed_from_u64(4);
    let mut datagram = Vec::new();
    let sizes: Vec<usize> = [
        *OVERSIZED.start(),
        1501,
        4096,
        9000,
        32_768,
        *OVERSIZED.end(),
    ]
    .into_iter()
    .chain((0..60).map(|_| rng.random_range(OVERSIZED)))
    .collect();
    for (i, &len) in sizes.iter().enumerate() {
        oversized(&mut rng, len, &mut datagram);
        socket.send_to(&datagram, server.addr).await.unwrap();
        // One at a time, so no socket buffer overflows and every one reaches the server.
        let deadline = Instant::now() + Duration::from_secs(5);
        while server.stats.snapshot().received < before.received + i as u64 + 1 {
            assert!(
                Instant::now() < deadline,
                "datagram {i} ({len} bytes) never read"
            );
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    let after = settle(&server.stats).await;
    let n = sizes.len() as u64;
    assert_eq!(after.received - before.received, n);
    assert_eq!(after.answered, before.answered, "{after:?}");
    assert_eq!(after.replies_sent, before.replies_sent, "{after:?}");
    assert_eq!(
        accounted(&after) - accounted(&before),
        n,
        "every oversized datagram is counted as dropped: {after:?}"
    );
    // Nothing came back to the sender.
    let mut buf = [0u8; 16];
    let reply = tokio::time::timeout(Duration::from_millis(100), socket.recv_from(&mut buf)).await;
    assert!(reply.is_err(), "an oversized datagram was answered");
}
