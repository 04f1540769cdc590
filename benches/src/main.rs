//! `query-bench`: the benchmark suite's command line (see the crate docs of `query_bench`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use query_bench::responder::{self, LoadConfig, Subject};

/// Throughput benchmarks on loopback.
#[derive(Debug, Parser)]
#[command(name = "query-bench")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Replies per second of responders against a bare UDP echo server.
    Responder(ResponderArgs),
}

#[derive(Debug, clap::Args)]
struct ResponderArgs {
    /// Subjects to measure, in order.
    #[arg(long, value_delimiter = ',', default_values = ["echo", "sqp", "all"])]
    subjects: Vec<Subject>,
    /// Client sockets (source ports), each with one request in flight.
    #[arg(long, default_value_t = 64)]
    clients: usize,
    /// Measuring window per subject, in seconds.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Warm-up before the window, in seconds.
    #[arg(long, default_value_t = 0.5)]
    warmup: f64,
    /// Let the scheduler place the threads instead of pinning them to separate cores.
    #[arg(long)]
    no_pin: bool,
    /// Also write the results as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Responder(args) => run_responder(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("query-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

fn run_responder(args: &ResponderArgs) -> Result {
    let config = LoadConfig {
        clients: args.clients.max(1),
        warmup: Duration::from_secs_f64(args.warmup),
        duration: Duration::from_secs_f64(args.seconds),
        reply_timeout: Duration::from_millis(500),
        pin: !args.no_pin,
    };
    let mut results = Vec::new();
    for &subject in &args.subjects {
        let measured = responder::measure(subject, config)?;
        eprintln!(
            "{:<40} {:>10.0} replies/s  p50 {:>7.1} µs  p99 {:>7.1} µs  server {:>6.0} ns/reply ({:.0}% busy)  client {:>6.0} ns/reply ({:.0}% busy)  timeouts {}",
            subject.label(),
            measured.replies_per_sec,
            measured.p50_us,
            measured.p99_us,
            measured.server_ns_per_reply,
            measured.server_busy * 100.0,
            measured.client_ns_per_reply,
            measured.client_busy * 100.0,
            measured.timeouts,
        );
        results.push(measured);
    }
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&results)?)?;
    }
    Ok(())
}
