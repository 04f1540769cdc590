use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    #[wire(count(prefix = u8), min_count = 4, max_count = 3)]
    pub scores: Vec<u16>,
    #[wire(min_count = 1)]
    pub players: u16,
}

fn main() {}
