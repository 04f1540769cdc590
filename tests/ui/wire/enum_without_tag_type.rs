use query_wire::Wire;

#[derive(Wire)]
pub enum Reply {
    #[wire(tag = 0)]
    Challenge(u32),
}

fn main() {}
