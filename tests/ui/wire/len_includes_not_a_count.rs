use query_wire::Wire;

#[derive(Wire)]
pub struct Packet<'a> {
    /// `includes` is a byte count: a `usize`.
    #[wire(len(prefix = u8, includes = "itself"), str(rest))]
    pub text: &'a str,
    #[wire(len(prefix = u8, includes = 1, includes = 2), str(rest))]
    pub twice: &'a str,
}

fn main() {}
