use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    pub values: Vec<u16>,
}

fn main() {}
