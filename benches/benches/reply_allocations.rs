//! Heap allocations per reply of the responders, in a steady state.
//!
//! The counting allocator of `allocation-counter` counts every allocation of this thread while
//! `Service::handle` answers requests the way `driver::serve` calls it: after a warm-up (the
//! reply buffer has grown to its working size, the challenge table is populated), 10,000
//! requests from 64 source ports are answered and the replies read. The responders promise
//! no allocation per reply, so the expected count is zero.
//!
//! Prints a markdown table; with `QUERY_BENCH_OUT=<dir>` also writes `allocations.json` there.
//! Exits non-zero if a responder allocated or left a request unanswered.

use std::net::{SocketAddr, SocketAddrV4};

use query_bench::requests;
use query_bench::subjects::{self, server_state};
use query_net::engine::Responder;
use query_net::service::Service;
use query_net::state::SharedState;
use serde::Serialize;

const SOURCES: u16 = 64;
const WARMUP: usize = 2_000;
const MEASURED: usize = 10_000;

#[derive(Debug, Serialize)]
struct Row {
    subject: &'static str,
    requests: usize,
    replies: u64,
    /// Requests the responder answered (none dropped for a bad challenge or as malformed).
    answered: u64,
    allocations: u64,
    bytes: u64,
    allocations_per_reply: f64,
}

/// A load: called with the request number, the source and the previous reply of that source.
trait Load {
    fn request(&mut self, source: usize) -> &[u8];
    fn replied(&mut self, source: usize, reply: &[u8]);
}

/// SQP pairs: a challenge request, then the query with the challenge it got, per source.
struct SqpPairs {
    challenges: Vec<Option<u32>>,
    buf: [u8; 8],
}

impl SqpPairs {
    fn new() -> Self {
        SqpPairs {
            challenges: vec![None; usize::from(SOURCES)],
            buf: [0; 8],
        }
    }
}

impl Load for SqpPairs {
    fn request(&mut self, source: usize) -> &[u8] {
        match self.challenges[source].take() {
            Some(challenge) => {
                self.buf = requests::sqp_query(challenge);
                &self.buf
            }
            None => {
                self.buf[..5].copy_from_slice(&requests::sqp_challenge());
                &self.buf[..5]
            }
        }
    }

    fn replied(&mut self, source: usize, reply: &[u8]) {
        self.challenges[source] = requests::sqp_challenge_of(reply);
    }
}

/// A2S queries as a current client makes them, per source: INFO without a challenge, then
/// INFO, PLAYER and RULES with the challenge it got; then again from the start.
struct A2sQueries {
    /// Per source: the challenge and the next of INFO, PLAYER, RULES to send with it.
    progress: Vec<Option<(i32, usize)>>,
    buf: [u8; 29],
}

impl A2sQueries {
    fn new() -> Self {
        A2sQueries {
            progress: vec![None; usize::from(SOURCES)],
            buf: [0; 29],
        }
    }
}

impl Load for A2sQueries {
    fn request(&mut self, source: usize) -> &[u8] {
        let progress = &mut self.progress[source];
        let len = match *progress {
            None => {
                let (buf, len) = requests::a2s_info(None);
                self.buf = buf;
                len
            }
            Some((challenge, step)) => {
                *progress = (step < 2).then_some((challenge, step + 1));
                match step {
                    0 => {
                        let (buf, len) = requests::a2s_info(Some(challenge));
                        self.buf = buf;
                        len
                    }
                    1 => {
                        self.buf[..9].copy_from_slice(&requests::a2s_players(challenge));
                        9
                    }
                    _ => {
                        self.buf[..9].copy_from_slice(&requests::a2s_rules(challenge));
                        9
                    }
                }
            }
        };
        &self.buf[..len]
    }

    fn replied(&mut self, source: usize, reply: &[u8]) {
        if let Some(challenge) = requests::a2s_challenge_of(reply) {
            self.progress[source] = Some((challenge, 0));
        }
    }
}

/// SA:MP `i`, `r`, `c`, `d` in turn.
struct SampCycle {
    requests: [[u8; 11]; 4],
    next: usize,
}

