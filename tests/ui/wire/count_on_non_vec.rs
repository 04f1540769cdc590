use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    #[wire(count(prefix = u8))]
    pub players: u16,
}

fn main() {}
