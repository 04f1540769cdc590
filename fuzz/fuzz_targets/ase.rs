//! All-Seeing Eye decoders on arbitrary bytes, fed as a reply and as a request: whatever
//! decodes must re-encode (or fail to with an error) to bytes that decode and encode to the
//! same bytes again, and the client's status mapping of a decoded reply must not panic.
#![no_main]

use std::net::SocketAddr;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use query_net::engines::ase::from_reply;
use query_specs::ase::{Reply, Request};
use query_wire::{Decode, Encode, TextEncoding};

fuzz_target!(|data: &[u8]| {
    if let Ok(reply) = Reply::from_bytes(data) {
        let target = SocketAddr::from(([127, 0, 0, 1], 22126));
        let status = from_reply(target, &reply, TextEncoding::Utf8, Duration::ZERO);
        assert!(status.players.len() == reply.players.len());
        if let Ok(once) = reply.to_vec() {
            assert_eq!(reply.encoded_len(()), once.len());
            let again = Reply::from_bytes(&once).expect("re-encoded reply decodes");
            assert_eq!(again.to_vec().expect("encodes again"), once);
        }
    }
    if let Ok(request) = Request::from_bytes(data) {
        let once = request.to_vec().expect("decoded request re-encodes");
        assert_eq!(Request::from_bytes(&once).expect("decodes again"), request);
    }
});
