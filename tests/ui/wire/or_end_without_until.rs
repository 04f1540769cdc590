use query_wire::Wire;

#[derive(Wire)]
pub struct Packet<'a> {
    #[wire(str(nul, or_end))]
    pub name: &'a str,
}

fn main() {}
