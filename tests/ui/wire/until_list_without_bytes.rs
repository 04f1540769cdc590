use query_wire::Wire;

#[derive(Wire)]
pub struct Packet<'a> {
    #[wire(until, str(nul))]
    pub names: Vec<&'a str>,
}

fn main() {}
