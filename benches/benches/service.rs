//! CPU cost of `Service::handle` without sockets: what a responder adds per request on top of
//! the socket calls that `driver::serve` makes. Compare with the socket-level figures of
//! `query-bench responder`, whose echo server costs the socket calls alone.

use std::hint::black_box;
use std::net::{SocketAddr, SocketAddrV4};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use query_bench::requests;
use query_bench::subjects::{self, server_state};
use query_net::engine::Responder;
use query_net::service::Service;
use query_net::state::SharedState;

fn source(i: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 40_000 + i % 64))
}

/// One SQP challenge request and the query request proving its challenge; the query reply's
/// length.
fn sqp_pair<R: Responder>(service: &mut Service<R>, from: SocketAddr) -> usize {
    let mut challenge = None;
    for reply in service.handle(from, black_box(&requests::sqp_challenge())) {
        challenge = requests::sqp_challenge_of(reply);
    }
    let query = requests::sqp_query(challenge.unwrap_or(0));
    let bytes: usize = service
        .handle(from, black_box(&query))
        .map(<[u8]>::len)
        .sum();
    assert!(bytes > 0, "the query was not answered");
    bytes
}

fn sqp_pairs(c: &mut Criterion) {
    let state = SharedState::new(server_state());
    let mut group = c.benchmark_group("service_handle");
    group.throughput(Throughput::Elements(2));
    let mut sqp = subjects::unlimited(subjects::sqp(&state));
    let mut i = 0u16;
    group.bench_function("sqp_pair", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            sqp_pair(&mut sqp, source(i))
        });
    });
    let mut all = subjects::unlimited(subjects::all_protocols(&state));
    group.bench_function("all_sqp_pair", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            sqp_pair(&mut all, source(i))
        });
    });
    group.finish();
}

fn samp_info(c: &mut Criterion) {
    let state = SharedState::new(server_state());
    let server: SocketAddrV4 = "127.0.0.1:7777".parse().unwrap_or_else(|_| unreachable!());
    let mut group = c.benchmark_group("service_handle");
    group.throughput(Throughput::Elements(1));
    let mut samp = subjects::unlimited(subjects::samp(&state));
    for op in [b'i', b'r', b'd'] {
        let request = requests::samp(server, op);
        group.bench_function(format!("samp_{}", char::from(op)), |b| {
            b.iter(|| {
                samp.handle(source(1), black_box(&request))
                    .map(<[u8]>::len)
                    .sum::<usize>()
            });
        });
    }
    group.finish();
}

criterion_group!(benches, sqp_pairs, samp_info);
criterion_main!(benches);
