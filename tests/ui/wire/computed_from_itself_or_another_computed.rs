use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    #[wire(computed = *count + 1)]
    pub count: u8,
    #[wire(computed = *count * 2)]
    pub double: u8,
    #[wire(count = *count)]
    pub values: Vec<u8>,
}

fn main() {}
