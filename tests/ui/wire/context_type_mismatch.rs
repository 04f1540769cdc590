use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    pub kind: u16,
    #[wire(ctx = *kind)]
    pub value: Value,
}

#[derive(Wire)]
#[wire(tag = u8, external)]
pub enum Value {
    #[wire(tag = 0)]
    Byte(u8),
}

fn main() {}
