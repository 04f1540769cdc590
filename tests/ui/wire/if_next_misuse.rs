use query_wire::Wire;

#[derive(Wire)]
#[wire(magic = b"\x01")]
pub struct Stray;

#[derive(Wire)]
pub struct NotAnOption {
    #[wire(if_next = b"\x01")]
    pub value: u8,
}

#[derive(Wire)]
pub struct TwoPresences {
    pub flags: u8,
    #[wire(when = *flags > 0, if_next = b"\x01")]
    pub stray: Option<Stray>,
}

fn main() {}
