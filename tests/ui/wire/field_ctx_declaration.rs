use query_wire::Wire;

#[derive(Wire)]
#[wire(ctx(flags: u8))]
pub struct Packet {
    #[wire(ctx(flags))]
    pub item: Item,
}

#[derive(Wire)]
#[wire(ctx(flags: u8))]
pub struct Item {
    pub a: u8,
}

fn main() {}
