//! `gsq bulk`: many servers from a list, one JSON line each.
//!
//! The list is read line by line as the run needs targets (query-net's bulk driver pulls a
//! target only when a slot is free), so a list of a million lines takes no more memory than
//! one of ten. A line that does not parse or resolve still gets its output line, as an error
//! object, and the run goes on.

use std::io::{self, IsTerminal};
use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::stream::{self, Stream, StreamExt};
use futures_util::FutureExt;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use query_games::plan::{Attempt, Choice, Ports};
use query_net::bulk::BulkConfig;
use query_net::learned::ServerMemory;
use query_net::{Options, Protocol};
use serde::Serialize;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::address::HostPort;
use crate::cli::BulkArgs;
use crate::commands::query::resolve;
use crate::exit::{Category, Failure, Outcome};
use crate::target::{at, bulk_first, minecraft_srv, summarize, Answer, BulkTarget};
use crate::target_line::{self, is_target_line};

/// The longest a result waits in the output buffer before it is written.
const OUTPUT_DELAY: Duration = Duration::from_millis(20);

/// Bytes of results held for one write.
const OUTPUT_BUFFER: usize = 64 * 1024;

/// How many host names are looked up at once, ahead of the queries.
const RESOLVE_AHEAD: usize = 64;

/// One input line that names a target.
#[derive(Debug)]
struct Entry {
    /// 1-based line number in the input.
    line: u64,
    /// The target as written, without the protocol.
    target: String,
    /// Its host name (or IP address), which Minecraft Java's handshake carries.
    host: String,
    /// The protocol of the line (a game's), if it names one.
    protocol: Option<Protocol>,
    /// The protocol as the line writes it, when it is none of ours (`quake9`).
    protocol_as_written: Option<String>,
    /// The first address to query.
    address: Option<SocketAddr>,
    /// What the line asks for, and where.
    choice: Option<Choice>,
    attempts: Vec<(Attempt, SocketAddr)>,
    /// Why this line cannot be queried, if it cannot.
    problem: Option<Failure>,
}

/// Counts for the summary.
#[derive(Debug, Default)]
struct Tally {
    answered: u64,
    timed_out: u64,
    failed: u64,
    bad_lines: u64,
}

impl Tally {
    fn total(&self) -> u64 {
        self.answered + self.timed_out + self.failed + self.bad_lines
    }
}

