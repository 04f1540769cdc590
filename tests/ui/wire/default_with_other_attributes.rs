use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    #[wire(default, endian = "little")]
    pub cached: u32,
}

fn main() {}
