use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    pub flags: u8,
    #[wire(when = *flags)]
    pub extra: Option<u16>,
}

fn main() {}
