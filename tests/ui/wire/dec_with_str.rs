use query_wire::Wire;

#[derive(Wire)]
pub struct Packet {
    #[wire(dec(until = b' '), str(nul))]
    pub score: i32,
}

fn main() {}
