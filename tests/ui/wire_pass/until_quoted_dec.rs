//! `str(until = ..)`, `str(quoted)`, `bytes(until = ..)` and `dec(until = ..)`: a Quake 3
//! player line `12 48 "name" extra`.
use query_wire::{Decode, Encode, Text, Wire};

const SPACE: u8 = b' ';

#[derive(Debug, PartialEq, Wire)]
pub struct Line<'a> {
    #[wire(dec(until = SPACE))]
    pub score: i32,
    #[wire(dec(until = b' ', max = 5))]
    pub ping: u16,
    #[wire(str(quoted, encoding = "windows1252", max = 32))]
    pub name: String,
    #[wire(str(quoted))]
    pub clan: Text<'a>,
    #[wire(bytes(until = b'\n'))]
    pub extra: &'a [u8],
    #[wire(str(until = b';'))]
    pub tail: &'a str,
}

fn main() {
    let bytes = b"-3 48 \"\xe9\"\"a\" x\nz;";
    let line = Line::decode(&mut query_wire::Reader::new(bytes), ()).unwrap();
    assert_eq!(line.score, -3);
    assert_eq!(line.name, "é");
    let mut buf = [0u8; 64];
    let mut w = query_wire::Writer::new(&mut buf);
    line.encode(&mut w, ()).unwrap();
    assert_eq!(w.written(), bytes);
    assert_eq!(line.encoded_len(()), bytes.len());
}
