use query_wire::Wire;

#[derive(Wire)]
struct Part {
    // Four bits do not fill an integer.
    #[wire(bit_width = 4)]
    number: u8,
    tail: u8,
}

#[derive(Wire)]
struct Signed {
    #[wire(bit_width = 4)]
    low: i8,
    #[wire(bit_width = 9)]
    high: u8,
}

#[derive(Wire)]
struct Framed {
    #[wire(bit_width = 8, len = u8)]
    whole: u8,
}

fn main() {}
