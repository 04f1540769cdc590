//! GameSpy 3/4 on arbitrary bytes: requests, challenge replies, reply parts, Just Cause 2's
//! reply, and the reassembly of parts cut at a byte (the first input byte). Whatever decodes
//! must encode, and the encoding must decode again; the part byte's bit fields (last-part
//! bit, number) and the session id sit where the derived ranges say; joining never panics,
//! and a complete reply reports no missing part.
#![no_main]

use libfuzzer_sys::fuzz_target;
use query_specs::gamespy3::{ChallengeReply, Jc2mpReply, Part, Reassembly, Request};
use query_wire::{Decode, Encode};

fuzz_target!(|data: &[u8]| {
    if let Ok(request) = Request::from_bytes(data) {
        let encoded = request.to_vec().expect("decoded request re-encodes");
        assert_eq!(
            Request::from_bytes(&encoded).expect("re-encoded request decodes"),
            request
        );
    }
    if let Ok(reply) = ChallengeReply::from_bytes(data) {
        let _ = reply.challenge();
        let encoded = reply.to_vec().expect("decoded challenge re-encodes");
        ChallengeReply::from_bytes(&encoded).expect("re-encoded challenge decodes");
    }
    if let Ok(part) = Part::from_bytes(data) {
        let encoded = part.to_vec().expect("decoded part re-encodes");
        assert_eq!(
            &encoded[..data.len()],
            data,
            "lists may only gain their closing NULs"
        );
        assert_eq!(
            Part::from_bytes(&encoded).expect("re-encoded part decodes"),
            part
        );
        let byte = data[Part::NUMBER_RANGE][0];
        assert_eq!((byte & 0x80 != 0, byte & 0x7f), (part.last, part.number));
        assert_eq!(data[Part::SESSION_ID_RANGE], part.session_id.to_be_bytes());
    }
    if let Ok(reply) = Jc2mpReply::from_bytes(data) {
        let encoded = reply.to_vec().expect("decoded reply re-encodes");
        assert_eq!(encoded, data);
    }
    let Some((&cut, rest)) = data.split_first() else {
        return;
    };
    let mut reassembly = Reassembly::new();
    for part in rest.split(|&b| b == cut) {
        let _ = reassembly.push(part);
    }
    let _ = reassembly.missing_parts();
    if let Ok(assembled) = reassembly.reply() {
        assert!(!assembled.complete || assembled.missing_parts.is_empty());
    }
});
