//! The derive's words that no protocol in `specs` uses yet, on arbitrary bytes: a LEB128
//! length prefix, a CRC-32 of the bytes before it, a VarLong, a `len` body framed by a VarInt
//! that counts itself, bit fields and a flag word. Whatever decodes re-encodes to the same
//! bytes and says its length exactly; nothing panics. The first byte picks whether the
//! checksum is fixed up before decoding, to reach the fields after it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use query_wire::{Decode, Encode, Wire};

#[derive(Debug, Clone, PartialEq, Eq, Wire)]
#[wire(magic = b"DW", endian = "little")]
struct Packet<'a> {
    #[wire(bytes(prefix = leb128, max = 64))]
    blob: &'a [u8],
    #[wire(crc32(before))]
    checksum: u32,
    #[wire(varint)]
    big: i64,
    #[wire(len(prefix = varint, includes = 1))]
    body: Body<'a>,
    #[wire(bit_width = 3)]
    kind: u8,
    #[wire(bit_width = 5)]
    level: u8,
    #[wire(flags)]
    present: u8,
    #[wire(flag(present, 0x01))]
    port: Option<u16>,
    #[wire(flag(present, 0x80), str(until = b'\n', or_end))]
    note: Option<&'a str>,
}

#[derive(Debug, Clone, PartialEq, Eq, Wire)]
struct Body<'a> {
    #[wire(count(prefix = leb128), str(prefix = varint, max = 32))]
    names: Vec<&'a str>,
    #[wire(until_end, varint)]
    rest: Vec<u32>,
}

fuzz_target!(|data: &[u8]| {
    let Some((&fix, input)) = data.split_first() else {
        return;
    };
    let mut input = input.to_vec();
    if fix & 1 == 1 {
        fix_checksum(&mut input);
    }
    if let Ok(decoded) = Packet::from_bytes(&input) {
        let encoded = decoded.to_vec().expect("a decoded packet re-encodes");
        assert_eq!(decoded.encoded_len(()), encoded.len());
        // Unknown flag bits are not written back, so compare what the bytes decode to.
        let again = Packet::from_bytes(&encoded).expect("re-encoded bytes decode");
        assert_eq!(again.to_vec().expect("re-encodes"), encoded);
        assert_eq!(again.blob, decoded.blob);
        assert_eq!(again.body, decoded.body);
        assert_eq!((again.port, again.note), (decoded.port, decoded.note));
    }
});

/// Writes the CRC-32 of the magic and the blob after them, where the blob's prefix reads.
fn fix_checksum(input: &mut [u8]) {
    let (mut len, mut at, mut shift) = (0usize, 2usize, 0);
    while let Some(&byte) = input.get(at) {
        len |= usize::from(byte & 0x7f) << shift;
        at += 1;
        shift += 7;
        if byte & 0x80 == 0 || shift > 21 {
            break;
        }
    }
    let end = at + len;
    if end + 4 <= input.len() {
        let crc = crc32fast::hash(&input[..end]);
        input[end..end + 4].copy_from_slice(&crc.to_le_bytes());
    }
}
