use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    pub width: u8,
    #[wire(count(prefix = u8), cycle = *width)]
    pub values: Vec<u8>,
}

fn main() {}
