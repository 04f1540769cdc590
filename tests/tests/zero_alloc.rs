//! The zero-copy promise, measured: decoding the SQP document's 102-byte QueryResponse borrows
//! every string from the datagram, and encoding writes into the caller's buffer, so neither
//! touches the heap.
//!
//! `allocation-counter` installs a counting global allocator for this test binary only and
//! counts the allocations made on the measuring thread.

use query_specs::sqp::{ChunkSet, Request, Response};
use query_tests::fixture_hex;
use query_wire::{Decode, Encode};

/// Runs `f`, returning its result and the number of heap allocations it made.
fn count_allocations<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let mut result = None;
    let info = allocation_counter::measure(|| result = Some(std::hint::black_box(f())));
    (result.expect("measure runs the closure"), info.count_total)
}

#[test]
fn the_counter_sees_allocations() {
    // Without this, a counter that was never installed would make every test below pass.
    let (boxed, count) = count_allocations(|| Box::new(std::hint::black_box(7u64)));
    assert_eq!(*boxed, 7);
    assert_eq!(count, 1);
}

#[test]
fn decoding_the_query_response_allocates_nothing() {
    let bytes = fixture_hex("sqp/sqp_query_response.hex");
    assert_eq!(bytes.len(), 102);

    let (decoded, count) =
        count_allocations(|| Response::from_bytes_with(&bytes, ChunkSet::SERVER_INFO));
    assert_eq!(count, 0, "decoding allocated {count} times");

    let Ok(Response::Query(query)) = decoded else {
        panic!("expected a query response, got {decoded:?}")
    };
    let info = query.chunks.server_info.expect("ServerInfo was requested");
    assert_eq!(info.server_name, "UE4 Dedicated Server");
    assert_eq!(info.map, "Highrise");
    assert_eq!(info.port, 7777);
    // The strings point into the datagram, not into copies.
    let datagram = bytes.as_ptr_range();
    assert!(datagram.contains(&info.server_name.as_ptr()));
    assert!(datagram.contains(&info.map.as_ptr()));
}

#[test]
fn encoding_the_query_response_into_a_buffer_allocates_nothing() {
    let bytes = fixture_hex("sqp/sqp_query_response.hex");
    let response = Response::from_bytes_with(&bytes, ChunkSet::SERVER_INFO).unwrap();
    let mut out = [0u8; 256];

    let (written, count) = count_allocations(|| {
        let len = response.encoded_len(ChunkSet::SERVER_INFO);
        response
            .encode_into_with(&mut out, ChunkSet::SERVER_INFO)
            .map(|written| (len, written))
    });
    assert_eq!(count, 0, "encoding allocated {count} times");

    let (len, written) = written.unwrap();
    assert_eq!((len, written), (bytes.len(), bytes.len()));
    assert_eq!(&out[..written], &bytes[..]);
}

#[test]
fn the_query_request_round_trips_without_allocating() {
    let bytes = fixture_hex("sqp/sqp_query_request.hex");
    let mut out = [0u8; 16];

    let (written, count) = count_allocations(|| {
        let request = Request::from_bytes(&bytes)?;
        request.encode_into(&mut out)
    });
    assert_eq!(count, 0, "decoding and encoding allocated {count} times");
    assert_eq!(&out[..written.unwrap()], &bytes[..]);
}
