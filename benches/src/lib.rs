//! Throughput benchmarks for the query toolkit, run by `scripts/bench-all.sh`.
//!
//! - [`responder`]: replies per second of the responders under `driver::serve`, against a bare
//!   tokio UDP echo server driven by the same load generator.
//! - [`fleet`]: thousands of responders on loopback addresses, some silent, some dropping the
//!   first request of each source, for bulk clients to query.
//! - [`bulk`]: `gsq bulk`, gamedig and opengsq against one fleet: wall time, targets per
//!   second, answers lost, peak memory.
//! - [`report`]: the markdown table of all results, ratios first.
//! - [`reflection`]: reply bytes a flood of forged sources in one /24 draws, before and after
//!   byte budgets.
//!
//! Everything stays on loopback and every run is bounded in time.

pub mod bulk;
pub mod cpu;
pub mod fleet;
pub mod measure;
pub mod reflection;
pub mod report;
pub mod requests;
pub mod responder;
pub mod subjects;
