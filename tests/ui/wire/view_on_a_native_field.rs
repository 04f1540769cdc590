use query_wire::Wire;

#[derive(Wire)]
#[wire(view = PacketView)]
pub struct Packet {
    #[wire(view)]
    pub x: u16,
}

fn main() {}
