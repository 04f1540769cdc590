use query_wire::Wire;

#[derive(Wire)]
#[wire(endian = "big", surplus = "skip")]
pub struct Packet<'a> {
    #[wire(str(prefix = u8, encoding = "ebcdic"))]
    pub name: String,
    #[wire(len(prefix = u16, surplus = "ignore"))]
    pub body: Body,
    #[wire(until_end, max_count = 3)]
    pub rest: &'a [u8],
}

pub struct Body;

fn main() {}
