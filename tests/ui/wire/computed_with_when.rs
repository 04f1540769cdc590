use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    pub flags: u8,
    #[wire(when = *flags > 0, computed = values.count())]
    pub count: Option<u8>,
    #[wire(until_end)]
    pub values: Vec<u8>,
}

fn main() {}
