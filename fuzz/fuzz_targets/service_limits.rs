//! The responders behind their limiters, as `gsq serve` runs them: a [`Service`] over the
//! all-protocols responder with a small request limit, small byte budgets and small tables,
//! fed a sequence of requests from varied sources (IPv4 in three /24s, IPv6 in two /56s and
//! their /64s, IPv4-mapped IPv6) at varied times on a manual clock. Besides never panicking,
//! the limits must hold over the whole run:
//!
//! - each datagram within the cap;
//! - the requests let through per source (IPv4 address, IPv6 /64) at most `per_second × T +
//!   burst`, `T` the time since the first request;
//! - the unproven reply bytes per netblock at most `per_second × T + burst` plus one reply, and
//!   in total the same with the total budget.
//!
//! Input: a settings byte, then events of three bytes and a datagram: the source, the time
//! step, the request kind and length. Kinds 0–4 are valid requests of each protocol (so the
//! fuzzer reaches the replies and budgets without learning the formats first), others take
//! raw bytes from the input.
#![no_main]

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::num::NonZeroU32;
use std::time::{Duration, UNIX_EPOCH};

use libfuzzer_sys::fuzz_target;
use query_net::clock::ManualClock;
use query_net::engines::all::AllProtocols;
use query_net::limit::{netblock, ByteRate, RateLimit, ReplyBudget};
use query_net::service::Service;
use query_net::state::{PlayerState, ServerState, SharedState};

const MAX_DATAGRAM: usize = 600;

fn state() -> ServerState {
    ServerState {
        name: "Fuzz Server ñ".into(),
        map: "de_dust".into(),
        max_players: 64,
        players: (0..60)
            .map(|i| PlayerState {
                name: format!("Jürgen {i} with a long name"),
                score: i,
                ..PlayerState::default()
            })
            .collect(),
        ..ServerState::default()
    }
}

/// The source of an event: a few hosts in a few netblocks of each family.
fn source(pick: u8) -> SocketAddr {
    let host = pick & 0x07;
    let port = 40_000 + u16::from(pick >> 6);
    let ip = match (pick >> 3) & 0x07 {
        0 | 1 | 2 => IpAddr::V4(Ipv4Addr::new(198, 51, (pick >> 3) & 0x03, host)),
        3 => IpAddr::V6(Ipv4Addr::new(198, 51, 0, host).to_ipv6_mapped()),
        4 | 5 => IpAddr::V6(Ipv6Addr::new(
            0x2001,
            0xdb8,
            u16::from((pick >> 3) & 0x01) << 8,
            u16::from(host % 2),
            0,
            0,
            0,
            u16::from(host),
        )),
        _ => IpAddr::V4(Ipv4Addr::new(203, 0, 113, host)),
    };
    SocketAddr::new(ip, port)
}

/// The key the request limiter counts a source under: the IPv4 address, or the IPv6 /64.
fn request_key(ip: IpAddr) -> IpAddr {
    netblock(ip, 32, 64)
}

fn request(kind: u8, raw: &[u8]) -> Vec<u8> {
    match kind % 8 {
        0 => b"\\status\\".to_vec(),
        1 => b"\xff\xff\xff\xffTSource Engine Query\0".to_vec(),
        2 => vec![0, 0, 0, 0, 0],
        3 => b"SAMP\x7f\x00\x00\x01\x61\x1ed".to_vec(),
        4 => b"\\players\\\\rules\\".to_vec(),
        _ => raw.to_vec(),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&settings, mut rest)) = data.split_first() else {
        return;
    };
    let limit = RateLimit {
        per_second: NonZeroU32::new(1 + u32::from(settings & 0x0f)).unwrap(),
        burst: NonZeroU32::new(1 + u32::from(settings >> 4)).unwrap(),
        max_sources: 6,
    };
    let budget = ReplyBudget {
        netblock: ByteRate {
            per_second: NonZeroU32::new(2_000).unwrap(),
            burst: 1_000,
        },
        total: ByteRate {
            per_second: NonZeroU32::new(5_000).unwrap(),
            burst: 3_000,
        },
        ipv4_prefix: 24,
        ipv6_prefix: 56,
        max_netblocks: 3,
    };
    let clock = ManualClock::new(UNIX_EPOCH + Duration::from_secs(1_740_000_000));
    let mut service =
        Service::with_clock(AllProtocols::new(SharedState::new(state())), clock.clone())
            .rate_limit(Some(limit))
            .reply_budget(Some(budget))
            .max_datagram(MAX_DATAGRAM);

    let mut allowed: HashMap<IpAddr, u64> = HashMap::new();
    let mut unproven: HashMap<IpAddr, u64> = HashMap::new();
    let mut unproven_total = 0u64;
    let mut largest_reply = 0u64;
    while let Some((&[pick, step, kind, len], tail)) = rest.split_first_chunk::<4>() {
        let (raw, tail) = tail.split_at(usize::from(len).min(tail.len()));
        rest = tail;
        // Steps from none to about 4 s, mostly short.
        clock.advance(Duration::from_millis(u64::from(step).pow(2) / 16));
        let from = source(pick);
        let datagram = request(kind, raw);
        let before = service.stats().snapshot();
        let mut reply_bytes = 0u64;
        for reply in service.handle(from, &datagram) {
            assert!(reply.len() <= MAX_DATAGRAM, "{} bytes", reply.len());
            reply_bytes += reply.len() as u64;
        }
        let counted = service.stats().snapshot().since(&before);
        if counted.dropped_rate_limited == 0 {
            *allowed.entry(request_key(from.ip())).or_default() += 1;
        }
        if counted.unproven_reply_bytes > 0 {
            assert_eq!(counted.unproven_reply_bytes, reply_bytes);
            *unproven
                .entry(netblock(from.ip(), budget.ipv4_prefix, budget.ipv6_prefix))
                .or_default() += reply_bytes;
            unproven_total += reply_bytes;
            largest_reply = largest_reply.max(reply_bytes);
        }

        let seconds = clock.elapsed().as_secs_f64();
        let most = |rate: u32, burst: u32| f64::from(rate) * seconds + f64::from(burst);
        for (key, &n) in &allowed {
            let bound = most(limit.per_second.get(), limit.burst.get()) + 1.0;
            assert!(
                n as f64 <= bound,
                "{key}: {n} requests let through, bound {bound}"
            );
        }
        for (block, &bytes) in &unproven {
            let bound = most(budget.netblock.per_second.get(), budget.netblock.burst)
                + largest_reply as f64;
            assert!(
                bytes as f64 <= bound,
                "{block}: {bytes} bytes, bound {bound}"
            );
        }
        let bound = most(budget.total.per_second.get(), budget.total.burst) + largest_reply as f64;
        assert!(
            unproven_total as f64 <= bound,
            "total {unproven_total} bytes, bound {bound}"
        );
    }
});
