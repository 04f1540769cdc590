use query_wire::Wire;

const PORT: u8 = 0x80;

#[derive(Wire)]
struct NotAnOption {
    #[wire(flags)]
    flags: u8,
    #[wire(flag(flags, PORT))]
    port: u16,
}

#[derive(Wire)]
struct NotMarked {
    flags: u8,
    #[wire(flag(flags, PORT))]
    port: Option<u16>,
}

#[derive(Wire)]
struct Later {
    #[wire(flag(flags, PORT))]
    port: Option<u16>,
    #[wire(flags)]
    flags: u8,
}

#[derive(Wire)]
struct Unused {
    #[wire(flags)]
    flags: u8,
    #[wire(flag(flags, PORT), when = *flags != 0)]
    port: Option<u16>,
    #[wire(flags, computed = 1)]
    other: u8,
}

fn main() {}
