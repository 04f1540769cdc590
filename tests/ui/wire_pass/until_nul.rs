//! `until_nul` on lists of strings and of nested packets, with `or_end`, `max_count`,
//! `min_count` and a shared element context.
use query_wire::{Decode, Encode, Text, Wire};

#[derive(Debug, PartialEq, Wire)]
pub struct Pair<'a> {
    #[wire(str(nul))]
    pub key: Text<'a>,
    #[wire(str(nul))]
    pub value: Text<'a>,
}

#[derive(Debug, PartialEq, Wire)]
#[wire(ctx(limit: usize))]
pub struct Column<'a> {
    #[wire(str(nul, max = 64))]
    pub name: &'a str,
    #[wire(until_nul(or_end), max_count = limit, str(nul))]
    pub values: Vec<String>,
}

#[derive(Debug, PartialEq, Wire)]
pub struct Reply<'a> {
    #[wire(until_nul, min_count = 1)]
    pub pairs: Vec<Pair<'a>>,
    #[wire(until_nul(or_end), ctx = 16)]
    pub columns: Vec<Column<'a>>,
}

fn main() {
    let bytes = b"k\0v\0\0player_\0a\0b\0\0\0";
    let reply = Reply::from_bytes(bytes).unwrap();
    assert_eq!(reply.to_vec().unwrap(), bytes);
}
