use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    #[wire(colour = "red")]
    pub a: u8,
}

fn main() {}
