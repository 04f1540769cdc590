//! GameSpy v1 on arbitrary bytes: requests, one-datagram replies, a responder's reply
//! datagram (pairs ended by the marker, a part number left before `\final\`), and reassembly
//! of several datagrams (the input is cut into parts at each `0xff` byte). Whatever decodes
//! must encode, and the encoding must decode again; a reply datagram re-encodes to its bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use query_specs::gamespy1::{Reassembly, Reply, ReplyPart, Request};
use query_wire::kv::{FromKeyValues, ToKeyValues};
use query_wire::{Decode, Encode};

fuzz_target!(|data: &[u8]| {
    if let Ok(requests) = Request::decode_all(data) {
        let encoded = Request::encode_all(&requests).expect("decoded requests re-encode");
        Request::decode_all(&encoded).expect("re-encoded requests decode");
    }
    if let Ok(reply) = Reply::from_bytes(data) {
        let encoded = reply.to_vec().expect("decoded reply re-encodes");
        Reply::from_bytes(&encoded).expect("re-encoded reply decodes");
    }
    if let Ok(part) = ReplyPart::from_bytes(data) {
        // Numbers may come back shorter (`007` as `7`); what re-encodes decodes the same.
        let encoded = part.to_vec().expect("a decoded reply datagram re-encodes");
        assert_eq!(ReplyPart::from_bytes(&encoded).expect("it decodes again"), part);
        assert_eq!(part.encoded_len(()), encoded.len());
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
