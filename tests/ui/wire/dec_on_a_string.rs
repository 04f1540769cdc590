use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    #[wire(dec(until = b' '))]
    pub name: String,
}

fn main() {}
