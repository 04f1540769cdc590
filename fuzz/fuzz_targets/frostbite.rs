//! Frostbite RCON packets on arbitrary bytes, read as a TCP stream: packet after packet until
//! one fails. Every packet that decodes re-encodes to its own bytes (the size counts the
//! header, each word's length is checked against its text).
#![no_main]

use libfuzzer_sys::fuzz_target;
use query_specs::frostbite::Packet;
use query_wire::{Decode, Encode, Reader};

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    while !r.is_empty() {
        let start = r.offset();
        let Ok(packet) = Packet::decode(&mut r, ()) else {
            break;
        };
        let bytes = &data[start..r.offset()];
        assert_eq!(packet.encoded_len(()), bytes.len());
        assert_eq!(packet.to_vec().expect("decoded packet re-encodes"), bytes);
    }
});
