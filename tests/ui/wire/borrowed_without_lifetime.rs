use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    #[wire(str(prefix = u8))]
    pub name: &'static str,
}

fn main() {}
