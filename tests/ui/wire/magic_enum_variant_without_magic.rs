use query_wire::Wire;

#[derive(Wire)]
pub enum Request {
    #[wire(magic = b"getstatus")]
    Status,
    Info,
    #[wire(magic = 7)]
    Ping,
}

fn main() {}
