use query_wire::Wire;

#[derive(Wire)]
pub struct Line<'a> {
    /// One terminator is written without brackets.
    #[wire(str(until = [b"\n"]))]
    pub alone: &'a str,
    /// An empty one would end the text before its first byte.
    #[wire(bytes(until = [b"\n", b""]))]
    pub empty: &'a [u8],
    /// The same one twice.
    #[wire(until([b'\n', b"\n"], or_end), bytes(until = b' '))]
    pub twice: Vec<&'a [u8]>,
    /// Only bytes, byte strings and constants.
    #[wire(bytes(until = [b"\n", "\0"]))]
    pub text: &'a [u8],
}

fn main() {}
