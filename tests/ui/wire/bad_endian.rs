use query_wire::Wire;

#[derive(Wire)]
#[wire(endian = "middle")]
pub struct Packet {
    pub a: u16,
}

fn main() {}
