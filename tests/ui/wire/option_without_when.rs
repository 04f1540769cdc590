use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    pub flags: u8,
    pub extra: Option<u16>,
}

fn main() {}
