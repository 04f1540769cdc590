use query_wire::Wire;

#[derive(Wire)]
pub struct Inner {
    pub x: u8,
}

#[derive(Wire)]
pub struct Packet {
    #[wire(view)]
    pub inner: Inner,
}

fn main() {}
