use query_wire::Wire;

#[derive(Wire)]
#[wire(tag = u16, len = u16)]
pub enum Entry<'a> {
    #[wire(tag = 1)]
    Name(#[wire(str(prefix = u8))] &'a str),
    #[wire(other)]
    Unknown(u16, &'a [u8]),
    #[wire(other)]
    AlsoUnknown(u16, &'a [u8]),
}

fn main() {}
