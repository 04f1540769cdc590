use query_wire::Wire;

#[derive(Wire)]
struct AfterText<'a> {
    #[wire(str(nul))]
    name: &'a str,
    // The name's length varies, so this field has no fixed place.
    #[wire(range)]
    port: u16,
}

#[derive(Wire)]
struct Itself<'a> {
    #[wire(range, str(nul))]
    name: &'a str,
}

#[derive(Wire)]
#[wire(tag = u8)]
enum Kinds {
    #[wire(tag = 1)]
    One {
        #[wire(range)]
        id: u32,
    },
}

fn main() {}
