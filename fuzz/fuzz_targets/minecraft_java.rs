//! Minecraft Java Edition status frames (VarInt lengths, ids and strings) on arbitrary bytes.
//! Decoding is strict (no overlong VarInt), so whatever decodes re-encodes to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use query_specs::minecraft_java::{HandshakeFrame, StatusRequestFrame, StatusResponseFrame};
use query_wire::{Decode, Encode};

fuzz_target!(|data: &[u8]| {
    if let Ok(frame) = HandshakeFrame::from_bytes(data) {
        assert_eq!(frame.encoded_len(()), data.len());
        assert_eq!(frame.to_vec().expect("decoded handshake re-encodes"), data);
    }
    if let Ok(frame) = StatusRequestFrame::from_bytes(data) {
        assert_eq!(frame.to_vec().expect("decoded request re-encodes"), data);
    }
    if let Ok(frame) = StatusResponseFrame::from_bytes(data) {
        assert_eq!(frame.encoded_len(()), data.len());
        assert_eq!(frame.to_vec().expect("decoded response re-encodes"), data);
    }
});
