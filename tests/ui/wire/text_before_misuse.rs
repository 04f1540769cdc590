use query_wire::Wire;

#[derive(Wire)]
pub struct Part<'a> {
    /// One end only: `until` reads the terminator, `before` leaves it.
    #[wire(bytes(until = b'\n', before = b'\n'))]
    pub both: &'a [u8],
    /// `before` needs its bytes.
    #[wire(str(before))]
    pub bare: &'a str,
}

fn main() {}
