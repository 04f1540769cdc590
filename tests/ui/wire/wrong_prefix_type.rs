use query_wire::Wire;

#[derive(Wire)]
pub struct Packet<'a> {
    #[wire(str(prefix = u12))]
    pub name: &'a str,
    #[wire(bytes(prefix = usize))]
    pub data: &'a [u8],
}

fn main() {}
