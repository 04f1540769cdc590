use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    /// Teeworlds packs `int`s: only i32, and u32 for numbers never negative.
    #[wire(packed_int)]
    pub wide: i64,
    /// A packed integer has no byte order.
    #[wire(packed_int, endian = "little")]
    pub token: i32,
    /// One framing per integer.
    #[wire(varint, packed_int)]
    pub both: u32,
    /// A packed integer is a number, not text.
    #[wire(packed_int, dec(nul))]
    pub text: i32,
}

fn main() {}
