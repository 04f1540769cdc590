use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    #[wire(before = b'"')]
    pub score: u16,
}

fn main() {}
