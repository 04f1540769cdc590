//! Which fields an attribute expression (`when`, `count`, `ctx`, `each_ctx`, `computed`) uses.
//!
//! `when`, `count`, `ctx` and `each_ctx` see the fields declared before their own; `computed`
//! sees every field that is not computed itself. The generator binds only the fields an
//! expression names, and a name it may not use is reported here, at that name, rather than as
//! rustc's "cannot find value" in generated code.
//!
//! Names are found by walking the parsed expression (`syn::visit`): a single-segment path is a
//! variable unless a closure parameter, a `let`, a `match` arm or a `for` pattern inside the
//! expression bound it. Macro arguments are read when they parse as expressions.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::punctuated::Punctuated;
use syn::visit::{self, Visit};
use syn::{Expr, Ident, Pat, Token};

use crate::errors::Errors;

/// An attribute expression and the fields it uses (indices into its field list).
#[derive(Clone)]
pub struct Scoped {
    pub expr: TokenStream,
    pub uses: Vec<usize>,
}

/// Which fields an expression on field `current` may name.
#[derive(Clone, Copy)]
pub enum Reach<'c> {
    /// The fields declared before it: they are known when it is read.
    Earlier,
    /// Every field but itself and those marked computed (`computed[i]`): a computed field is
    /// made on encode from the values given, and checked once all fields are decoded.
    NotComputed(&'c [bool]),
}

/// Analyses `expr`, which belongs to field `current` of a struct or variant whose fields are
/// named `names` (in order, as expressions see them). `params` are names the expression binds
/// itself (the index of `each_ctx`).
pub fn scoped(
    expr: &Expr,
    names: &[String],
    current: usize,
    reach: Reach<'_>,
    params: &[String],
    errors: &mut Errors,
) -> Scoped {
    let mut finder = Finder {
        bound: params.to_vec(),
        found: Vec::new(),
    };
    finder.visit_expr(expr);
    let mut uses = Vec::new();
    for ident in finder.found {
        let name = ident.to_string();
        let Some(index) = names.iter().position(|n| *n == name) else {
            continue;
        };
        match refusal(&name, index, current, reach) {
            None => {
                if !uses.contains(&index) {
                    uses.push(index);
                }
            }
            Some(message) => errors.at(ident.span(), message),
        }
    }
    uses.sort_unstable();
    Scoped {
        expr: expr.to_token_stream(),
        uses,
    }
}

/// Why field `index` may not be named from field `current`, if it may not.
fn refusal(name: &str, index: usize, current: usize, reach: Reach<'_>) -> Option<String> {
    match reach {
        Reach::Earlier if index == current => Some(format!(
            "`{name}` is this field itself: an expression can only use the fields declared \
             before it"
        )),
        Reach::Earlier if index > current => Some(format!(
            "`{name}` is declared after this field: an expression can only use the fields \
             declared before it"
        )),
        Reach::Earlier => None,
        Reach::NotComputed(_) if index == current => Some(format!(
            "`{name}` is this field itself: a computed field is made from the other fields"
        )),
        Reach::NotComputed(computed) if computed.get(index).copied().unwrap_or(false) => Some(
            format!("`{name}` is computed too: a computed field is made from fields that are not"),
        ),
        Reach::NotComputed(_) => None,
    }
}

/// The names a pattern binds.
pub fn pattern_names(pat: &Pat) -> Vec<String> {
    let mut binder = Binder(Vec::new());
    binder.visit_pat(pat);
    binder.0
}

struct Binder(Vec<String>);

impl<'ast> Visit<'ast> for Binder {
    fn visit_pat_ident(&mut self, pat: &'ast syn::PatIdent) {
        self.0.push(pat.ident.to_string());
        visit::visit_pat_ident(self, pat);
    }
}

/// Walks an expression collecting the variables it reads, minus the names it binds itself.
struct Finder {
    /// Names bound inside the expression where the walk is now (a stack).
    bound: Vec<String>,
    found: Vec<Ident>,
}

impl Finder {
    /// Visits `f` with the names of `pats` bound, then unbinds them.
    fn with_bound<'p>(
        &mut self,
        pats: impl IntoIterator<Item = &'p Pat>,
        f: impl FnOnce(&mut Self),
    ) {
        let mark = self.bound.len();
        for pat in pats {
            self.bound.extend(pattern_names(pat));
        }
        f(self);
        self.bound.truncate(mark);
    }
}

