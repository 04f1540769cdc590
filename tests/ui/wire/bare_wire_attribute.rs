use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    #[wire]
    pub a: u8,
    #[wire(bits = true)]
    pub b: u8,
}

fn main() {}
