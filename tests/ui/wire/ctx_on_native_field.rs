use query_wire::Wire;

#[derive(Wire)]
#[wire(ctx(flags: u8))]
pub struct Packet {
    #[wire(ctx = flags)]
    pub a: u16,
}

fn main() {}
