//! `query-bench`: the benchmark suite's command line (see the crate docs of `query_bench`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use query_bench::bulk::{self, Fleet, Run, Setup, Tool, ANSWERING, PEER_PROTOCOLS};
use query_bench::fleet::{self, Layout};
use query_bench::measure;
use query_bench::responder::{self, LoadConfig, Subject};
use query_net::Protocol;
use serde::Serialize;

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
    /// Answer as a fleet of targets on 127.77.0.0/16 until stdin closes.
    ServeFleet(FleetArgs),
    /// Run a program and print its wall time, CPU time and peak memory as JSON.
    Measure(MeasureArgs),
    /// gsq bulk, gamedig and opengsq against a fleet.
    Bulk(BulkArgs),
    /// Print the markdown report of the saved results.
    Report(ReportArgs),
    /// Reply bytes a flood from one /24 draws from each protocol, before and after byte
    /// budgets.
    Reflection(ReflectionArgs),
}

#[derive(Debug, clap::Args)]
struct ReflectionArgs {
    /// Flood sources, 127.0.5.1 onwards.
    #[arg(long, default_value_t = 32)]
    sources: u8,
    /// Requests per second per source (10 is the default request limit per address).
    #[arg(long, default_value_t = 10)]
    per_source: u32,
    /// Seconds per flood.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Also write the results as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Only the attacks on these protocols (`unreal2`, `a2s`...; all when none is given).
    #[arg(long = "protocol", value_name = "NAME")]
    protocols: Vec<query_net::Protocol>,
}

#[derive(Debug, clap::Args)]
struct ReportArgs {
    /// Where responder.json, bulk.json and allocations.json are.
    #[arg(long, default_value = "target/bench-results")]
    results: PathBuf,
    /// Criterion's output directory.
    #[arg(long, default_value = "target/criterion")]
    criterion: PathBuf,
    /// Only the bulk-client ratios and runs (of a bulk run with other settings).
    #[arg(long)]
    bulk_only: bool,
}

#[derive(Debug, clap::Args)]
struct FleetArgs {
    /// How many targets.
    #[arg(long, default_value_t = 10_000)]
    targets: usize,
    /// Over how many loopback addresses.
    #[arg(long, default_value_t = 100)]
    addresses: usize,
    /// Serve only the targets whose index is this modulo `--shards`.
    #[arg(long, default_value_t = 0)]
    shard: usize,
    /// How many processes share the layout.
    #[arg(long, default_value_t = 1)]
    shards: usize,
    /// Stop after this many seconds even if stdin stays open.
    #[arg(long, default_value_t = 600)]
    max_seconds: u64,
    /// The protocols, assigned to the targets in turn.
    #[arg(long, value_delimiter = ',', default_values_t = Protocol::DATAGRAM)]
    protocols: Vec<Protocol>,
    /// Percentage of targets that never answer.
    #[arg(long, default_value_t = 20)]
    silent_percent: usize,
    /// Percentage of targets that drop their first datagram.
    #[arg(long, default_value_t = 5)]
    drop_first_percent: usize,
}

#[derive(Debug, clap::Args)]
struct MeasureArgs {
    /// Where the program's stdout goes.
    #[arg(long)]
    stdout: PathBuf,
    /// Kill the program after this many seconds.
    #[arg(long, default_value_t = 300)]
    limit_secs: u64,
    /// The program and its arguments.
    #[arg(last = true, required = true)]
    command: Vec<String>,
}