/// Runs `gsq bulk`.
pub async fn run(args: BulkArgs, quiet: bool) -> Outcome {
    let input_path = args.input.clone().filter(|p| p.as_os_str() != "-");
    let reader = open_input(input_path.as_deref()).await?;
    let show_progress = !quiet && io::stderr().is_terminal();
    let total = match (&input_path, show_progress) {
        (Some(path), true) => count_targets(path.clone()).await,
        _ => None,
    };
    let progress = progress_bar(total, show_progress);

    let read_error: Arc<Mutex<Option<io::Error>>> = Arc::default();
    let entries = entries(reader, args.protocol, Arc::clone(&read_error));
    let options: Options = args.client.options()?;
    let config = BulkConfig {
        sockets: usize::try_from(args.sockets).unwrap_or(4),
        concurrency: usize::try_from(args.concurrency).unwrap_or(256),
        send_rate: args.rate.and_then(NonZeroU32::new),
        connections: usize::try_from(args.connections).unwrap_or(256),
        ..BulkConfig::default()
    };
    // A line that cannot be queried has no attempts: it comes back at once, and is reported
    // from the entry itself.
    let targets = entries.map(|mut entry| {
        let attempts = std::mem::take(&mut entry.attempts);
        BulkTarget {
            choice: entry.choice.unwrap_or(Choice::Auto),
            host: std::mem::take(&mut entry.host),
            attempts: if entry.problem.is_none() {
                attempts
            } else {
                Vec::new()
            },
            tag: entry,
        }
    });
    // What a query learns about a target (a GameSpy 3 server that wants a challenge) serves
    // the next query of the same target in this run.
    let memory = ServerMemory::new();
    let mut results = Box::pin(bulk_first(Box::pin(targets), options, memory, config));

    let started = Instant::now();
    let mut tally = Tally::default();
    let mut out = tokio::io::BufWriter::with_capacity(OUTPUT_BUFFER, tokio::io::stdout());
    let mut interrupted = false;
    // Listening from the start: once tokio handles SIGINT, a signal that arrives while no
    // one listens would be lost.
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let _ = (&mut ctrl_c).now_or_never();
    // Results go out in batches: a write no later than `OUTPUT_DELAY` after the first result
    // it holds, so a reader downstream sees each result promptly, and a run answering
    // thousands of servers a second makes a write per batch rather than per server.
    let mut flush_at: Option<tokio::time::Instant> = None;
    let write_failed = loop {
        let done = match results.next().now_or_never() {
            Some(done) => done,
            None => {
                let due = flush_at.unwrap_or_else(tokio::time::Instant::now);
                tokio::select! {
                    done = results.next() => done,
                    () = tokio::time::sleep_until(due), if flush_at.is_some() => {
                        flush_at = None;
                        if let Err(e) = out.flush().await {
                            break Some(e);
                        }
                        continue;
                    }
                    _ = &mut ctrl_c => {
                        interrupted = true;
                        None
                    }
                }
            }
        };
        let Some((entry, result)) = done else {
            break None;
        };
        let record = match (&entry.problem, result) {
            (Some(problem), _) => {
                if problem.category().is_bad_input() {
                    tally.bad_lines += 1;
                } else {
                    tally.failed += 1;
                }
                failure_record(&entry, problem.category(), problem.message())
            }
            (None, Ok(answer)) => {
                tally.answered += 1;
                if show_progress {
                    progress.set_message(format!("{} answered", tally.answered));
                }
                success_record(&entry, &answer)
            }
            (None, Err(failures)) => {
                let (category, message) = summarize(&failures);
                if category == Category::Timeout {
                    tally.timed_out += 1;
                } else {
                    tally.failed += 1;
                }
                failure_record(&entry, category, &message)
            }
        };
        progress.inc(1);
        let mut line = record
            .map_err(|e| Failure::internal(format!("cannot format a result as JSON: {e}")))?;
        line.push('\n');
        if let Err(e) = out.write_all(line.as_bytes()).await {
            break Some(e);
        }
        flush_at.get_or_insert_with(|| tokio::time::Instant::now() + OUTPUT_DELAY);
    };
    let flushed = out.flush().await;
    progress.finish_and_clear();
    drop(results);

    if !quiet {
        eprintln!("{}", summary(&tally, started.elapsed(), interrupted));
    }
    if let Some(e) = write_failed.or(flushed.err()) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            return Err(Failure::internal(format!("cannot write to stdout: {e}")));
        }
    }
    let read_error = read_error.lock().ok().and_then(|mut slot| slot.take());
    if let Some(e) = read_error {
        return Err(Failure::usage(format!("cannot read the target list: {e}"))
            .hint("the targets before the error were queried"));
    }
    if interrupted {
        return Err(Failure::new(Category::Interrupted, "interrupted")
            .hint("the results so far were written"));
    }
    Ok(())
}

async fn open_input(path: Option<&Path>) -> Outcome<Pin<Box<dyn AsyncBufRead + Send>>> {
    match path {
        None => Ok(Box::pin(BufReader::new(tokio::io::stdin()))),
        Some(path) => {
            let file = tokio::fs::File::open(path).await.map_err(|e| {
                Failure::usage(format!("cannot read {}: {e}", path.display()))
                    .hint("check the file name, or pipe the list into stdin")
            })?;
            Ok(Box::pin(BufReader::new(file)))
        }
    }
}

/// How many targets a list file holds, for the progress bar's ETA; `None` if it cannot be
/// read. A second pass over the file, but a streaming one: memory stays flat.
async fn count_targets(path: PathBuf) -> Option<u64> {
    tokio::task::spawn_blocking(move || {
        use std::io::BufRead;
        let file = std::fs::File::open(path).ok()?;
        let mut count = 0u64;
        let reader = std::io::BufReader::new(file);
        // Lines are split by the reader without being collected; only their start is looked
        // at, so an over-long line costs no memory.
        for line in reader.split(b'\n') {
            let line = line.ok()?;
            let start = &line[..line.len().min(MAX_LINE)];
            if is_target_line(&String::from_utf8_lossy(start)) {
                count += 1;
            }
        }
        Some(count)
    })
    .await
    .ok()
    .flatten()
}

