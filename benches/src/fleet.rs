//! A fleet of responders on loopback, for bulk clients to query.
//!
//! Target `i` of a [`Layout`] listens on `127.77.a.b:port` (addresses in 127.0.0.0/8 need no
//! setup on Linux), speaks `protocols[i % n]`, and behaves in one of three ways, spread evenly
//! over protocols, addresses and ports:
//! - it answers (the default);
//! - it is silent (20%): the socket is bound and reads every request, but never replies, so a
//!   client sees a host that swallows datagrams (a firewall), not an ICMP "port unreachable"
//!   that some clients would turn into an instant failure;
//! - it drops the first datagram it receives (5%), then answers: one lost request, so a client
//!   succeeds only if it resends. The drop is per target rather than per source because
//!   opengsq opens a new socket (a new source port) for every request, and a per-source drop
//!   would then drop every request it sends.
//!
//! Every target has its own responder, as separate servers would (an SQP challenge issued by
//! one is no good at another), behind a `Service` without a rate limit: every request comes
//! from 127.0.0.1, which a per-source limit would throttle. The fleet runs on one thread, in a
//! separate process from the client being measured, so the client's memory and CPU are its
//! own.

use std::cell::Cell;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::rc::Rc;
use std::sync::Arc;

use nix::sys::resource::{getrlimit, setrlimit, Resource};
use query_net::limit::{Stats, StatsSnapshot};
use query_net::service::Service;
use query_net::state::SharedState;
use query_net::Protocol;
use serde::Serialize;
use tokio::net::UdpSocket;
use tokio_util::sync::CancellationToken;

use crate::subjects::{self, DynResponder};

/// How a target treats requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Behaviour {
    /// Answers every request.
    Answers,
    /// Reads requests and never answers.
    Silent,
    /// Drops the first datagram it receives, answers the rest.
    DropsFirst,
}

/// One target of the fleet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    /// The protocol it speaks.
    pub protocol: Protocol,
    /// Where it listens.
    pub addr: SocketAddrV4,
    /// How it treats requests.
    pub behaviour: Behaviour,
}

/// Where the targets are and what they do; the same layout always gives the same targets, so
/// the fleet and whoever reads the clients' results agree without exchanging a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// How many targets.
    pub targets: usize,
    /// Over how many loopback addresses they are spread.
    pub addresses: usize,
    /// The first port on each address.
    pub base_port: u16,
    /// The protocols, assigned in turn.
    pub protocols: Vec<Protocol>,
    /// Percentage of silent targets.
    pub silent_percent: usize,
    /// Percentage of targets that drop their first datagram.
    pub drop_first_percent: usize,
}

/// Ports from here on are the kernel's ephemeral range, where clients' sockets bind.
const EPHEMERAL_START: usize = 32_768;

impl Layout {
    /// `targets` over `addresses` addresses, every protocol, 20% silent, 5% dropping the first
    /// datagram, ports from 20,000.
    pub fn new(targets: usize, addresses: usize) -> Self {
        Layout {
            targets,
            addresses: addresses.max(1),
            base_port: 20_000,
            protocols: Protocol::DATAGRAM.to_vec(),
            silent_percent: 20,
            drop_first_percent: 5,
        }
    }

    /// Ports used on each address.
    pub fn ports_per_address(&self) -> usize {
        self.targets.div_ceil(self.addresses)
    }

    /// Checks that every target gets an address and a port outside the ephemeral range.
    pub fn check(&self) -> Result<(), String> {
        if self.protocols.is_empty() {
            return Err("a fleet needs at least one protocol".to_owned());
        }
        if self.addresses > 200 * 256 {
            return Err(format!("{} addresses: at most 51,200", self.addresses));
        }
        let last_port = usize::from(self.base_port) + self.ports_per_address();
        if last_port > EPHEMERAL_START {
            return Err(format!(
                "ports {}..{last_port} reach the ephemeral range (from {EPHEMERAL_START}): use more addresses",
                self.base_port
            ));
        }
        if self.silent_percent + self.drop_first_percent > 100 {
            return Err("silent and drop-first shares add up to more than 100%".to_owned());
        }
        Ok(())
    }

    /// Target `index`.
    pub fn target(&self, index: usize) -> Target {
        let ports = self.ports_per_address();
        let (address, port) = (index / ports, index % ports);
        let ip = Ipv4Addr::new(127, 77, (address / 200) as u8, (address % 200 + 1) as u8);
        let n = self.protocols.len();
        // 37 is coprime with 100: consecutive targets of a protocol walk through every class.
        let class = (index / n * 37) % 100;
        let behaviour = if class < self.silent_percent {
            Behaviour::Silent
        } else if class < self.silent_percent + self.drop_first_percent {
            Behaviour::DropsFirst
        } else {
            Behaviour::Answers
        };
        Target {
            protocol: self.protocols[index % n],
            addr: SocketAddrV4::new(ip, self.base_port + port as u16),
            behaviour,
        }
    }

