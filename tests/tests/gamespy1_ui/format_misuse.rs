use query_wire::KeyValues;

#[derive(KeyValues)]
#[kv(format = "json")]
struct UnknownFormat {
    a: Option<u32>,
}

#[derive(KeyValues)]
#[kv(format = "nul", format = "backslash")]
struct TwoFormats {
    a: Option<u32>,
}

#[derive(KeyValues)]
#[kv(format = "nul")]
struct NulInKey {
    #[kv(key = "a\0b")]
    a: Option<u32>,
}

fn main() {}
