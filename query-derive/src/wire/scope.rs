//! Which fields an attribute expression (`when`, `count`, `ctx`, `each_ctx`) uses.
//!
//! An expression sees the fields declared before its own, by reference, and the container's
//! context bindings. The generator binds only the earlier fields the expression names, and a
//! name of the field itself or of a later one is reported here, at that name, rather than as
//! rustc's "cannot find value" in generated code.
//!
//! Names are found by a token scan, not by resolving the expression: an identifier counts as a
//! variable unless it is a method or field after `.`, a path segment, a macro name, a called
//! function, or a closure parameter. A false hit only binds an unused reference.

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use quote::ToTokens;
use syn::Ident;

use super::errors::Errors;

/// An attribute expression and the earlier fields it uses (indices into its field list).
#[derive(Clone)]
pub struct Scoped {
    pub expr: TokenStream,
    pub uses: Vec<usize>,
}

/// Analyses `expr`, which belongs to field `current` of a struct or variant whose fields are
/// named `names` (in order, as expressions see them). `params` are names the expression binds
/// itself (the index of `each_ctx`).
pub fn scoped(
    expr: &impl ToTokens,
    names: &[String],
    current: usize,
    params: &[String],
    errors: &mut Errors,
) -> Scoped {
    let expr = expr.to_token_stream();
    let mut found = Vec::new();
    variables(expr.clone(), &mut found);
    let closure_params: Vec<String> = found
        .iter()
        .filter(|(_, after_pipe)| *after_pipe)
        .map(|(ident, _)| ident.to_string())
        .collect();
    let mut uses = Vec::new();
    for (ident, _) in found {
        let name = ident.to_string();
        let Some(index) = names.iter().position(|n| *n == name) else {
            continue;
        };
        if index < current {
            if !uses.contains(&index) {
                uses.push(index);
            }
        } else if !closure_params.contains(&name) && !params.contains(&name) {
            let message = if index == current {
                format!(
                    "`{name}` is this field itself: an expression can only use the fields \
                     declared before it"
                )
            } else {
                format!(
                    "`{name}` is declared after this field: an expression can only use the \
                     fields declared before it"
                )
            };
            errors.at(ident.span(), message);
        }
    }
    uses.sort_unstable();
    Scoped { expr, uses }
}

/// Collects the identifiers of `tokens` that can be variables, each with whether it directly
/// follows a `|` (a closure parameter, or the right side of a bitwise or: either way the name
/// is not reported, since a closure parameter shadows the field everywhere in the expression).
fn variables(tokens: TokenStream, out: &mut Vec<(Ident, bool)>) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, tree) in trees.iter().enumerate() {
        match tree {
            TokenTree::Group(group) => variables(group.stream(), out),
            TokenTree::Ident(ident) => {
                let prev = i.checked_sub(1).map(|j| &trees[j]);
                let prev2 = i.checked_sub(2).map(|j| &trees[j]);
                let next = trees.get(i + 1);
                let is_punct = |tree: Option<&TokenTree>, c: char| matches!(tree, Some(TokenTree::Punct(p)) if p.as_char() == c);
                // `.name` is a member, but `..name` is a range bound.
                let member = (is_punct(prev, '.') && !is_punct(prev2, '.')) || is_punct(prev, '\'');
                let path_tail = is_punct(prev, ':') && is_punct(prev2, ':');
                let path_head_or_label = is_punct(next, ':');
                // `name!(..)` is a macro, but `name != ..` a comparison.
                let macro_name = matches!(
                    next,
                    Some(TokenTree::Punct(p)) if p.as_char() == '!' && p.spacing() == Spacing::Alone
                );
                let call = matches!(next, Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis);
                if !(member || path_tail || path_head_or_label || macro_name || call) {
                    out.push((ident.clone(), is_punct(prev, '|')));
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        ["count", "flags", "name", "later"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn uses(src: &str, current: usize) -> (Vec<usize>, syn::Result<()>) {
        let expr: syn::Expr = syn::parse_str(src).unwrap();
        let mut errors = Errors::default();
        let scoped = scoped(&expr, &names(), current, &[], &mut errors);
        (scoped.uses, errors.finish())
    }

    #[test]
    fn earlier_fields_are_found_once() {
        let (found, ok) = uses(
            "*count > 0 && flags.contains(Flags::count) && *count != 9",
            3,
        );
        assert_eq!(found, vec![0, 1]);
        assert!(ok.is_ok());
        let (found, ok) = uses("(0..name.len()).map(|i| i as u8)", 3);
        assert_eq!(found, vec![2]);
        assert!(ok.is_ok());
    }

    #[test]
    fn methods_paths_and_macros_are_not_variables() {
        let (found, ok) = uses(
            "x.name() + name!(1) + Kind::name + Foo { name: 1 }.flags",
            3,
        );
        assert!(found.is_empty(), "{found:?}");
        assert!(ok.is_ok());
    }

    #[test]
    fn later_fields_and_the_field_itself_are_errors() {
        let (_, result) = uses("*later > 0", 2);
        let message = result.unwrap_err().to_string();
        assert!(
            message.contains("`later` is declared after this field"),
            "{message}"
        );
        let (_, result) = uses("name.len()", 2);
        assert!(result
            .unwrap_err()
            .to_string()
            .contains("this field itself"));
    }

    #[test]
    fn closure_parameters_shadow_later_fields() {
        let (_, result) = uses("fields.iter().map(|later| later + 1)", 1);
        assert!(result.is_ok());
    }
}
