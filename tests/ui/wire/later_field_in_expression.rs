use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    #[wire(count = *count)]
    pub values: Vec<u8>,
    pub count: u8,
}

fn main() {}
