//! Every SQP decoder on arbitrary bytes: requests, responses under every chunk selection,
//! split-reply fragments, and the client's search for the chunks a reply holds. Whatever decodes must re-encode, and the re-encoding must decode to
//! a value that encodes to the same bytes again (padding and skipped surplus are not kept, and
//! NaN metrics defeat `==`, so bytes are compared after one normalising round).
#![no_main]

use libfuzzer_sys::fuzz_target;
use query_net::engines::sqp::find_chunks;
use query_specs::sqp::{
    ChunkSet, Chunks, QueryResponseFragment, QueryResponseHead, Request, Response,
};
use query_wire::{Decode, Encode};

fuzz_target!(|data: &[u8]| {
    if let Ok(request) = Request::from_bytes(data) {
        let once = request.to_vec().expect("decoded request re-encodes");
        let again = Request::from_bytes(&once).expect("re-encoded request decodes");
        assert_eq!(again.to_vec().expect("encodes again"), once);
    }
    // The first byte picks the chunk selection, so every combination gets explored.
    let Some((&bits, body)) = data.split_first() else {
        return;
    };
    let requested = ChunkSet::from_bits_truncate(bits);
    if let Ok(response) = Response::from_bytes_with(body, requested) {
        let once = response
            .to_vec_with(requested)
            .expect("decoded response re-encodes");
        let again =
            Response::from_bytes_with(&once, requested).expect("re-encoded response decodes");
        assert_eq!(again.to_vec_with(requested).expect("encodes again"), once);
    }
    let _ = QueryResponseFragment::from_bytes(body);
    let _ = QueryResponseHead::from_prefix(body, ());
    let _ = Chunks::from_bytes_with(body, requested);
    // What the client finds is a subset of the request that re-encodes.
    if let Ok(found) = find_chunks(body, requested) {
        assert!(requested.contains(found.present));
        found
            .chunks
            .to_vec_with(found.present)
            .expect("found chunks re-encode");
    }
});
