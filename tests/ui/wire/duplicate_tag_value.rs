use query_wire::Wire;

#[derive(Wire)]
#[wire(tag = u8)]
pub enum Reply {
    #[wire(tag = 1)]
    Challenge(u32),
    #[wire(tag = 0x01)]
    Query(u16),
}

fn main() {}
