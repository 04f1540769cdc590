use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    #[wire(until = b'\n', before = b'"', dec(until = b' '))]
    pub numbers: Vec<u32>,
}

fn main() {}
