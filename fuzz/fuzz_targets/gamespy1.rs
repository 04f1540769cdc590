//! GameSpy v1 on arbitrary bytes: requests, one-datagram replies, and reassembly of several
//! datagrams (the input is cut into parts at each `0xff` byte). Whatever decodes must encode,
//! and the encoding must decode again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use query_specs::gamespy1::{Reassembly, Reply, Request};
use query_wire::kv::{FromKeyValues, ToKeyValues};

fuzz_target!(|data: &[u8]| {
    if let Ok(requests) = Request::decode_all(data) {
        let encoded = Request::encode_all(&requests).expect("decoded requests re-encode");
        Request::decode_all(&encoded).expect("re-encoded requests decode");
    }
    if let Ok(reply) = Reply::from_bytes(data) {
        let encoded = reply.to_vec().expect("decoded reply re-encodes");
        Reply::from_bytes(&encoded).expect("re-encoded reply decodes");
    }
    let mut reassembly = Reassembly::new();
    for part in data.split(|&b| b == 0xff) {
        let _ = reassembly.push(part);
    }
    let _ = reassembly.missing_parts();
    if let Ok(assembled) = reassembly.reply() {
        assert!(!assembled.complete || assembled.missing_parts.is_empty());
    }
});