    /// Every target, in order.
    pub fn iter(&self) -> impl Iterator<Item = Target> + '_ {
        (0..self.targets).map(|i| self.target(i))
    }
}

/// What the fleet did.
#[derive(Debug, Default, Clone, Serialize)]
pub struct FleetReport {
    /// Sockets bound.
    pub targets: usize,
    /// Requests read by silent targets.
    pub ignored: u64,
    /// First datagrams dropped.
    pub dropped_first: u64,
    /// Replies the socket refused to send.
    pub send_errors: u64,
    /// The responders' counters, all protocols together.
    pub responders: StatsSnapshot,
}

#[derive(Debug, Default)]
struct Counters {
    ignored: Cell<u64>,
    dropped_first: Cell<u64>,
    send_errors: Cell<u64>,
}

fn bump(cell: &Cell<u64>) {
    cell.set(cell.get() + 1);
}

/// Raises the open-file limit to fit `sockets` more descriptors (as root the hard limit too).
pub fn allow_sockets(sockets: usize) -> io::Result<()> {
    let want = u64::try_from(sockets)
        .unwrap_or(u64::MAX)
        .saturating_add(1024);
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).map_err(io::Error::from)?;
    if soft >= want {
        return Ok(());
    }
    setrlimit(Resource::RLIMIT_NOFILE, want, hard.max(want))
        .or_else(|_| setrlimit(Resource::RLIMIT_NOFILE, hard, hard))
        .map_err(io::Error::from)?;
    let (soft, _) = getrlimit(Resource::RLIMIT_NOFILE).map_err(io::Error::from)?;
    if soft < want {
        return Err(io::Error::other(format!(
            "{sockets} sockets need an open-file limit of {want}; it is {soft} (raise it, or run as root)"
        )));
    }
    Ok(())
}

/// Targets one fleet process binds at most: the open-file limit may not be raised past 20,000
/// without privileges, so larger layouts are served by several processes, each a shard.
pub const TARGETS_PER_PROCESS: usize = 15_000;

/// Which targets of a layout one process serves: those whose index is `index` modulo `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This shard, from 0.
    pub index: usize,
    /// How many shards.
    pub count: usize,
}

impl Shard {
    /// The shards `layout` needs, [`TARGETS_PER_PROCESS`] targets each at most.
    pub fn count_for(layout: &Layout) -> usize {
        layout.targets.div_ceil(TARGETS_PER_PROCESS).max(1)
    }

    fn holds(self, index: usize) -> bool {
        index % self.count.max(1) == self.index
    }
}

/// Binds every target of `layout` in `shard`, then answers until `stop` is cancelled. Must
/// run inside a [`tokio::task::LocalSet`]. `ready` is called once every socket is bound.
pub async fn serve(
    layout: &Layout,
    shard: Shard,
    stop: CancellationToken,
    ready: impl FnOnce(),
) -> io::Result<FleetReport> {
    layout.check().map_err(io::Error::other)?;
    let mine = (0..layout.targets).filter(|&i| shard.holds(i)).count();
    allow_sockets(mine)?;
    let state = SharedState::new(subjects::server_state());
    let stats = Arc::new(Stats::default());
    let counters = Rc::new(Counters::default());
    let mut tasks = Vec::with_capacity(mine);
    for (_, target) in layout.iter().enumerate().filter(|&(i, _)| shard.holds(i)) {
        let socket = UdpSocket::bind(target.addr)
            .await
            .map_err(|e| io::Error::new(e.kind(), format!("cannot bind {}: {e}", target.addr)))?;
        let service = subjects::unlimited(subjects::responder(
            target.protocol,
            &state,
            SQP_CHALLENGES_PER_TARGET,
        ))
        .with_stats(Arc::clone(&stats))
        .max_datagram(REPLY_CAP);
        tasks.push(tokio::task::spawn_local(answer(
            socket,
            target.behaviour,
            service,
            Rc::clone(&counters),
        )));
    }
    ready();
    stop.cancelled().await;
    for task in &tasks {
        task.abort();
    }
    Ok(FleetReport {
        targets: tasks.len(),
        ignored: counters.ignored.get(),
        dropped_first: counters.dropped_first.get(),
        send_errors: counters.send_errors.get(),
        responders: stats.snapshot(),
    })
}

/// A bulk client queries a target from a few sockets at most.
const SQP_CHALLENGES_PER_TARGET: usize = 16;
/// Requests are small; a larger datagram is cut here and then fails to decode.
const REQUEST_BUFFER: usize = 2048;
/// Replies are capped at a size every protocol's replies for the benchmark state fit in.
const REPLY_CAP: usize = 1400;

