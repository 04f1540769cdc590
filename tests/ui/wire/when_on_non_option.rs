use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    pub flags: u8,
    #[wire(when = *flags > 0)]
    pub extra: u16,
}

fn main() {}
