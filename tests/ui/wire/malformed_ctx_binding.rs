use query_wire::Wire;

#[derive(Wire)]
#[wire(ctx(requested))]
pub struct Packet {
    pub a: u16,
}

fn main() {}