async fn answer(
    socket: UdpSocket,
    behaviour: Behaviour,
    mut service: Service<DynResponder>,
    counters: Rc<Counters>,
) {
    let mut buf = vec![0u8; REQUEST_BUFFER];
    let mut first = true;
    loop {
        let Ok((len, from)) = socket.recv_from(&mut buf).await else {
            continue;
        };
        match behaviour {
            Behaviour::Silent => {
                bump(&counters.ignored);
                continue;
            }
            Behaviour::DropsFirst if first => {
                first = false;
                bump(&counters.dropped_first);
                continue;
            }
            _ => {}
        }
        for reply in service.handle(from, &buf[..len]) {
            if socket.send_to(reply, from).await.is_err() {
                bump(&counters.send_errors);
            }
        }
    }
}

/// The target list `gsq bulk` reads: `<protocol> <address>` per line, for the targets whose
/// protocol is in `protocols`.
pub fn target_list(layout: &Layout, protocols: &[Protocol]) -> String {
    let mut out = String::new();
    for target in layout.iter().filter(|t| protocols.contains(&t.protocol)) {
        out.push_str(target.protocol.name());
        out.push(' ');
        out.push_str(&target.addr.to_string());
        out.push('\n');
    }
    out
}

/// The target at `addr`, if the layout has one there.
pub fn find(layout: &Layout, addr: SocketAddr) -> Option<Target> {
    let SocketAddr::V4(v4) = addr else {
        return None;
    };
    let [a, b, c, d] = v4.ip().octets();
    if a != 127 || b != 77 || d == 0 || v4.port() < layout.base_port {
        return None;
    }
    let address = usize::from(c) * 200 + usize::from(d) - 1;
    let port = usize::from(v4.port() - layout.base_port);
    let ports = layout.ports_per_address();
    if port >= ports {
        return None;
    }
    let index = address * ports + port;
    (index < layout.targets).then(|| layout.target(index))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_spreads_behaviours_evenly_over_protocols() {
        // 1,000 targets per protocol over 100 ports per address: ten addresses per protocol,
        // all in 127.77.0.0/24 while there are fewer than 25 protocols.
        let targets = 1_000 * Protocol::DATAGRAM.len();
        let layout = Layout::new(targets, targets / 100);
        layout.check().unwrap();
        assert_eq!(layout.ports_per_address(), 100);
        let per_protocol = 1_000;
        for protocol in Protocol::DATAGRAM {
            let of: Vec<Target> = layout.iter().filter(|t| t.protocol == protocol).collect();
            assert_eq!(of.len(), per_protocol);
            let silent = of
                .iter()
                .filter(|t| t.behaviour == Behaviour::Silent)
                .count();
            let drops = of
                .iter()
                .filter(|t| t.behaviour == Behaviour::DropsFirst)
                .count();
            // 20% and 5%.
            assert_eq!(
                (silent, drops),
                (per_protocol / 5, per_protocol / 20),
                "{protocol}"
            );
        }
        let first = layout.target(0).addr;
        let last = layout.target(targets - 1).addr;
        assert_eq!(first.to_string(), "127.77.0.1:20000");
        // 100 ports an address, 200 addresses a /24.
        let address = targets / 100 - 1;
        assert_eq!(
            last.to_string(),
            format!("127.77.{}.{}:20099", address / 200, address % 200 + 1)
        );
    }

    #[test]
    fn every_target_is_found_by_its_address() {
        let layout = Layout::new(1_000, 7);
        for (i, target) in layout.iter().enumerate() {
            assert_eq!(
                find(&layout, SocketAddr::V4(target.addr)),
                Some(target),
                "{i}"
            );
        }
        assert_eq!(find(&layout, "127.0.0.1:20000".parse().unwrap()), None);
        assert_eq!(find(&layout, "127.77.0.1:19999".parse().unwrap()), None);
    }

    #[test]
    fn layouts_that_reach_the_ephemeral_range_are_refused() {
        assert!(Layout::new(100_000, 100).check().is_ok());
        assert!(Layout::new(100_000, 5).check().is_err());
    }

    #[test]
    fn shards_split_the_targets_without_overlap() {
        let layout = Layout::new(100_000, 100);
        let count = Shard::count_for(&layout);
        assert_eq!(count, 7);
        let held: usize = (0..count)
            .map(|index| {
                (0..layout.targets)
                    .filter(|&i| Shard { index, count }.holds(i))
                    .count()
            })
            .sum();
        assert_eq!(held, layout.targets);
        assert!((0..count).all(|index| {
            (0..layout.targets)
                .filter(|&i| Shard { index, count }.holds(i))
                .count()
                <= TARGETS_PER_PROCESS
        }));
    }

    #[test]
    fn the_target_list_names_protocol_and_address() {
        let layout = Layout {
            protocols: vec![Protocol::Sqp, Protocol::OneQuery, Protocol::Samp],
            ..Layout::new(6, 2)
        };
        let list = target_list(&layout, &[Protocol::Samp]);
        // Protocols in turn (SA:MP third of three), three ports per address.
        assert_eq!(list, "samp 127.77.0.1:20002\nsamp 127.77.0.2:20002\n");
    }
}
