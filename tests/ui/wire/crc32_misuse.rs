use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    /// A CRC32 is a u32.
    #[wire(crc32(after))]
    pub narrow: u16,
    /// Written from the bytes it covers, so never computed from fields too.
    #[wire(crc32(before), computed = 1)]
    pub both: u32,
    #[wire(crc32(middle))]
    pub unknown_span: u32,
    #[wire(crc32)]
    pub no_span: u32,
}

fn main() {}
