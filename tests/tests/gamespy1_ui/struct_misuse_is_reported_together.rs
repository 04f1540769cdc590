// Every misuse in one struct is reported at once, each at its own span.
use std::borrow::Cow;

use query_wire::KeyValues;

#[derive(KeyValues)]
#[kv(encoding = "ebcdic", unknown_prefix = "team")]
struct Reply<'a> {
    #[kv(keyy = "hostname")]
    hostname: Option<Cow<'a, str>>,
    #[kv(key = "hostname")]
    name: Option<Cow<'a, str>>,
    #[kv(key = "")]
    empty: Option<u32>,
    #[kv(key = "a\\b")]
    slash: Option<u32>,
    #[kv(flag)]
    final_: u8,
    #[kv(default)]
    maybe: Option<u32>,
    #[kv(indexed, rest)]
    players: Vec<Player>,
    #[kv(rest, key = "rules")]
    rules: Vec<(String, String)>,
    #[kv(flag = true)]
    on: bool,
}

#[derive(KeyValues)]
#[kv(unknown_prefix = "p")]
struct Player {
    #[kv(index)]
    a: usize,
    #[kv(index)]
    b: u8,
    #[kv(parse, indexed)]
    c: Vec<Player>,
}

fn main() {}
