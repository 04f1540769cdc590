use query_wire::Wire;

#[derive(Wire)]
#[wire(view = PacketView)]
pub struct Packet(#[wire(computed = _1.count())] u8, #[wire(count = *_0)] Vec<u8>);

fn main() {}
