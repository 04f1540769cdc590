//! CPU time of single threads and placement of threads on cores.
//!
//! A responder's cost per reply is the CPU time of the thread that runs it divided by the
//! replies it sent. The kernel keeps a nanosecond run-time counter per thread
//! (`/proc/self/task/<tid>/schedstat`, first field), readable from any thread of the process,
//! so the thread being measured needs no cooperation and the measuring window can start and
//! stop while it is busy.

use std::io;
use std::time::Duration;

use nix::sched::{sched_setaffinity, CpuSet};
use nix::unistd::{gettid, Pid};

/// A thread of this process, by its kernel thread id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadCpu(Pid);

impl ThreadCpu {
    /// The calling thread.
    pub fn current() -> Self {
        ThreadCpu(gettid())
    }

    /// CPU time (user and system) the thread has used so far.
    pub fn used(self) -> io::Result<Duration> {
        let path = format!("/proc/self/task/{}/schedstat", self.0);
        let text = std::fs::read_to_string(&path)?;
        let nanos = text
            .split_whitespace()
            .next()
            .and_then(|field| field.parse::<u64>().ok())
            .ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidData, format!("{path}: {text:?}"))
            })?;
        Ok(Duration::from_nanos(nanos))
    }
}

/// Keeps the calling thread on `cpu` (modulo the cores there are), so that a responder and its
/// load generator do not take turns on one core. Does nothing on a single-core machine.
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    if cores < 2 {
        return Ok(());
    }
    let mut set = CpuSet::new();
    set.set(cpu % cores).map_err(io::Error::from)?;
    sched_setaffinity(Pid::from_raw(0), &set).map_err(io::Error::from)
}

/// The processor's model name and the number of cores, for the report.
pub fn machine() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split_once(':'))
                .map(|(_, name)| name.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    format!("{cores} × {model}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_thread_accumulates_cpu_time() {
        let me = ThreadCpu::current();
        let before = me.used().unwrap();
        let give_up = std::time::Instant::now() + Duration::from_secs(5);
        let mut x = 0u64;
        // Spin until the counter shows 20 ms of work; on a busy machine that takes longer
        // than 20 ms of wall time, but never forever.
        while me.used().unwrap() - before < Duration::from_millis(20) {
            assert!(std::time::Instant::now() < give_up, "no CPU time counted");
            for _ in 0..10_000 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
            }
        }
        let other = std::thread::spawn(ThreadCpu::current).join().unwrap();
        assert_ne!(other, me);
    }
}
