// Field types are checked by the compiler, at the field's type.
use query_wire::KeyValues;

struct NotAValue;

#[derive(KeyValues)]
struct Reply {
    plain: Option<NotAValue>,
    #[kv(indexed)]
    players: u32,
    #[kv(rest)]
    rules: Vec<u8>,
}

fn main() {}
