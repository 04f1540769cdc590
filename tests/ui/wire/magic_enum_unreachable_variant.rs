use query_wire::Wire;

#[derive(Wire)]
pub enum LineEnd {
    #[wire(magic = b"\n")]
    Newline,
    #[wire(magic = b"\n\0")]
    NewlineNul,
    #[wire(magic = b"\n")]
    Again,
}

fn main() {}
