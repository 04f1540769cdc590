use query_wire::Wire;

#[derive(Wire)]
pub struct Packet<'a> {
    #[wire(count(prefix = u8), until_nul, str(nul))]
    pub values: Vec<&'a str>,
}

fn main() {}
