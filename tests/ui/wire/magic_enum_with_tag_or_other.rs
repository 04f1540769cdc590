use query_wire::Wire;

#[derive(Wire)]
#[wire(tag = u8, len = u16)]
pub enum Request<'a> {
    #[wire(magic = b"getstatus", tag = 1)]
    Status,
    #[wire(magic = b"x", other)]
    Unknown(u8, &'a [u8]),
}

fn main() {}
