//! The cost of the derived SQP decoder against a hand-written one on a query response with
//! every chunk: ServerInfo, 12 ServerRules of every value kind, a 30-row PlayerInfo table
//! (name, score, ping, team), a 2-row TeamInfo table and 5 Metrics, where the decoded value
//! holds `Vec`s. The packet is encoded by the specs' own encoder from that value.
//!
//! One criterion group, `sqp_full_response`, holds `derived`
//! (`query_specs::sqp::Response::from_bytes_with(packet, ChunkSet::all())`, as the client
//! calls it), `handwritten` (`handwritten_sqp_full`, written for speed, building the same
//! value) and `deku` (`deku_sqp_full`, the same packet declared plainly with deku: `Vec<u8>`
//! strings, no UTF-8 check). Every decode starts from the packet's bytes and ends with the
//! value dropped, inside the timing. Before measuring, the derived and hand-written decoders
//! run on the packet and on damaged copies of it and must accept and refuse the same ones, with
//! equal values; deku's value must agree with theirs on every field of the packet, and deku must
//! refuse the damaged copies its declaration can see (it checks neither UTF-8 nor the lengths
//! of chunks other than the rules').
//!
//! ```text
//! cargo bench -p query-specs --bench sqp_full_codec -- --measurement-time 5
//! ```

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use query_specs::sqp::{ChunkSet, Response};
use query_wire::{Decode, Encode};

mod deku_sqp_full;
mod handwritten_sqp_full;
mod sqp_full_fixture;

use sqp_full_fixture::response;

fn decode_derived(packet: &[u8]) -> query_wire::Result<Response<'_>> {
    Response::from_bytes_with(packet, ChunkSet::all())
}

/// Where the ServerInfo chunk's length starts: after the 11-byte header.
const SERVER_INFO_LEN_AT: usize = 11;

/// The packet and damaged copies, each with whether it must decode.
fn cases(packet: &[u8]) -> Vec<(&'static str, Vec<u8>, bool)> {
    let edit = |at: usize, byte: u8| {
        let mut copy = packet.to_vec();
        copy[at] = byte;
        copy
    };
    // The first rule's value kind: after the ServerInfo chunk, the rules' length and the key.
    let info_len = u32::from_be_bytes(
        packet[SERVER_INFO_LEN_AT..SERVER_INFO_LEN_AT + 4]
            .try_into()
            .unwrap(),
    ) as usize;
    let rules_at = SERVER_INFO_LEN_AT + 4 + info_len + 4;
    let first_kind_at = rules_at + 1 + usize::from(packet[rules_at]);
    vec![
        ("the packet", packet.to_vec(), true),
        ("one byte short", packet[..packet.len() - 1].to_vec(), false),
        ("a trailing byte", [packet, &[0]].concat(), false),
        ("a challenge type byte", edit(0, 0), false),
        ("an unknown value kind", edit(first_kind_at, 9), false),
        ("a rule of another kind", edit(first_kind_at, 1), false),
        (
            "invalid UTF-8 in the server name",
            edit(SERVER_INFO_LEN_AT + 9, 0xff),
            false,
        ),
        (
            "a ServerInfo chunk one byte longer",
            edit(SERVER_INFO_LEN_AT + 3, packet[SERVER_INFO_LEN_AT + 3] + 1),
            false,
        ),
    ]
}

/// Panics unless both decoders accept and refuse the same cases with equal values.
fn check_same_work(packet: &[u8], expected: &Response<'_>) {
    for (what, bytes, valid) in cases(packet) {
        let derived = decode_derived(&bytes);
        let hand = handwritten_sqp_full::decode_response(&bytes);
        assert_eq!(derived.is_ok(), valid, "derived on {what}: {derived:?}");
        assert_eq!(hand.is_some(), valid, "hand-written on {what}: {hand:?}");
        if let (Ok(derived), Some(hand)) = (derived, hand) {
            assert_eq!(derived, hand, "decoded alike on {what}");
        }
    }
    assert_eq!(&decode_derived(packet).unwrap(), expected);
    let deku = deku_sqp_full::decode(packet).expect("deku decodes the packet");
    assert_eq!(deku.to_response().as_ref(), Some(expected), "deku agrees");
    for (what, bytes, valid) in cases(packet) {
        let sees = matches!(
            what,
            "one byte short"
                | "a trailing byte"
                | "a challenge type byte"
                | "an unknown value kind"
        );
        if sees {
            assert_eq!(
                deku_sqp_full::decode(&bytes).is_ok(),
                valid,
                "deku on {what}"
            );
        }
    }
}

/// Decodes `input` and drops the result inside the timing, handing it to `black_box` by
/// reference where it was built.
#[inline(always)]
fn decode_and_drop<'a, T>(input: &'a [u8], decode: impl Fn(&'a [u8]) -> T) {
    let value = decode(black_box(input));
    black_box(&value);
}

fn sqp_full_codec(c: &mut Criterion) {
    let value = response();
    let packet = value
        .to_vec_with(ChunkSet::all())
        .expect("the response encodes");
    check_same_work(&packet, &value);
    let mut group = c.benchmark_group("sqp_full_response");
    group.throughput(Throughput::Bytes(packet.len() as u64));
    group.bench_function("derived", |b| {
        b.iter(|| decode_and_drop(&packet, decode_derived))
    });
    group.bench_function("handwritten", |b| {
        b.iter(|| decode_and_drop(&packet, handwritten_sqp_full::decode_response))
    });
    group.bench_function("deku", |b| {
        b.iter(|| decode_and_drop(&packet, deku_sqp_full::decode))
    });
    group.finish();
}

criterion_group!(benches, sqp_full_codec);
criterion_main!(benches);
