use query_wire::Wire;

#[derive(Wire)]
#[wire(tag = u8, len = u16)]
pub struct Packet {
    pub a: u16,
}

fn main() {}