fn progress_bar(total: Option<u64>, visible: bool) -> ProgressBar {
    if !visible {
        return ProgressBar::hidden();
    }
    let template = match total {
        Some(_) => "{bar:30.cyan/blue} {pos}/{len} {rate:.dim} ETA {eta} {msg}",
        None => "{spinner} {pos} done {rate:.dim} {elapsed} {msg}",
    };
    let style = ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .with_key(
            "rate",
            |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.0}/s", state.per_sec());
            },
        );
    let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr()).with_style(style);
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// The input's target lines, parsed and resolved, in input order. Lines are read one at a
/// time as the consumer asks; a read error ends the stream and is kept in `read_error`.
fn entries(
    reader: Pin<Box<dyn AsyncBufRead + Send>>,
    default_protocol: Option<Choice>,
    read_error: Arc<Mutex<Option<io::Error>>>,
) -> impl Stream<Item = Entry> + Send + 'static {
    let lines = stream::unfold((reader, 0u64), move |(mut reader, number)| {
        let read_error = Arc::clone(&read_error);
        async move {
            let mut buf = Vec::new();
            match read_line(&mut reader, &mut buf).await {
                Ok(None) => None,
                Ok(Some(whole)) => {
                    let text = String::from_utf8_lossy(&buf).into_owned();
                    Some(((number + 1, text, whole), (reader, number + 1)))
                }
                Err(e) => {
                    if let Ok(mut slot) = read_error.lock() {
                        *slot = Some(e);
                    }
                    None
                }
            }
        }
    });
    lines
        .filter(|(_, text, _)| std::future::ready(is_target_line(text)))
        .map(move |(number, text, whole)| {
            let problem = (!whole).then(|| {
                Failure::usage(format!(
                    "the line is longer than {MAX_LINE} bytes; no target is that long"
                ))
            });
            parse_entry(number, &text, default_protocol, problem)
        })
        .buffered(RESOLVE_AHEAD)
}

/// The longest line a target list may have; longer lines are reported, not held in memory.
const MAX_LINE: usize = 1024;

/// Reads one line into `buf`, keeping at most [`MAX_LINE`] bytes of it: `Ok(None)` at the
/// end of the input, `Ok(Some(false))` when the line was longer and its rest was skipped.
async fn read_line(
    reader: &mut Pin<Box<dyn AsyncBufRead + Send>>,
    buf: &mut Vec<u8>,
) -> io::Result<Option<bool>> {
    use tokio::io::AsyncReadExt;
    let limit = u64::try_from(MAX_LINE).unwrap_or(u64::MAX);
    if (&mut *reader).take(limit).read_until(b'\n', buf).await? == 0 {
        return Ok(None);
    }
    if buf.len() < MAX_LINE || buf.ends_with(b"\n") {
        return Ok(Some(true));
    }
    // Skip to the end of the over-long line.
    loop {
        let chunk = reader.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(Some(false));
        }
        match chunk.iter().position(|&b| b == b'\n') {
            Some(end) => {
                reader.as_mut().consume(end + 1);
                return Ok(Some(false));
            }
            None => {
                let len = chunk.len();
                reader.as_mut().consume(len);
            }
        }
    }
}

