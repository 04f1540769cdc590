use query_wire::Wire;

#[derive(Wire)]
#[wire(tag = f32)]
pub enum Reply {
    #[wire(tag = 0)]
    Challenge(u32),
}

fn main() {}
