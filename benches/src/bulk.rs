//! Bulk-client throughput: `gsq bulk`, gamedig and opengsq against one fleet ([`crate::fleet`]).
//!
//! The fleet runs in its own process; each client run is a child of a fresh `query-bench
//! measure` process, so its peak memory and CPU time are its own. Every tool gets the same
//! per-attempt timeout and number of retries, and is tried at increasing concurrency levels
//! until one loses answers; its result is the fastest level that lost none.
//!
//! An answer is lost when a target that answers (not a silent one) has no successful result.
//! A silent target reported as answered would be a false answer, and is counted too.

use std::collections::HashSet;
use std::io::{self, BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use query_net::Protocol;
use serde::Serialize;

use crate::fleet::{self, Behaviour, Layout, Shard};
use crate::measure::Usage;

/// A client under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tool {
    /// `gsq bulk`, the real binary with a target file.
    Gsq,
    /// gamedig (node), through its library, with a pool of workers.
    Gamedig,
    /// opengsq (python asyncio), with a semaphore.
    Opengsq,
}

impl Tool {
    /// The name in reports.
    pub fn label(self) -> &'static str {
        match self {
            Tool::Gsq => "gsq bulk",
            Tool::Gamedig => "gamedig",
            Tool::Opengsq => "opengsq",
        }
    }
}

/// Where the tools are and how they are run.
#[derive(Debug, Clone)]
pub struct Setup {
    /// This program, to start the fleet and the measuring wrapper.
    pub query_bench: PathBuf,
    /// The `gsq` binary.
    pub gsq: PathBuf,
    /// The `node` binary.
    pub node: PathBuf,
    /// The Python interpreter that has opengsq.
    pub python: PathBuf,
    /// Where `gamedig_bulk.mjs` and `opengsq_bulk.py` are.
    pub peers_dir: PathBuf,
    /// Where target lists and outputs go.
    pub out_dir: PathBuf,
    /// Per-attempt timeout, the same for every tool.
    pub timeout: Duration,
    /// Retries after the first attempt, the same for every tool.
    pub retries: u32,
    /// `gsq bulk --sockets`.
    pub gsq_sockets: u32,
    /// A run still going after this long is killed (and reported so).
    pub run_limit: Duration,
}

/// One run of one tool at one concurrency.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    /// The client.
    pub tool: Tool,
    /// Which targets: `all` or `samp+gamespy1`.
    pub target_set: String,
    /// Targets in the list.
    pub targets: usize,
    /// Queries in flight at most.
    pub concurrency: usize,
    /// Wall time, spawn to exit.
    pub wall_secs: f64,
    /// `targets / wall_secs`.
    pub targets_per_sec: f64,
    /// Targets that answer (not silent).
    pub responsive: usize,
    /// Responsive targets with a successful result.
    pub answered: usize,
    /// Responsive targets without one.
    pub lost: usize,
    /// Silent targets reported as answered (must be 0).
    pub false_answers: usize,
    /// Targets with no output line at all.
    pub missing: usize,
    /// Peak resident memory, MiB.
    pub peak_rss_mib: f64,
    /// User + system CPU seconds.
    pub cpu_secs: f64,
    /// Exit code, `None` if killed by a signal.
    pub exit_code: Option<i32>,
    /// Killed for running past the limit.
    pub killed: bool,
}

impl Run {
    /// Every responsive target answered, no false answer, the run ended on its own.
    pub fn clean(&self) -> bool {
        self.lost == 0 && self.false_answers == 0 && !self.killed && self.exit_code == Some(0)
    }
}

/// The protocols both peers speak.
pub const PEER_PROTOCOLS: [Protocol; 2] = [Protocol::Samp, Protocol::GameSpy1];

/// The target set of the fleet where every target answers.
pub const ANSWERING: &str = "answering samp+gamespy1";

/// The fleet processes of a layout (one per [`Shard`]), answering until stopped.
#[derive(Debug)]
pub struct Fleet(Vec<FleetProcess>);

impl Fleet {
    /// Starts every shard of `layout` and waits until all targets are bound.
    pub fn start(setup: &Setup, layout: &Layout, max_secs: u64) -> io::Result<Self> {
        let count = Shard::count_for(layout);
        let processes = (0..count)
            .map(|index| FleetProcess::spawn(setup, layout, Shard { index, count }, max_secs))
            .collect::<io::Result<Vec<_>>>()?;
        let mut fleet = Fleet(processes);
        for process in &mut fleet.0 {
            process.wait_ready()?;
        }
        Ok(fleet)
    }

    /// Stops every shard; their reports as JSON.
    pub fn stop(self) -> io::Result<Vec<serde_json::Value>> {
        self.0.into_iter().map(FleetProcess::stop).collect()
    }
}