#[derive(Debug, clap::Args)]
struct BulkArgs {
    /// Targets of the main run (the peers get the SA:MP and GameSpy v1 ones among them).
    #[arg(long, default_value_t = 10_000)]
    targets: usize,
    /// Targets of the large gsq-only run; 0 skips it.
    #[arg(long, default_value_t = 100_000)]
    large_targets: usize,
    /// Targets of a second fleet where every target answers at once (SA:MP and GameSpy v1,
    /// none silent, none dropping a datagram), for every tool: CPU per answered target
    /// without the timeouts of silent targets in the way. 0 skips it.
    #[arg(long, default_value_t = 5_000)]
    answering_targets: usize,
    /// Concurrency levels to try for gsq in the large run, ascending (its memory is compared
    /// with the main run's at the same level).
    #[arg(long, value_delimiter = ',', default_values_t = [2000, 5000, 10000])]
    large_levels: Vec<usize>,
    /// Loopback addresses the targets are spread over.
    #[arg(long, default_value_t = 100)]
    addresses: usize,
    /// Per-attempt timeout in milliseconds, for every tool.
    #[arg(long, default_value_t = 1000)]
    timeout_ms: u64,
    /// Retries after the first attempt, for every tool.
    #[arg(long, default_value_t = 1)]
    retries: u32,
    /// Concurrency levels to try for gsq, ascending.
    #[arg(long, value_delimiter = ',', default_values_t = [500, 1000, 2000, 3000, 5000, 10000])]
    gsq_levels: Vec<usize>,
    /// Sockets `gsq bulk` spreads its queries over (`--sockets`). Its default of 4 is lossless
    /// up to 10,000 queries in flight on loopback too; more sockets spread the bursts of
    /// replies over more kernel receive buffers.
    #[arg(long, default_value_t = 16)]
    gsq_sockets: u32,
    /// Concurrency levels to try for gamedig, ascending.
    #[arg(long, value_delimiter = ',', default_values_t = [100, 250, 500, 1000, 2000])]
    gamedig_levels: Vec<usize>,
    /// Concurrency levels to try for opengsq, ascending.
    #[arg(long, value_delimiter = ',', default_values_t = [100, 250, 500, 1000, 2000, 4000])]
    opengsq_levels: Vec<usize>,
    /// The gsq binary.
    #[arg(long, default_value = "target/release/gsq")]
    gsq: PathBuf,
    /// The node binary.
    #[arg(long, default_value = "node")]
    node: PathBuf,
    /// The Python interpreter with opengsq installed.
    #[arg(long, default_value = "benches/peers/.venv/bin/python")]
    python: PathBuf,
    /// Where the peer drivers are (and gamedig's node_modules).
    #[arg(long, default_value = "benches/peers")]
    peers_dir: PathBuf,
    /// Measure gsq only.
    #[arg(long)]
    no_peers: bool,
    /// Where target lists, outputs and results go.
    #[arg(long, default_value = "target/bench-results")]
    out_dir: PathBuf,
    /// Kill a client run after this many seconds.
    #[arg(long, default_value_t = 300)]
    run_limit_secs: u64,
}

#[derive(Debug, clap::Args)]
struct ResponderArgs {
    /// Subjects to measure, in order.
    #[arg(long, value_delimiter = ',', default_values = ["echo", "sqp", "all", "echo-pipelined", "samp-pipelined", "samp-pipelined-unsegmented"])]
    subjects: Vec<Subject>,
    /// Client sockets (source ports), each with one request in flight.
    #[arg(long, default_value_t = 64)]
    clients: usize,
    /// Measuring time per subject, in seconds.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Interleaved rounds the measuring time is split into.
    #[arg(long, default_value_t = 3)]
    rounds: u32,
    /// Warm-up before each round, in seconds.
    #[arg(long, default_value_t = 0.3)]
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
        Command::ServeFleet(args) => serve_fleet(&args),
        Command::Measure(args) => run_measure(&args),
        Command::Bulk(args) => run_bulk(&args),
        Command::Reflection(args) => run_reflection(&args),
        Command::Report(args) => {
            print!(
                "{}",
                query_bench::report::markdown(&query_bench::report::Sources {
                    results: args.results,
                    criterion: args.criterion,
                    bulk_only: args.bulk_only,
                })
            );
            Ok(())
        }
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

fn run_reflection(args: &ReflectionArgs) -> Result {
    use query_bench::reflection::{self, FloodConfig, Setup};
    let config = FloodConfig {
        sources: args.sources,
        per_source: args.per_source,
        duration: Duration::from_secs_f64(args.seconds),
        poll_every: Duration::from_millis(2500),
    };
    let mut rows = Vec::new();
    let chosen = reflection::attacks()
        .into_iter()
        .filter(|a| args.protocols.is_empty() || args.protocols.contains(&a.protocol));
    for attack in chosen {
        eprintln!("{}", attack.label);
        let first = reflection::first_request(&attack)?;
        let before = reflection::flood(&attack, Setup::Before, config)?;
        let after = reflection::flood(&attack, Setup::After, config)?;
        rows.push((first, before, after));
    }
    println!(
        "{} sources in 127.0.5.0/24, {} requests/s each, {} s per flood\n",
        args.sources, args.per_source, args.seconds
    );
    print!("{}", reflection::table(&rows));
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&rows)?)?;
    }
    Ok(())
}

