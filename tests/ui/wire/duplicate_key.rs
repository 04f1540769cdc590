use query_wire::Wire;

#[derive(Wire)]
#[wire(endian = "big")]
#[wire(endian = "little")]
pub struct Packet {
    pub a: u16,
}

fn main() {}
