use query_wire::Wire;

#[derive(Wire)]
pub struct Packet<'a> {
    #[wire(until(b"\r\n", or_eof), str(nul))]
    pub names: Vec<&'a str>,
}

fn main() {}