fn run_responder(args: &ResponderArgs) -> Result {
    let config = LoadConfig {
        clients: args.clients.max(1),
        warmup: Duration::from_secs_f64(args.warmup),
        duration: Duration::from_secs_f64(args.seconds),
        reply_timeout: Duration::from_millis(500),
        pin: !args.no_pin,
    };
    let results = responder::measure(&args.subjects, config, args.rounds)?;
    for measured in &results {
        eprintln!(
            "{:<36} {:>8.0} replies/s (rounds {})  p50 {:.1} µs  p99 {:.1} µs  responder {:.0} ns/reply ({:.0}% busy)  load generator {:.0} ns/reply ({:.0}% busy)  timeouts {}",
            measured.subject.label(),
            measured.replies_per_sec,
            measured
                .rounds_per_sec
                .iter()
                .map(|r| format!("{r:.0}"))
                .collect::<Vec<_>>()
                .join(", "),
            measured.p50_us,
            measured.p99_us,
            measured.server_ns_per_reply,
            measured.server_busy * 100.0,
            measured.client_ns_per_reply,
            measured.client_busy * 100.0,
            measured.timeouts,
        );
    }
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&results)?)?;
    }
    Ok(())
}

fn serve_fleet(args: &FleetArgs) -> Result {
    let layout = Layout {
        protocols: args.protocols.clone(),
        silent_percent: args.silent_percent,
        drop_first_percent: args.drop_first_percent,
        ..Layout::new(args.targets, args.addresses)
    };
    layout.check()?;
    let stop = tokio_util::sync::CancellationToken::new();
    // Stdin closing (the parent is done, or gone) or the time limit stops the fleet.
    let on_eof = stop.clone();
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
        on_eof.cancel();
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    let report = local.block_on(&runtime, async {
        let limit = stop.clone();
        let max = Duration::from_secs(args.max_seconds);
        tokio::task::spawn_local(async move {
            tokio::time::sleep(max).await;
            limit.cancel();
        });
        let shard = fleet::Shard {
            index: args.shard,
            count: args.shards.max(1),
        };
        fleet::serve(&layout, shard, stop, || println!("ready")).await
    })?;
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}

fn run_measure(args: &MeasureArgs) -> Result {
    let (program, rest) = args
        .command
        .split_first()
        .ok_or("measure needs a program")?;
    let usage = measure::run(
        program,
        rest,
        &args.stdout,
        Duration::from_secs(args.limit_secs),
    )?;
    println!("{}", serde_json::to_string(&usage)?);
    Ok(())
}

/// Everything the bulk benchmark found, as written to `bulk.json`.
#[derive(Debug, Serialize)]
struct BulkReport {
    timeout_ms: u64,
    retries: u32,
    gsq_sockets: u32,
    targets: usize,
    large_targets: usize,
    answering_targets: usize,
    /// Every run, in the order made.
    runs: Vec<Run>,
    /// Index into `runs` of each tool's chosen run, per target set.
    chosen: Vec<Chosen>,
    fleet: Vec<serde_json::Value>,
}

#[derive(Debug, Serialize)]
struct Chosen {
    tool: Tool,
    target_set: String,
    targets: usize,
    /// The fastest clean run; if no level was clean, the one with the fewest lost answers.
    run: usize,
    clean: bool,
}

/// Records a sweep's runs and the one chosen: the fastest clean run, or else the one with the
/// fewest lost and false answers.
fn choose(
    report: &mut BulkReport,
    tool: Tool,
    set: &str,
    targets: usize,
    runs: Vec<Run>,
    best: Option<usize>,
) {
    let fallback = runs
        .iter()
        .enumerate()
        .min_by_key(|(_, r)| r.lost + r.false_answers)
        .map(|(i, _)| i);
    if let Some(index) = best.or(fallback) {
        report.chosen.push(Chosen {
            tool,
            target_set: set.to_owned(),
            targets,
            run: report.runs.len() + index,
            clean: best.is_some(),
        });
    }
    report.runs.extend(runs);
}

/// One sweep of the plan: a tool, its target set's name, list and size, and its levels.
type Sweep<'a> = (Tool, &'a str, (PathBuf, usize), &'a [usize]);

