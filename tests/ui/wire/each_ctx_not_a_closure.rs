use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    pub n: u8,
    #[wire(count = *n, each_ctx = *n)]
    pub values: Vec<Item>,
}

#[derive(Wire)]
#[wire(ctx(index: u8))]
pub struct Item {
    pub a: u8,
}

fn main() {}
