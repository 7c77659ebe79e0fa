//! How each kind of public item is written as lines of the API: signatures from the tokens of
//! the source, with the spacing Rust code is read with.

use std::collections::BTreeSet;

use quote::ToTokens;
use syn::{Attribute, Fields, ImplItem, Item, TraitItem};

use super::{is_pub, is_test};

/// The attributes a caller depends on, as written.
pub(super) fn kept_attrs(attrs: &[Attribute]) -> String {
    attrs
        .iter()
        .filter(|a| {
            ["derive", "non_exhaustive", "cfg", "repr"]
                .iter()
                .any(|name| a.path().is_ident(name))
        })
        .map(|a| format!("{} ", one_line(&a.to_token_stream().to_string())))
        .collect()
}

/// Token text with the spaces `quote` puts between tokens taken out where Rust puts none.
fn one_line(tokens: &str) -> String {
    let mut text = tokens.split_whitespace().collect::<Vec<_>>().join(" ");
    for (from, to) in [
        (" ,", ","),
        (" ;", ";"),
        (" :: ", "::"),
        (":: ", "::"),
        (" ::", "::"),
        (" :", ":"),
        ("( ", "("),
        (" )", ")"),
        ("[ ", "["),
        (" ]", "]"),
        (" < ", "<"),
        ("< ", "<"),
        (" >", ">"),
        ("& ", "&"),
        ("# [", "#["),
        (" (", "("),
        ("! [", "!["),
        ("' ", "'"),
        (",)", ")"),
        (",>", ">"),
        (", }", " }"),
    ] {
        text = text.replace(from, to);
    }
    text
}

fn tokens(item: &impl ToTokens) -> String {
    one_line(&item.to_token_stream().to_string())
}

/// The lines of one exported item named `name`.
pub(super) fn render(item: &Item, name: &str, lines: &mut BTreeSet<String>) {
    match item {
        Item::Fn(f) => {
            lines.insert(format!(
                "{name}: {}{}",
                kept_attrs(&f.attrs),
                tokens(&f.sig)
            ));
        }
        Item::Struct(s) => {
            let head = format!(
                "{name}: {}struct{}",
                kept_attrs(&s.attrs),
                tokens(&s.generics)
            );
            let private = fields(&s.fields, name, lines);
            lines.insert(if private {
                format!("{head} (private fields)")
            } else {
                head
            });
        }
        Item::Enum(e) => {
            lines.insert(format!(
                "{name}: {}enum{}",
                kept_attrs(&e.attrs),
                tokens(&e.generics)
            ));
            for variant in &e.variants {
                // Each field as `name: Type` (its documentation is no part of the API).
                let field = |f: &syn::Field| match &f.ident {
                    Some(name) => format!("{}{name}: {}", kept_attrs(&f.attrs), tokens(&f.ty)),
                    None => format!("{}{}", kept_attrs(&f.attrs), tokens(&f.ty)),
                };
                let list = |fields: &syn::punctuated::Punctuated<syn::Field, syn::Token![,]>| {
                    fields.iter().map(field).collect::<Vec<_>>().join(", ")
                };
                let shape = match &variant.fields {
                    Fields::Unit => String::new(),
                    Fields::Named(fields) => format!(" {{ {} }}", list(&fields.named)),
                    Fields::Unnamed(fields) => format!("({})", list(&fields.unnamed)),
                };
                lines.insert(format!(
                    "{name}::{}{}{shape}",
                    kept_attrs(&variant.attrs),
                    variant.ident
                ));
            }
        }
        Item::Trait(t) => {
            let bounds = if t.supertraits.is_empty() {
                String::new()
            } else {
                format!(": {}", tokens(&t.supertraits))
            };
            lines.insert(format!(
                "{name}: {}trait{}{bounds}",
                kept_attrs(&t.attrs),
                tokens(&t.generics)
            ));
            for member in &t.items {
                let text = match member {
                    TraitItem::Fn(f) => {
                        let default = if f.default.is_some() {
                            " (provided)"
                        } else {
                            ""
                        };
                        format!("{}{default}", tokens(&f.sig))
                    }
                    TraitItem::Type(t) => format!("type {}{}", t.ident, tokens(&t.bounds)),
                    TraitItem::Const(c) => format!("const {}: {}", c.ident, tokens(&c.ty)),
                    _ => continue,
                };
                lines.insert(format!("{name}::{text}"));
            }
        }
        Item::Const(c) => {
            lines.insert(format!("{name}: const {}", tokens(&c.ty)));
        }
        Item::Static(s) => {
            lines.insert(format!("{name}: static {}", tokens(&s.ty)));
        }
        Item::Type(t) => {
            lines.insert(format!(
                "{name}: type{} = {}",
                tokens(&t.generics),
                tokens(&t.ty)
            ));
        }
        Item::Union(u) => {
            lines.insert(format!("{name}: union{}", tokens(&u.generics)));
        }
        Item::Macro(_) => {
            lines.insert(format!("{name}: macro_rules!"));
        }
        _ => {}
    }
}

/// Adds a line per public field; true when some field is not public.
fn fields(fields: &Fields, name: &str, lines: &mut BTreeSet<String>) -> bool {
    let mut private = false;
    for (index, field) in fields.iter().enumerate() {
        if !is_pub(&field.vis) {
            private = true;
            continue;
        }
        let label = field
            .ident
            .as_ref()
            .map_or_else(|| index.to_string(), ToString::to_string);
        lines.insert(format!(
            "{name}.{label}: {}{}",
            kept_attrs(&field.attrs),
            tokens(&field.ty)
        ));
    }
    private
}

/// The lines of an `impl` block for an exported type: its public methods and constants, or
/// the trait it implements.
pub(super) fn implementation(
    block: &syn::ItemImpl,
    exported: &BTreeSet<String>,
    lines: &mut BTreeSet<String>,
) {
    let syn::Type::Path(self_type) = &*block.self_ty else {
        return;
    };
    let Some(last) = self_type.path.segments.last() else {
        return;
    };
    if !exported.contains(&last.ident.to_string()) || is_test(&block.attrs) {
        return;
    }
    let generics = tokens(&block.generics);
    let self_text = tokens(&block.self_ty);
    if let Some((negative, trait_path, _)) = &block.trait_ {
        let not = if negative.is_some() { "!" } else { "" };
        lines.insert(format!(
            "impl{generics} {not}{} for {self_text}",
            tokens(trait_path)
        ));
        return;
    }
    for member in &block.items {
        match member {
            ImplItem::Fn(f) if is_pub(&f.vis) => {
                lines.insert(format!(
                    "impl{generics} {self_text}: {}{}",
                    kept_attrs(&f.attrs),
                    tokens(&f.sig)
                ));
            }
            ImplItem::Const(c) if is_pub(&c.vis) => {
                lines.insert(format!(
                    "impl{generics} {self_text}: const {}: {}",
                    c.ident,
                    tokens(&c.ty)
                ));
            }
            _ => {}
        }
    }
}
