use query_wire::Wire;

#[derive(Wire)]
pub struct Packet<'a> {
    #[wire(str(until))]
    pub name: &'a str,
}

fn main() {}
