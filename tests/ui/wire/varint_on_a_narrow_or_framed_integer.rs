use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    /// Only u32, u64, i32 and i64 have a VarInt form.
    #[wire(varint)]
    pub small: u16,
    /// A varint has no byte order.
    #[wire(varint, endian = "little")]
    pub id: i32,
    #[wire(varint(5))]
    pub valued: u32,
}

fn main() {}
