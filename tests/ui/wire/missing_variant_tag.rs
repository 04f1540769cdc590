use query_wire::Wire;

#[derive(Wire)]
#[wire(tag = u8)]
pub enum Reply {
    #[wire(tag = 0)]
    Challenge(u32),
    Query(u16),
}

fn main() {}