/// One fleet process.
#[derive(Debug)]
struct FleetProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl FleetProcess {
    /// Starts `query-bench serve-fleet` for `shard`.
    fn spawn(setup: &Setup, layout: &Layout, shard: Shard, max_secs: u64) -> io::Result<Self> {
        let mut child = Command::new(&setup.query_bench)
            .args([
                "serve-fleet".to_owned(),
                "--targets".to_owned(),
                layout.targets.to_string(),
                "--addresses".to_owned(),
                layout.addresses.to_string(),
                "--shard".to_owned(),
                shard.index.to_string(),
                "--shards".to_owned(),
                shard.count.to_string(),
                "--max-seconds".to_owned(),
                max_secs.to_string(),
                "--protocols".to_owned(),
                layout
                    .protocols
                    .iter()
                    .map(|p| p.name())
                    .collect::<Vec<_>>()
                    .join(","),
                "--silent-percent".to_owned(),
                layout.silent_percent.to_string(),
                "--drop-first-percent".to_owned(),
                layout.drop_first_percent.to_string(),
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdin = child.stdin.take();
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| io::Error::other("the fleet has no stdout"))?;
        Ok(FleetProcess {
            child,
            stdin,
            stdout: BufReader::new(stdout),
        })
    }

    /// Waits until every target of the shard is bound.
    fn wait_ready(&mut self) -> io::Result<()> {
        let mut line = String::new();
        self.stdout.read_line(&mut line)?;
        if line.trim() != "ready" {
            return Err(io::Error::other(format!(
                "the fleet did not start (said {line:?})"
            )));
        }
        Ok(())
    }

    /// Stops the process; its report as JSON.
    fn stop(mut self) -> io::Result<serde_json::Value> {
        drop(self.stdin.take());
        let mut report = String::new();
        self.stdout.read_line(&mut report)?;
        self.child.wait()?;
        serde_json::from_str(&report)
            .map_err(|e| io::Error::other(format!("fleet report {report:?}: {e}")))
    }
}

impl Drop for FleetProcess {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Writes the target list of `protocols` for `layout`; its path and length.
pub fn write_list(
    setup: &Setup,
    layout: &Layout,
    protocols: &[Protocol],
    name: &str,
) -> io::Result<(PathBuf, usize)> {
    let list = fleet::target_list(layout, protocols);
    let path = setup.out_dir.join(format!("{name}.txt"));
    std::fs::write(&path, &list)?;
    Ok((path, list.lines().count()))
}

/// Runs `tool` over `list` at `concurrency` and scores its output against `layout`.
pub fn run(
    setup: &Setup,
    layout: &Layout,
    tool: Tool,
    (list, targets): (&Path, usize),
    target_set: &str,
    concurrency: usize,
) -> io::Result<Run> {
    let (program, args) = command(setup, tool, list, concurrency);
    let output = setup.out_dir.join(format!(
        "{}-{target_set}-{targets}-c{concurrency}.ndjson",
        tool.label().replace(' ', "-")
    ));
    let mut measure = Command::new(&setup.query_bench);
    measure
        .arg("measure")
        .arg("--stdout")
        .arg(&output)
        .arg("--limit-secs")
        .arg(setup.run_limit.as_secs().to_string())
        .arg("--")
        .arg(program)
        .args(args)
        .stdin(Stdio::null());
    let result = measure.output()?;
    if !result.status.success() {
        return Err(io::Error::other(format!(
            "measuring {} failed: {}",
            tool.label(),
            String::from_utf8_lossy(&result.stderr)
        )));
    }
    let usage: Usage = serde_json::from_slice(&result.stdout)
        .map_err(|e| io::Error::other(format!("measure output: {e}")))?;
    let score = score(layout, &std::fs::read_to_string(&output)?, list)?;
    Ok(Run {
        tool,
        target_set: target_set.to_owned(),
        targets,
        concurrency,
        wall_secs: usage.wall_secs,
        targets_per_sec: targets as f64 / usage.wall_secs,
        responsive: score.responsive,
        answered: score.answered,
        lost: score.responsive - score.answered,
        false_answers: score.false_answers,
        missing: score.missing,
        peak_rss_mib: usage.max_rss_kib as f64 / 1024.0,
        cpu_secs: usage.user_secs + usage.system_secs,
        exit_code: usage.exit_code,
        killed: usage.killed,
    })
}

fn command(setup: &Setup, tool: Tool, list: &Path, concurrency: usize) -> (PathBuf, Vec<String>) {
    let list = list.display().to_string();
    let timeout_ms = setup.timeout.as_millis().to_string();
    let retries = setup.retries.to_string();
    match tool {
        Tool::Gsq => (
            setup.gsq.clone(),
            vec![
                "bulk".to_owned(),
                list,
                "--concurrency".to_owned(),
                concurrency.to_string(),
                "--timeout".to_owned(),
                format!("{timeout_ms}ms"),
                "--retries".to_owned(),
                retries,
                "--sockets".to_owned(),
                setup.gsq_sockets.to_string(),
                "--quiet".to_owned(),
            ],
        ),
        Tool::Gamedig => (
            setup.node.clone(),
            vec![
                setup
                    .peers_dir
                    .join("gamedig_bulk.mjs")
                    .display()
                    .to_string(),
                list,
                concurrency.to_string(),
                timeout_ms,
                retries,
            ],
        ),
        Tool::Opengsq => (
            setup.python.clone(),
            vec![
                setup
                    .peers_dir
                    .join("opengsq_bulk.py")
                    .display()
                    .to_string(),
                list,
                concurrency.to_string(),
                timeout_ms,
                retries,
            ],
        ),
    }
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Score {
    responsive: usize,
    answered: usize,
    false_answers: usize,
    missing: usize,
}

/// Reads a tool's NDJSON output: one object per target with `target` (the address) and, on
/// failure, `error`.
fn score(layout: &Layout, output: &str, list: &Path) -> io::Result<Score> {
    let wanted: Vec<SocketAddr> = std::fs::read_to_string(list)?
        .lines()
        .filter_map(|line| line.split_whitespace().nth(1)?.parse().ok())
        .collect();
    let mut answered = HashSet::new();
    let mut seen = HashSet::new();
    for line in output.lines().filter(|l| !l.trim().is_empty()) {
        let record: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| io::Error::other(format!("output line {line:?}: {e}")))?;
        let Some(addr) = record["target"]
            .as_str()
            .and_then(|t| t.parse::<SocketAddr>().ok())
        else {
            continue;
        };
        seen.insert(addr);
        if record.get("error").is_none_or(serde_json::Value::is_null) {
            answered.insert(addr);
        }
    }
    let mut score = Score::default();
    for addr in wanted {
        let silent = fleet::find(layout, addr).map(|t| t.behaviour) == Some(Behaviour::Silent);
        if !seen.contains(&addr) {
            score.missing += 1;
        }
        match (silent, answered.contains(&addr)) {
            (false, true) => {
                score.responsive += 1;
                score.answered += 1;
            }
            (false, false) => score.responsive += 1,
            (true, true) => score.false_answers += 1,
            (true, false) => {}
        }
    }
    Ok(score)
}

/// Runs `tool` at each of `levels` (ascending) until a level is not clean; all runs, and the
/// index of the fastest clean one.
pub fn sweep(
    setup: &Setup,
    layout: &Layout,
    tool: Tool,
    list: (&Path, usize),
    target_set: &str,
    levels: &[usize],
) -> io::Result<(Vec<Run>, Option<usize>)> {
    let mut runs: Vec<Run> = Vec::new();
    for &level in levels {
        let run = run(setup, layout, tool, list, target_set, level)?;
        eprintln!(
            "  {:<8} {:<14} c={:<6} {:>8.2} s {:>9.0} targets/s  lost {:>4}  false {:>2}  missing {:>4}  peak {:>7.1} MiB  cpu {:>6.2} s{}",
            tool.label(),
            target_set,
            level,
            run.wall_secs,
            run.targets_per_sec,
            run.lost,
            run.false_answers,
            run.missing,
            run.peak_rss_mib,
            run.cpu_secs,
            if run.killed { "  KILLED" } else { "" },
        );
        let clean = run.clean();
        runs.push(run);
        if !clean {
            break;
        }
    }
    let best = runs
        .iter()
        .enumerate()
        .filter(|(_, r)| r.clean())
        .max_by(|(_, a), (_, b)| a.targets_per_sec.total_cmp(&b.targets_per_sec))
        .map(|(i, _)| i);
    Ok((runs, best))
}

/// Flushes stderr progress lines (they are the only output while a sweep runs).
pub fn flush_progress() {
    let _ = io::stderr().flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scoring_counts_lost_false_and_missing_answers() {
        let layout = Layout::new(40, 2);
        let targets: Vec<_> = layout.iter().collect();
        let dir = std::env::temp_dir().join(format!("query-bench-score-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let list = dir.join("list.txt");
        std::fs::write(&list, fleet::target_list(&layout, &Protocol::DATAGRAM)).unwrap();
        let silent = targets
            .iter()
            .find(|t| t.behaviour == Behaviour::Silent)
            .unwrap();
        let answering: Vec<_> = targets
            .iter()
            .filter(|t| t.behaviour != Behaviour::Silent)
            .collect();
        let mut output = String::new();
        // All answering targets answer except one that fails; the silent one "answers";
        // one answering target has no line at all.
        for (i, t) in answering.iter().enumerate() {
            match i {
                0 => output.push_str(&format!(
                    "{{\"target\":\"{}\",\"error\":\"timeout\"}}\n",
                    t.addr
                )),
                1 => {}
                _ => output.push_str(&format!("{{\"target\":\"{}\",\"name\":\"x\"}}\n", t.addr)),
            }
        }
        output.push_str(&format!(
            "{{\"target\":\"{}\",\"error\":null}}\n",
            silent.addr
        ));
        let score = score(&layout, &output, &list).unwrap();
        let silent_count = targets.len() - answering.len();
        assert_eq!(
            score,
            Score {
                responsive: answering.len(),
                answered: answering.len() - 2,
                false_answers: 1,
                missing: silent_count - 1 + 1,
            }
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