fn run_bulk(args: &BulkArgs) -> Result {
    std::fs::create_dir_all(&args.out_dir)?;
    let setup = Setup {
        query_bench: std::env::current_exe()?,
        gsq: args.gsq.clone(),
        node: args.node.clone(),
        python: args.python.clone(),
        peers_dir: args.peers_dir.clone(),
        out_dir: args.out_dir.clone(),
        timeout: Duration::from_millis(args.timeout_ms),
        retries: args.retries,
        gsq_sockets: args.gsq_sockets,
        run_limit: Duration::from_secs(args.run_limit_secs),
    };
    let fleet_limit = 3600;
    let mut report = BulkReport {
        timeout_ms: args.timeout_ms,
        retries: args.retries,
        gsq_sockets: args.gsq_sockets,
        targets: args.targets,
        large_targets: args.large_targets,
        answering_targets: args.answering_targets,
        runs: Vec::new(),
        chosen: Vec::new(),
        fleet: Vec::new(),
    };

    let layout = Layout::new(args.targets, args.addresses);
    let all = bulk::write_list(
        &setup,
        &layout,
        &Protocol::DATAGRAM,
        &format!("targets-{}", args.targets),
    )?;
    let peers = bulk::write_list(
        &setup,
        &layout,
        &PEER_PROTOCOLS,
        &format!("targets-{}-samp-gamespy1", args.targets),
    )?;
    eprintln!(
        "bulk: {} targets ({} SA:MP + GameSpy v1), timeout {} ms, {} retries",
        all.1, peers.1, args.timeout_ms, args.retries
    );
    let fleet = Fleet::start(&setup, &layout, fleet_limit)?;
    let mut plan: Vec<Sweep<'_>> = vec![
        (Tool::Gsq, "all", all.clone(), &args.gsq_levels),
        (Tool::Gsq, "samp+gamespy1", peers.clone(), &args.gsq_levels),
    ];
    if !args.no_peers {
        plan.push((
            Tool::Gamedig,
            "samp+gamespy1",
            peers.clone(),
            &args.gamedig_levels,
        ));
        plan.push((
            Tool::Opengsq,
            "samp+gamespy1",
            peers.clone(),
            &args.opengsq_levels,
        ));
    }
    for (tool, set, (path, count), levels) in plan {
        let (runs, best) = bulk::sweep(&setup, &layout, tool, (&path, count), set, levels)?;
        choose(&mut report, tool, set, count, runs, best);
        bulk::flush_progress();
    }
    report.fleet.extend(fleet.stop()?);

    if args.large_targets > 0 {
        let large = Layout::new(args.large_targets, args.addresses);
        let list = bulk::write_list(
            &setup,
            &large,
            &Protocol::DATAGRAM,
            &format!("targets-{}", args.large_targets),
        )?;
        let fleet = Fleet::start(&setup, &large, fleet_limit)?;
        let (runs, best) = bulk::sweep(
            &setup,
            &large,
            Tool::Gsq,
            (&list.0, list.1),
            "all",
            &args.large_levels,
        )?;
        choose(&mut report, Tool::Gsq, "all", list.1, runs, best);
        report.fleet.extend(fleet.stop()?);
    }
    if args.answering_targets > 0 {
        let answering = Layout {
            protocols: PEER_PROTOCOLS.to_vec(),
            silent_percent: 0,
            drop_first_percent: 0,
            ..Layout::new(args.answering_targets, args.addresses)
        };
        let list = bulk::write_list(
            &setup,
            &answering,
            &PEER_PROTOCOLS,
            &format!("targets-{}-answering", args.answering_targets),
        )?;
        eprintln!(
            "bulk: {} targets that all answer ({} SA:MP + GameSpy v1)",
            answering.targets, list.1
        );
        let fleet = Fleet::start(&setup, &answering, fleet_limit)?;
        let mut plan: Vec<Sweep<'_>> = vec![(Tool::Gsq, ANSWERING, list.clone(), &args.gsq_levels)];
        if !args.no_peers {
            plan.push((Tool::Gamedig, ANSWERING, list.clone(), &args.gamedig_levels));
            plan.push((Tool::Opengsq, ANSWERING, list.clone(), &args.opengsq_levels));
        }
        for (tool, set, (path, count), levels) in plan {
            let (runs, best) = bulk::sweep(&setup, &answering, tool, (&path, count), set, levels)?;
            choose(&mut report, tool, set, count, runs, best);
            bulk::flush_progress();
        }
        report.fleet.extend(fleet.stop()?);
    }
    let path = args.out_dir.join("bulk.json");
    std::fs::write(&path, serde_json::to_string_pretty(&report)?)?;
    eprintln!("bulk: results in {}", path.display());
    Ok(())
}
