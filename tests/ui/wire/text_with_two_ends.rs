use query_wire::Wire;

#[derive(Wire)]
pub struct Packet<'a> {
    #[wire(str(rest, nul))]
    pub name: &'a str,
    #[wire(bytes(nul, prefix = u8))]
    pub data: &'a [u8],
}

fn main() {}
