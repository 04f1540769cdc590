use query_wire::Wire;

#[derive(Wire)]
pub struct Packet<'a> {
    #[wire(until_nul(or_eof), str(nul))]
    pub values: Vec<&'a str>,
}

fn main() {}
