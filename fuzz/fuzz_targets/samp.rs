//! SA:MP / open.mp request and reply decoders on arbitrary bytes. Whatever decodes must re-encode, and
//! the re-encoding must be stable: decoding it and encoding again gives the same bytes (a bool
//! byte of 2 or skipped TLV surplus is normalised by the first round).
#![no_main]

use libfuzzer_sys::fuzz_target;
use query_specs::samp::{Reply, Request};
use query_wire::{Decode, Encode};

fuzz_target!(|data: &[u8]| {
    if let Ok(request) = Request::from_bytes(data) {
        let once = request.to_vec().expect("decoded request re-encodes");
        let again = Request::from_bytes(&once).expect("re-encoded request decodes");
        assert_eq!(again.to_vec().expect("encodes again"), once);
    }
    if let Ok(reply) = Reply::from_bytes(data) {
        let once = reply.to_vec().expect("decoded reply re-encodes");
        let again = Reply::from_bytes(&once).expect("re-encoded reply decodes");
        assert_eq!(again.to_vec().expect("encodes again"), once);
    }
});
