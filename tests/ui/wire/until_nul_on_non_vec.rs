use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    #[wire(until_nul)]
    pub values: u16,
}

fn main() {}