/// Parses one target line (`<game|protocol|auto> <host[:port]>`, or the address alone with
/// `--protocol`), plans its attempts and looks up its host.
fn parse_entry(
    line: u64,
    text: &str,
    default_protocol: Option<Choice>,
    problem: Option<Failure>,
) -> impl std::future::Future<Output = Entry> + Send + 'static {
    let bad = |target: &str, written: Option<String>, failure: Failure| Entry {
        line,
        target: target.to_owned(),
        host: String::new(),
        protocol: None,
        protocol_as_written: written,
        address: None,
        choice: None,
        attempts: Vec::new(),
        problem: Some(failure),
    };
    let parsed: Result<(Choice, HostPort, String), Entry> = match problem {
        Some(problem) => Err(bad(
            &format!(
                "{}...",
                text.trim_start().chars().take(40).collect::<String>()
            ),
            None,
            problem,
        )),
        None => target_line::parse(text, default_protocol)
            .map(|parsed| (parsed.choice, parsed.address, parsed.target))
            .map_err(|bad_line| bad(&bad_line.target, bad_line.protocol, bad_line.failure)),
    };
    async move {
        let (choice, address, target) = match parsed {
            Ok(parsed) => parsed,
            Err(entry) => return entry,
        };
        let mut entry = Entry {
            line,
            target,
            host: address.host(),
            protocol: choice.protocol(),
            protocol_as_written: None,
            address: None,
            choice: Some(choice),
            attempts: Vec::new(),
            problem: None,
        };
        let served_at = minecraft_srv(choice, &address, None).await;
        let ports = Ports {
            given: served_at.port(),
            query: None,
        };
        let attempts = match choice.attempts(ports) {
            Ok(attempts) => attempts,
            Err(e) => {
                entry.problem = Some(Failure::new(Category::BadAddress, e.to_string()));
                return entry;
            }
        };
        let first_port = attempts.first().map_or(0, |a| a.port);
        match resolve(&served_at, first_port).await {
            Ok(resolved) => {
                entry.attempts = at(resolved.ip(), attempts);
                entry.address = entry.attempts.first().map(|(_, address)| *address);
            }
            Err(failure) => entry.problem = Some(failure),
        }
        entry
    }
}

/// An answer: the status's fields (with the game and the port that answered), then the
/// input's target and line.
#[derive(Debug, Serialize)]
struct Answered<'a> {
    #[serde(flatten)]
    answer: &'a Answer,
    target: &'a str,
    line: u64,
}

/// A failure: what was asked, and why it failed.
#[derive(Debug, PartialEq, Serialize)]
struct Failed<'a> {
    target: &'a str,
    line: u64,
    /// The line's protocol, as written when it is not one of ours.
    protocol: Option<&'a str>,
    address: Option<SocketAddr>,
    error: &'a str,
    error_kind: &'static str,
}

fn success_record(entry: &Entry, answer: &Answer) -> serde_json::Result<String> {
    serde_json::to_string(&Answered {
        answer,
        target: &entry.target,
        line: entry.line,
    })
}

fn failure_record(entry: &Entry, category: Category, message: &str) -> serde_json::Result<String> {
    serde_json::to_string(&Failed {
        target: &entry.target,
        line: entry.line,
        protocol: entry
            .protocol
            .map(Protocol::name)
            .or(entry.protocol_as_written.as_deref()),
        address: entry.address,
        error: message,
        error_kind: category.name(),
    })
}

