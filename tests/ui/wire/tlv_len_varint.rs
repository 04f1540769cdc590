use query_wire::Wire;

/// A TLV length is written after its body, in place: it cannot be variable-width.
#[derive(Wire)]
#[wire(tag = u8, len = varint)]
pub enum Tlv {
    #[wire(tag = 1)]
    One(u8),
}

fn main() {}
