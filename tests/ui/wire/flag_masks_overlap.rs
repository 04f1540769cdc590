use query_wire::Wire;

// Two fields announced by the same bit could not be told apart.
#[derive(Wire)]
struct Extra {
    #[wire(flags)]
    flags: u8,
    #[wire(flag(flags, 0x80))]
    port: Option<u16>,
    #[wire(flag(flags, 0x80 | 0x01))]
    game: Option<u64>,
}

fn main() {}
