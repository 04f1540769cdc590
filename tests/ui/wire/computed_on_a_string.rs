use query_wire::Wire;

#[derive(Wire)]
pub struct Packet<'a> {
    #[wire(str(prefix = u8), computed = 3)]
    pub name: &'a str,
}

fn main() {}