impl SampCycle {
    fn new() -> Self {
        let server: SocketAddrV4 = "127.0.0.1:7777".parse().unwrap_or_else(|_| unreachable!());
        SampCycle {
            requests: [b'i', b'r', b'c', b'd'].map(|op| requests::samp(server, op)),
            next: 0,
        }
    }
}

impl Load for SampCycle {
    fn request(&mut self, _source: usize) -> &[u8] {
        self.next = (self.next + 1) % self.requests.len();
        &self.requests[self.next]
    }

    fn replied(&mut self, _source: usize, _reply: &[u8]) {}
}

fn source(i: usize) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 40_000 + (i % usize::from(SOURCES)) as u16))
}

/// Answers `count` requests; returns the number of reply datagrams.
fn run<R: Responder>(service: &mut Service<R>, load: &mut impl Load, count: usize) -> u64 {
    let mut replies = 0;
    for i in 0..count {
        let slot = i % usize::from(SOURCES);
        // Only the responder is counted: what the load does is opted out.
        let mut datagram = [0u8; 32];
        let mut len = 0;
        allocation_counter::opt_out(|| {
            let request = load.request(slot);
            len = request.len().min(datagram.len());
            datagram[..len].copy_from_slice(&request[..len]);
        });
        let mut first = true;
        for reply in service.handle(source(i), &datagram[..len]) {
            replies += 1;
            if first {
                allocation_counter::opt_out(|| load.replied(slot, reply));
                first = false;
            }
        }
    }
    replies
}

fn measure<R: Responder>(
    subject: &'static str,
    mut service: Service<R>,
    mut load: impl Load,
) -> Row {
    run(&mut service, &mut load, WARMUP);
    let mut replies = 0;
    let answered_before = service.stats().snapshot().answered;
    let info = allocation_counter::measure(|| {
        replies = run(&mut service, &mut load, MEASURED);
    });
    let answered = service.stats().snapshot().answered - answered_before;
    Row {
        subject,
        requests: MEASURED,
        replies,
        answered,
        allocations: info.count_total,
        bytes: info.bytes_total,
        allocations_per_reply: info.count_total as f64 / replies.max(1) as f64,
    }
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not supported and ignored.
    let state = SharedState::new(server_state());
    let rows = vec![
        measure(
            "SQP responder",
            subjects::unlimited(subjects::sqp(&state)),
            SqpPairs::new(),
        ),
        measure(
            "all-protocols responder (SQP load)",
            subjects::unlimited(subjects::all_protocols(&state)),
            SqpPairs::new(),
        ),
        measure(
            "SA:MP responder",
            subjects::unlimited(subjects::samp(&state)),
            SampCycle::new(),
        ),
        measure(
            "all-protocols responder (SA:MP load)",
            subjects::unlimited(subjects::all_protocols(&state)),
            SampCycle::new(),
        ),
        measure(
            "A2S responder",
            subjects::unlimited(subjects::a2s(&state)),
            A2sQueries::new(),
        ),
        measure(
            "all-protocols responder (A2S load)",
            subjects::unlimited(subjects::all_protocols(&state)),
            A2sQueries::new(),
        ),
    ];

    println!(
        "| responder | requests | answered | replies | allocations | bytes | allocations / reply |"
    );
    println!("|---|---|---|---|---|---|---|");
    for row in &rows {
        println!(
            "| {} | {} | {} | {} | {} | {} | {:.3} |",
            row.subject,
            row.requests,
            row.answered,
            row.replies,
            row.allocations,
            row.bytes,
            row.allocations_per_reply
        );
    }
    if let Some(dir) = std::env::var_os("QUERY_BENCH_OUT") {
        let path = std::path::Path::new(&dir).join("allocations.json");
        let json = serde_json::to_string_pretty(&rows).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&path, json)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    }
    let mut failed = false;
    for row in &rows {
        if row.answered != row.requests as u64 {
            eprintln!(
                "{}: answered {} of {} requests",
                row.subject, row.answered, row.requests
            );
            failed = true;
        }
        if row.allocations != 0 {
            eprintln!(
                "{}: {} allocations for {} replies",
                row.subject, row.allocations, row.replies
            );
            failed = true;
        }
    }
    if failed {
        std::process::exit(1);
    }
}
