use query_wire::Wire;

#[derive(Wire)]
pub struct Packet<'a> {
    #[wire(str(quoted, until = b' '))]
    pub name: &'a str,
}

fn main() {}