fn summary(tally: &Tally, elapsed: Duration, interrupted: bool) -> String {
    let seconds = elapsed.as_secs_f64();
    let rate = if seconds > 0.0 {
        tally.total() as f64 / seconds
    } else {
        0.0
    };
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    format!(
        "gsq: bulk{}: {} answered, {} timed out, {} failed, {}; {} in {:.1} s ({:.0}/s)",
        if interrupted { " interrupted" } else { "" },
        tally.answered,
        tally.timed_out,
        tally.failed,
        plural(tally.bad_lines, "bad line", "bad lines"),
        plural(tally.total(), "target", "targets"),
        seconds,
        rate
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_parse_into_targets_or_reasons() {
        let entry = parse_entry(3, "samp 127.0.0.1:7777\n", None, None).await;
        assert_eq!(entry.line, 3);
        assert_eq!(entry.protocol, Some(Protocol::Samp));
        assert_eq!(entry.address, Some("127.0.0.1:7777".parse().unwrap()));
        assert!(entry.problem.is_none());

        let entry = parse_entry(1, "127.0.0.1", Some(Choice::Protocol(Protocol::Sqp)), None).await;
        assert_eq!(entry.address, Some("127.0.0.1:7779".parse().unwrap()));

        // A game: its query port from the game port, then the port as given.
        let entry = parse_entry(2, "7d2d 127.0.0.1:26900", None, None).await;
        assert!(entry.problem.is_none());
        assert_eq!(entry.protocol, Some(Protocol::A2s));
        let ports: Vec<u16> = entry.attempts.iter().map(|(_, a)| a.port()).collect();
        assert_eq!(ports, [26901, 26900]);
        assert_eq!(entry.target, "127.0.0.1:26900");

        // auto: the games of the port first, then every protocol.
        let entry = parse_entry(3, "auto 127.0.0.1:25565", None, None).await;
        assert_eq!(entry.protocol, None);
        assert_eq!(entry.attempts[0].0.protocol, Protocol::Minecraft);
        assert!(entry.attempts.len() >= Protocol::ALL.len() - 1);

        // A game without a default port needs one.
        let entry = parse_entry(4, "brink 127.0.0.1", None, None).await;
        let problem = entry.problem.unwrap();
        assert!(problem.message().contains("brink"), "{problem}");

        // A game of a family gsq does not speak yet says so.
        let entry = parse_entry(5, "gta5a 127.0.0.1", None, None).await;
        let problem = entry.problem.unwrap();
        assert_eq!(problem.category(), Category::UnknownProtocol);
        assert!(problem.message().contains("alt:V Multiplayer"), "{problem}");

        let entry = parse_entry(1, "127.0.0.1", None, None).await;
        assert!(entry.problem.unwrap().message().contains("--protocol"));

        let entry = parse_entry(1, "quake9 127.0.0.1", None, None).await;
        let problem = entry.problem.unwrap();
        assert!(problem.message().contains("quake9"));
        assert_eq!(problem.category(), Category::UnknownProtocol);

        let entry = parse_entry(1, "sqp 127.0.0.1:99999", None, None).await;
        let problem = entry.problem.unwrap();
        assert_eq!(problem.category(), Category::PortOutOfRange);
        assert!(problem.message().contains("out of range"));

        let entry = parse_entry(1, "sqp 127.0.0.1:x", None, None).await;
        assert_eq!(entry.problem.unwrap().category(), Category::BadAddress);

        let entry = parse_entry(1, "sqp a b c", None, None).await;
        assert!(entry.problem.is_some());

        let entry = parse_entry(1, "sqp no-such-host.invalid", None, None).await;
        assert_eq!(entry.problem.unwrap().category(), Category::Resolve);
    }

    #[tokio::test]
    async fn the_stream_skips_comments_and_blank_lines_and_keeps_line_numbers() {
        let text = "# list\n\nsqp 127.0.0.1:1\n  # indented comment\nbogus\nsamp [::1]:2";
        let reader: Pin<Box<dyn AsyncBufRead + Send>> = Box::pin(BufReader::new(text.as_bytes()));
        let read_error = Arc::default();
        let got: Vec<Entry> = entries(reader, None, read_error).collect().await;
        let lines: Vec<u64> = got.iter().map(|e| e.line).collect();
        assert_eq!(lines, [3, 5, 6]);
        assert!(got[1].problem.is_some());
        assert_eq!(got[2].address, Some("[::1]:2".parse().unwrap()));
    }

    #[tokio::test]
    async fn an_over_long_line_is_reported_and_skipped_without_being_held() {
        let long = "x".repeat(10 * MAX_LINE);
        let text = format!("sqp 127.0.0.1:1\n{long}\nsamp 127.0.0.1:2\n");
        let reader: Pin<Box<dyn AsyncBufRead + Send>> = Box::pin(BufReader::with_capacity(
            64,
            std::io::Cursor::new(text.into_bytes()),
        ));
        let got: Vec<Entry> = entries(reader, None, Arc::default()).collect().await;
        assert_eq!(got.len(), 3);
        let problem = got[1].problem.as_ref().expect("the long line is refused");
        assert!(
            problem.message().contains("longer than 1024 bytes"),
            "{problem}"
        );
        assert!(got[1].target.len() < 50, "{}", got[1].target);
        assert_eq!(got[2].line, 3);
        assert_eq!(got[2].address, Some("127.0.0.1:2".parse().unwrap()));
    }

    #[test]
    fn failure_records_have_the_documented_fields_in_order() {
        let entry = Entry {
            line: 7,
            target: "127.0.0.1:9".into(),
            host: "127.0.0.1".into(),
            protocol: Some(Protocol::Sqp),
            protocol_as_written: None,
            address: Some("127.0.0.1:9".parse().unwrap()),
            choice: Some(Choice::Protocol(Protocol::Sqp)),
            attempts: Vec::new(),
            problem: None,
        };
        let record = failure_record(&entry, Category::Timeout, "no reply").unwrap();
        assert_eq!(
            record,
            r#"{"target":"127.0.0.1:9","line":7,"protocol":"sqp","address":"127.0.0.1:9","error":"no reply","error_kind":"timeout"}"#
        );
    }
}
