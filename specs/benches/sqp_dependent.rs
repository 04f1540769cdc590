//! The derived SQP decode as a library user calls it: from another crate, built without the
//! workspace's link-time optimisation, through a function of the user's that returns the
//! decoded value with `?` and a caller that unwraps it; against the hand-written parser
//! (compiled into this crate, so with every advantage of a local function) called the same way.
//!
//! ```text
//! cargo bench --profile dependent -p query-specs --bench sqp_dependent
//! ```
//!
//! The `dependent` profile is `release` as a crate depending on these builds it: no LTO, 16
//! codegen units. Criterion's group `sqp_dependent` holds `derived` and `handwritten`; the
//! derive is held to derived ≤ 1.10 × hand-written. On a shared machine, count instructions
//! instead of timing (the count divided by the calls callgrind reports for the function):
//!
//! ```text
//! valgrind --tool=callgrind --toggle-collect='sqp_dependent::user_derived' \
//!     target/dependent/deps/sqp_dependent-<hash> --bench --profile-time 1 sqp_dependent/derived
//! ```

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use query_specs::sqp::{ChunkSet, Response};
use query_wire::Decode;

mod handwritten;

const REQUESTED: ChunkSet = ChunkSet::SERVER_INFO;

fn fixture() -> Vec<u8> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/sqp/sqp_query_response.hex"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    text.split_whitespace()
        .map(|pair| u8::from_str_radix(pair, 16).unwrap_or_else(|_| panic!("bad hex {pair:?}")))
        .collect()
}

/// A user's function: decode, `?` the error up, hand the value back.
#[inline(never)]
fn user_derived(packet: &[u8]) -> Result<Response<'_>, query_wire::Error> {
    let response = Response::from_bytes_with(packet, REQUESTED)?;
    Ok(response)
}

/// The same function over the hand-written parser, whose failure is an `Option`.
#[inline(never)]
fn user_handwritten(packet: &[u8]) -> Option<Response<'_>> {
    let response = handwritten::decode_response(packet)?;
    Some(response)
}

fn sqp_dependent(c: &mut Criterion) {
    let packet = fixture();
    assert_eq!(
        user_derived(&packet).unwrap(),
        user_handwritten(&packet).unwrap(),
        "both decoders read the same reply"
    );
    let mut group = c.benchmark_group("sqp_dependent");
    group.throughput(Throughput::Bytes(packet.len() as u64));
    group.bench_function("derived", |b| {
        b.iter(|| {
            let response = user_derived(black_box(&packet)).unwrap();
            black_box(&response);
        })
    });
    group.bench_function("handwritten", |b| {
        b.iter(|| {
            let response = user_handwritten(black_box(&packet)).unwrap();
            black_box(&response);
        })
    });
    group.finish();
}

criterion_group!(benches, sqp_dependent);
criterion_main!(benches);
