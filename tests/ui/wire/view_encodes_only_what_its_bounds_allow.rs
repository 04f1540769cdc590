use query_wire::{items, Encode, Wire};

#[derive(Wire)]
#[wire(view = PacketView)]
pub struct Packet {
    #[wire(count(prefix = u8))]
    pub values: Vec<u16>,
}

fn main() {
    // The elements must be the declared type, u16.
    let view = PacketView { values: items::from_fn(2, |i| i as u32) };
    let _ = view.to_vec();
}
