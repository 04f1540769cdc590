//! BattlEye RCon packets on arbitrary bytes: whatever passes the CRC32 check re-encodes to the
//! same bytes, checksum included. Without a valid checksum nothing decodes, so the first byte
//! picks whether the target fixes the checksum up before decoding, to reach the payloads.
#![no_main]

use libfuzzer_sys::fuzz_target;
use query_specs::battleye::Packet;
use query_wire::{Decode, Encode};

fuzz_target!(|data: &[u8]| {
    let Some((&fix, packet)) = data.split_first() else {
        return;
    };
    let mut packet = packet.to_vec();
    if fix & 1 == 1 && packet.len() >= 6 {
        let crc = crc32fast::hash(&packet[6..]);
        packet[2..6].copy_from_slice(&crc.to_le_bytes());
    }
    if let Ok(decoded) = Packet::from_bytes(&packet) {
        assert_eq!(decoded.encoded_len(()), packet.len());
        assert_eq!(decoded.to_vec().expect("decoded packet re-encodes"), packet);
    }
});
