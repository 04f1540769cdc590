use query_wire::Wire;

#[derive(Wire)]
pub struct Request {
    #[wire(trailing)]
    pub challenge: Option<u32>,
    pub kind: u8,
    #[wire(trailing)]
    pub count: u16,
    #[wire(trailing, when = *kind == 1)]
    pub extra: Option<u8>,
}

fn main() {}
