//! `gsq query` and `gsq bulk` against hostile GameSpy v1 servers on loopback: a server whose
//! only answer is an empty datagram or a lone backslash gets no status, and a server that
//! drips reply parts without end is left at `--deadline` with what arrived.

mod cli_support;

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cli_support::{run, run_with_stdin};

/// A server answering every request with `reply(n)` for n = 1, 2, ... spaced `gap` apart, until
/// the returned flag is set or 500 datagrams were sent.
struct Fake {
    addr: String,
    stop: Arc<AtomicBool>,
    /// The longest pause between two rounds of sending, in microseconds: more than `gap` means
    /// the machine starved the sending thread.
    longest_pause_us: Arc<AtomicU64>,
}

impl Fake {
    fn start(gap: Duration, reply: impl Fn(u32) -> Option<Vec<u8>> + Send + 'static) -> Fake {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(Duration::from_millis(5)))
            .unwrap();
        let addr = socket.local_addr().unwrap().to_string();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let longest_pause_us = Arc::new(AtomicU64::new(0));
        let longest = Arc::clone(&longest_pause_us);
        std::thread::spawn(move || {
            let mut buf = [0u8; 2048];
            let mut clients = Vec::new();
            let mut sent = 0;
            let mut next = Instant::now();
            let mut last_round: Option<Instant> = None;
            while !stopped.load(Ordering::Relaxed) && sent < 500 {
                if let Ok((_, from)) = socket.recv_from(&mut buf) {
                    clients.push((from, 1u32));
                }
                if Instant::now() < next {
                    continue;
                }
                let now = Instant::now();
                next = now + gap;
                if let (Some(last), false) = (last_round, clients.is_empty()) {
                    let pause = now.duration_since(last).as_micros() as u64;
                    longest.fetch_max(pause, Ordering::Relaxed);
                }
                if !clients.is_empty() {
                    last_round = Some(now);
                }
                for (client, n) in &mut clients {
                    if let Some(datagram) = reply(*n) {
                        let _ = socket.send_to(&datagram, *client);
                        sent += 1;
                    }
                    *n += 1;
                }
            }
        });
        Fake {
            addr,
            stop,
            longest_pause_us,
        }
    }

    /// Whether the sending thread was ever held up for longer than `limit` between rounds.
    fn was_starved(&self, limit: Duration) -> bool {
        self.longest_pause_us.load(Ordering::Relaxed) > limit.as_micros() as u64
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[test]
fn an_empty_datagram_or_a_lone_backslash_is_no_answer() {
    for junk in [&b""[..], b"\\"] {
        let fake = Fake::start(Duration::from_millis(1), move |n| {
            (n == 1).then(|| junk.to_vec())
        });
        let ran = run(&[
            "query",
            "gamespy1",
            &fake.addr,
            "--json",
            "--timeout",
            "200ms",
            "--retries",
            "0",
        ]);
        ran.assert_error(9, &["malformed", "no reply"]);

        let fake = Fake::start(Duration::from_millis(1), move |n| {
            (n == 1).then(|| junk.to_vec())
        });
        let ran = run_with_stdin(
            &["bulk", "--timeout", "200ms", "--retries", "0"],
            &format!("gamespy1 {}\n", fake.addr),
        );
        let lines = ran.json_lines();
        assert_eq!(lines.len(), 1, "{ran:#?}");
        assert_eq!(lines[0]["error_kind"], "malformed", "{:#}", lines[0]);
        assert!(ran.stderr.contains("0 answered"), "{}", ran.stderr);
    }
}

/// Parts 1, 2, 3... of query id 4, one every 30 ms, never the final one.
fn drip(n: u32) -> Option<Vec<u8>> {
    (n <= 64).then(|| format!("\\hostname\\drip\\p{n}\\x\\queryid\\4.{n}").into_bytes())
}

/// The multi-part wait ends 50 ms at least after the latest part. A machine that holds the
/// dripping thread up for longer than that ends the query early, rightly (the server fell
/// silent): such a run proves nothing about the deadline and is repeated, at most three times.
const STARVED: Duration = Duration::from_millis(50);

#[test]
fn a_server_dripping_parts_is_left_at_the_deadline_with_what_arrived() {
    for attempt in 1..=3 {
        let fake = Fake::start(Duration::from_millis(30), drip);
        let started = Instant::now();
        let ran = run(&[
            "query",
            "gamespy1",
            &fake.addr,
            "--json",
            "--timeout",
            "200ms",
            "--deadline",
            "1s",
        ]);
        let took = started.elapsed();
        if took < Duration::from_secs(1) && fake.was_starved(STARVED) && attempt < 3 {
            eprintln!("attempt {attempt}: the dripping thread was starved; ended after {took:?}");
            continue;
        }
        let status = ran.json();
        assert_eq!(status["complete"], false, "{status:#}");
        assert_eq!(status["name"], "drip");
        let parts = status["raw"]["parts_received"].as_u64().unwrap();
        // At most one part each 30 ms; a busy machine may deliver fewer.
        assert!((1..=34).contains(&parts), "{parts}");
        // The process's own start-up and exit come on top of the 1 s; the upper bound only
        // catches a query that ignored its deadline.
        assert!(
            took >= Duration::from_secs(1) && took < Duration::from_secs(10),
            "{took:?}"
        );
        break;
    }

    let fake = Fake::start(Duration::from_millis(30), drip);
    let started = Instant::now();
    let ran = run_with_stdin(
        &["bulk", "--timeout", "200ms", "--deadline", "1s"],
        &format!("gamespy1 {}\n", fake.addr),
    );
    let took = started.elapsed();
    let lines = ran.json_lines();
    assert_eq!(lines[0]["complete"], false, "{:#}", lines[0]);
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[test]
fn the_deadline_and_byte_cap_are_in_the_help() {
    for command in ["query", "bulk"] {
        let ran = run(&[command, "--help"]);
        assert!(ran.stdout.contains("--deadline"), "{}", ran.stdout);
        assert!(ran.stdout.contains("[default: 15s]"), "{}", ran.stdout);
        assert!(ran.stdout.contains("--max-reply-bytes"), "{}", ran.stdout);
    }
}
