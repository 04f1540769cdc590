// Shapes the derive cannot map to key/value pairs.
use query_wire::KeyValues;

#[derive(KeyValues)]
struct Tuple(u32);

#[derive(KeyValues)]
union Both {
    a: u32,
    b: f32,
}

#[derive(KeyValues)]
struct Generic<T> {
    value: T,
}

#[derive(KeyValues)]
enum Empty {}

#[derive(KeyValues)]
#[kv(unknown_prefix = "x")]
enum Request {
    Status,
    #[kv(key = "status")]
    Again,
    Named {
        text: String,
    },
    #[kv(value = "v")]
    Echo(String),
    Pair(String, String),
    #[kv(other)]
    Unit,
    #[kv(other, key = "k")]
    Other(String, String),
    #[kv(other)]
    Second(String, String),
    Field(#[kv(key = "x")] String),
}

fn main() {}
