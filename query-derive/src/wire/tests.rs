//! Expansion snapshots: the pretty-printed code the derive emits for representative types.

fn expand(src: &str) -> String {
    let input: syn::DeriveInput = syn::parse_str(src).expect("test input parses");
    let tokens = super::expand(&input).unwrap_or_else(|e| panic!("derive failed: {e}"));
    let file: syn::File = syn::parse2(tokens).expect("expansion parses");
    prettyplease::unparse(&file)
}

#[test]
fn debug_print() {
    println!(
        "{}",
        expand(
            r#"
#[wire(endian = "little")]
pub struct Request<'a> {
    pub family: Family,
    pub kind: u8,
    #[wire(when = *kind != KIND_CHALLENGE)]
    pub query: Option<Query<'a>>,
}
"#
        )
    );
}
