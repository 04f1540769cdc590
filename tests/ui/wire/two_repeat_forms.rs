use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    pub n: u8,
    #[wire(count = *n, until_end)]
    pub values: Vec<u16>,
}

fn main() {}
