use query_wire::Wire;

#[derive(Wire)]
#[wire(tag = u8)]
pub enum Reply {
    #[wire(tag = 0)]
    Challenge(u32),
    #[wire(other)]
    Unknown(u8),
}

fn main() {}
