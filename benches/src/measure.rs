//! Running a program as a child and measuring it: wall time, CPU time and peak memory.
//!
//! Peak memory is the kernel's high-water mark of the child's resident set (`ru_maxrss` of
//! `getrusage(RUSAGE_CHILDREN)`, the same figure as VmHWM in `/proc/<pid>/status`), read after
//! the child has been waited for, so nothing of its life is missed. That figure is the maximum
//! over every child this process has waited for, so each measured program must be the only
//! child of a fresh process: `query-bench measure -- <program>` is that process.

use std::fs::File;
use std::io;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::resource::{getrusage, UsageWho};
use serde::{Deserialize, Serialize};

/// What one run of a program cost.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Seconds from spawn to exit.
    pub wall_secs: f64,
    /// User CPU seconds.
    pub user_secs: f64,
    /// System CPU seconds.
    pub system_secs: f64,
    /// Peak resident memory in KiB.
    pub max_rss_kib: u64,
    /// The exit code; `None` if a signal ended it.
    pub exit_code: Option<i32>,
    /// Whether it was killed for running past its time limit.
    pub killed: bool,
}

/// Runs `program` with `args`, its stdout into `stdout`, killing it after `limit`. Must be
/// the first child this process waits for (see the module docs).
pub fn run(program: &str, args: &[String], stdout: &Path, limit: Duration) -> io::Result<Usage> {
    let out = File::create(stdout)?;
    let started = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .spawn()
        .map_err(|e| io::Error::new(e.kind(), format!("cannot run {program}: {e}")))?;
    let mut killed = false;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() > limit && !killed {
            child.kill()?;
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let wall_secs = started.elapsed().as_secs_f64();
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).map_err(io::Error::from)?;
    let secs = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
    Ok(Usage {
        wall_secs,
        user_secs: secs(usage.user_time()),
        system_secs: secs(usage.system_time()),
        max_rss_kib: u64::try_from(usage.max_rss()).unwrap_or(0),
        exit_code: status.code(),
        killed,
    })
}