impl<'ast> Visit<'ast> for Finder {
    fn visit_expr_path(&mut self, expr: &'ast syn::ExprPath) {
        if let (None, Some(ident)) = (&expr.qself, expr.path.get_ident()) {
            if !self.bound.iter().any(|b| ident == b) {
                self.found.push(ident.clone());
            }
        }
        visit::visit_expr_path(self, expr);
    }

    fn visit_expr_closure(&mut self, closure: &'ast syn::ExprClosure) {
        self.with_bound(&closure.inputs, |this| this.visit_expr(&closure.body));
    }

    fn visit_block(&mut self, block: &'ast syn::Block) {
        let mark = self.bound.len();
        for stmt in &block.stmts {
            match stmt {
                syn::Stmt::Local(local) => {
                    if let Some(init) = &local.init {
                        self.visit_local_init(init);
                    }
                    self.bound.extend(pattern_names(&local.pat));
                }
                other => self.visit_stmt(other),
            }
        }
        self.bound.truncate(mark);
    }

    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        self.with_bound([&arm.pat], |this| {
            if let Some((_, guard)) = &arm.guard {
                this.visit_expr(guard);
            }
            this.visit_expr(&arm.body);
        });
    }

    fn visit_expr_for_loop(&mut self, expr: &'ast syn::ExprForLoop) {
        self.visit_expr(&expr.expr);
        self.with_bound([&*expr.pat], |this| this.visit_block(&expr.body));
    }

    fn visit_expr_if(&mut self, expr: &'ast syn::ExprIf) {
        // `if let PAT = e { then }`: the pattern's names are bound in `then` only.
        if let Expr::Let(binding) = &*expr.cond {
            self.visit_expr(&binding.expr);
            self.with_bound([&*binding.pat], |this| this.visit_block(&expr.then_branch));
        } else {
            self.visit_expr(&expr.cond);
            self.visit_block(&expr.then_branch);
        }
        if let Some((_, otherwise)) = &expr.else_branch {
            self.visit_expr(otherwise);
        }
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        if let Ok(args) = mac.parse_body_with(Punctuated::<Expr, Token![,]>::parse_terminated) {
            for arg in &args {
                self.visit_expr(arg);
            }
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

    fn analyse(src: &str, current: usize, reach: Reach<'_>) -> (Vec<usize>, syn::Result<()>) {
        let expr: Expr = syn::parse_str(src).unwrap();
        let mut errors = Errors::default();
        let scoped = scoped(&expr, &names(), current, reach, &[], &mut errors);
        (scoped.uses, errors.finish())
    }

    fn uses(src: &str, current: usize) -> (Vec<usize>, syn::Result<()>) {
        analyse(src, current, Reach::Earlier)
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
    fn methods_paths_and_struct_fields_are_not_variables() {
        let (found, ok) = uses(
            "x.name() + Kind::name + Foo { name: 1 }.flags + foo(1).count",
            3,
        );
        assert!(found.is_empty(), "{found:?}");
        assert!(ok.is_ok());
    }

    #[test]
    fn macro_arguments_are_read() {
        let (found, ok) = uses("format!(\"{}\", name).len() + usize::from(*count)", 3);
        assert_eq!(found, vec![0, 2]);
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
    fn a_later_field_after_a_bitwise_or_is_an_error() {
        let (_, result) = uses("*count | *later", 2);
        let message = result.unwrap_err().to_string();
        assert!(message.contains("`later` is declared after"), "{message}");
    }

    #[test]
    fn names_bound_inside_shadow_fields_only_where_bound() {
        let (_, result) = uses("fields.iter().map(|later| later + 1)", 1);
        assert!(result.is_ok());
        let (_, result) = uses("{ let later = 1; later + 2 }", 1);
        assert!(result.is_ok());
        let (_, result) = uses("match x { Some(later) => later, None => 0 }", 1);
        assert!(result.is_ok());
        // The closure's parameter does not reach past the closure.
        let (_, result) = uses("f(|later| later) + *later", 1);
        assert!(result.is_err());
        let (_, result) = uses("if let Some(later) = x { later } else { *later }", 1);
        assert!(result.is_err());
    }

    #[test]
    fn computed_fields_see_every_field_but_computed_ones() {
        let computed = [false, false, true, false];
        let (found, ok) = analyse("*later + *count", 2, Reach::NotComputed(&computed));
        assert_eq!(found, vec![0, 3]);
        assert!(ok.is_ok());
        let (_, result) = analyse("*name", 2, Reach::NotComputed(&computed));
        assert!(result
            .unwrap_err()
            .to_string()
            .contains("this field itself"));
        let (_, result) = analyse("*name", 0, Reach::NotComputed(&computed));
        assert!(result.unwrap_err().to_string().contains("computed too"));
    }
}
