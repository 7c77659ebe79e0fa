//! The public API of a library crate, one line per item with its signature, read from the
//! crate's source with `syn`: what other crates can name (the items of public modules and what
//! `lib.rs` and they re-export), each struct's public fields, each enum's variants, each trait's
//! items, the inherent methods and trait implementations of the exported types, with the
//! attributes whose change can break a caller (`derive`, `non_exhaustive`, `cfg`, `repr`).
//!
//! The breaking-change gate compares it with the committed `public-api.txt` of each crate: a
//! line that is gone or changed is a break (a removed item, a changed signature, a lost derive),
//! a new line is an addition.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use quote::ToTokens;
use syn::{Attribute, Item, UseTree, Visibility};

mod render;

use render::{implementation, kept_attrs, render};

/// One module of the crate: its path from the crate root, whether it can be named from outside,
/// and its items.
struct Module {
    path: Vec<String>,
    public: bool,
    items: Vec<Item>,
}

/// The public API of the crate whose `lib.rs` is in `src`, sorted.
pub(crate) fn public_api(src: &Path) -> Result<Vec<String>> {
    let mut modules = Vec::new();
    let lib = src.join("lib.rs");
    let file = parse(&lib)?;
    collect(file.items, Vec::new(), true, (src, src), &mut modules)?;
    let index: BTreeMap<(Vec<String>, String), &Item> = modules
        .iter()
        .flat_map(|m| {
            m.items
                .iter()
                .filter_map(|item| Some(((m.path.clone(), item_name(item)?), item)))
        })
        .collect();
    // Every name a `use` brings into a module (of any visibility), to follow re-exports of
    // re-exports to the item.
    let mut uses: BTreeMap<(Vec<String>, String), String> = BTreeMap::new();
    for module in &modules {
        for item in &module.items {
            if let Item::Use(used) = item {
                let mut leaves = Vec::new();
                use_leaves(&used.tree, String::new(), &mut leaves);
                for (path, alias) in leaves {
                    uses.insert((module.path.clone(), alias), path);
                }
            }
        }
    }
    let found = Found {
        items: &index,
        uses: &uses,
    };
    let mut lines = BTreeSet::new();
    let mut exported = BTreeSet::new();
    for module in modules.iter().filter(|m| m.public) {
        let at = shown(&module.path);
        for item in &module.items {
            if let Item::Use(used) = item {
                if is_pub(&used.vis) {
                    let mut leaves = Vec::new();
                    use_leaves(&used.tree, String::new(), &mut leaves);
                    // A `cfg` on the `use` is part of each name it exports.
                    let cfg = kept_attrs(&used.attrs);
                    for (path, alias) in leaves {
                        exported.insert(alias.clone());
                        let mut rendered = BTreeSet::new();
                        match found.resolve(&module.path, &path, 0) {
                            Some(item) if !matches!(item, Item::Mod(_)) => {
                                render(item, &format!("{at}{alias}"), &mut rendered);
                            }
                            _ => {
                                rendered.insert(format!("{at}{alias}: pub use {path}"));
                            }
                        }
                        lines.extend(rendered.into_iter().map(
                            |line| match line.split_once(": ") {
                                Some((name, rest)) if !cfg.is_empty() => {
                                    format!("{name}: {cfg}{rest}")
                                }
                                _ => line,
                            },
                        ));
                    }
                }
            } else if is_pub_item(item)
                && !matches!(item, Item::Mod(_))
                && let Some(name) = item_name(item)
            {
                exported.insert(name.clone());
                render(item, &format!("{at}{name}"), &mut lines);
            }
        }
    }
    for module in &modules {
        for item in &module.items {
            if let Item::Impl(block) = item {
                implementation(block, &exported, &mut lines);
            }
        }
    }
    Ok(lines.into_iter().collect())
}

fn parse(path: &Path) -> Result<syn::File> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    syn::parse_file(&text).with_context(|| format!("cannot parse {}", path.display()))
}

/// Adds the module of `items` at `path` and its sub-modules (not test modules); `dir` is where
/// its sub-modules' files are, `file_dir` the folder of its own file (`#[path]` is relative to
/// it).
fn collect(
    items: Vec<Item>,
    path: Vec<String>,
    public: bool,
    (dir, file_dir): (&Path, &Path),
    modules: &mut Vec<Module>,
) -> Result<()> {
    let mut kept = Vec::new();
    for item in items {
        let Item::Mod(module) = &item else {
            kept.push(item);
            continue;
        };
        if is_test(&module.attrs) {
            continue;
        }
        let name = module.ident.to_string();
        let mut child = path.clone();
        child.push(name.clone());
        let child_public = public && is_pub(&module.vis);
        let child_dir = dir.join(&name);
        if let Some((_, inline)) = &module.content {
            collect(
                inline.clone(),
                child,
                child_public,
                (&child_dir, file_dir),
                modules,
            )?;
        } else {
            let (file, by_path) = module_file(&module.attrs, dir, file_dir, &name)?;
            let parsed = parse(&file)?;
            let folder = file.parent().unwrap_or(dir).to_path_buf();
            // `name.rs` keeps its sub-modules in `name/`; `mod.rs` and a `#[path]` file beside
            // themselves.
            let is_mod_rs = by_path || file.file_name().is_some_and(|f| f == "mod.rs");
            let sub_dir = if is_mod_rs { folder.clone() } else { child_dir };
            collect(
                parsed.items,
                child,
                child_public,
                (&sub_dir, &folder),
                modules,
            )?;
        }
        kept.push(item);
    }
    modules.push(Module {
        path,
        public,
        items: kept,
    });
    Ok(())
}

/// The file of `mod name;` declared in a module whose sub-modules live in `dir` and whose file
/// is in `file_dir`, and whether `#[path]` named it.
fn module_file(
    attrs: &[Attribute],
    dir: &Path,
    file_dir: &Path,
    name: &str,
) -> Result<(PathBuf, bool)> {
    for attr in attrs {
        if attr.path().is_ident("path")
            && let syn::Meta::NameValue(value) = &attr.meta
            && let syn::Expr::Lit(lit) = &value.value
            && let syn::Lit::Str(text) = &lit.lit
        {
            return Ok((file_dir.join(text.value()), true));
        }
    }
    for candidate in [
        dir.join(format!("{name}.rs")),
        dir.join(name).join("mod.rs"),
    ] {
        if candidate.is_file() {
            return Ok((candidate, false));
        }
    }
    bail!("no file for module `{name}` in {}", dir.display())
}

/// `#[cfg(test)]` or `#[cfg(doctest)]` (not a `cfg(any(test, feature = ...))`, which builds
/// for callers too).
fn is_test(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|attr| {
        let text = attr.meta.to_token_stream().to_string().replace(' ', "");
        attr.path().is_ident("cfg") && (text == "cfg(test)" || text == "cfg(doctest)")
    })
}

fn is_pub(vis: &Visibility) -> bool {
    matches!(vis, Visibility::Public(_))
}

fn is_pub_item(item: &Item) -> bool {
    match item {
        Item::Const(i) => is_pub(&i.vis),
        Item::Enum(i) => is_pub(&i.vis),
        Item::Fn(i) => is_pub(&i.vis),
        Item::Static(i) => is_pub(&i.vis),
        Item::Struct(i) => is_pub(&i.vis),
        Item::Trait(i) => is_pub(&i.vis),
        Item::Type(i) => is_pub(&i.vis),
        Item::Union(i) => is_pub(&i.vis),
        Item::Macro(i) => i.attrs.iter().any(|a| a.path().is_ident("macro_export")),
        _ => false,
    }
}

fn item_name(item: &Item) -> Option<String> {
    Some(match item {
        Item::Const(i) => i.ident.to_string(),
        Item::Enum(i) => i.ident.to_string(),
        Item::Fn(i) => i.sig.ident.to_string(),
        Item::Static(i) => i.ident.to_string(),
        Item::Struct(i) => i.ident.to_string(),
        Item::Trait(i) => i.ident.to_string(),
        Item::Type(i) => i.ident.to_string(),
        Item::Union(i) => i.ident.to_string(),
        Item::Mod(i) => i.ident.to_string(),
        Item::Macro(i) => i.ident.as_ref()?.to_string(),
        _ => return None,
    })
}

fn shown(path: &[String]) -> String {
    path.iter().map(|p| format!("{p}::")).collect()
}

/// Each name a `use` tree brings in: its full path as written and the name it is given.
fn use_leaves(tree: &UseTree, prefix: String, out: &mut Vec<(String, String)>) {
    match tree {
        UseTree::Path(p) => use_leaves(&p.tree, format!("{prefix}{}::", p.ident), out),
        UseTree::Name(n) => out.push((format!("{prefix}{}", n.ident), n.ident.to_string())),
        UseTree::Rename(r) => out.push((format!("{prefix}{}", r.ident), r.rename.to_string())),
        UseTree::Glob(_) => out.push((format!("{prefix}*"), format!("{prefix}*"))),
        UseTree::Group(g) => {
            for tree in &g.items {
                use_leaves(tree, prefix.clone(), out);
            }
        }
    }
}

/// The items of the crate by module and name, and the names its `use`s bring in.
struct Found<'i> {
    items: &'i BTreeMap<(Vec<String>, String), &'i Item>,
    uses: &'i BTreeMap<(Vec<String>, String), String>,
}

impl<'i> Found<'i> {
    /// The item of this crate a `use` path names from module `at`, following `use`s (at most
    /// 16 deep), when it is one.
    fn resolve(&self, at: &[String], path: &str, depth: usize) -> Option<&'i Item> {
        let mut parts: Vec<&str> = path.split("::").collect();
        let name = parts.pop()?.to_owned();
        let mut module: Vec<String> = match parts.first() {
            Some(&"crate") => {
                parts.remove(0);
                Vec::new()
            }
            Some(&"self") => {
                parts.remove(0);
                at.to_vec()
            }
            Some(&"super") => {
                let mut up = at.to_vec();
                while parts.first() == Some(&"super") {
                    parts.remove(0);
                    up.pop();
                }
                up
            }
            // A path relative to the module: one of its own sub-modules.
            _ => at.to_vec(),
        };
        module.extend(parts.iter().map(|p| (*p).to_owned()));
        let key = (module, name);
        if let Some(item) = self.items.get(&key) {
            return Some(*item);
        }
        let next = self.uses.get(&key).filter(|_| depth < 16)?;
        self.resolve(&key.0, next, depth + 1)
    }
}

/// The crates whose API is gated: every folder of `crates/` with a `lib.rs`, but the tests'
/// support crate (never published).
fn gated_crates(root: &Path) -> Result<Vec<PathBuf>> {
    let mut crates = Vec::new();
    for entry in std::fs::read_dir(root.join("crates"))? {
        let dir = entry?.path();
        let name = dir.file_name().unwrap_or_default();
        if dir.join("src/lib.rs").is_file() && name != "agent-test-support" {
            crates.push(dir);
        }
    }
    crates.sort();
    Ok(crates)
}

/// What changed between a committed API and the source's: the breaks (lines gone or changed,
/// and a variant or public field added to an enum or struct a caller can match or build
/// exhaustively: one neither `#[non_exhaustive]` nor with private fields) and the additions.
pub(crate) fn changes(committed: &str, current: &[String]) -> (Vec<String>, Vec<String>) {
    let old: BTreeSet<&str> = committed.lines().collect();
    let new: BTreeSet<&str> = current.iter().map(String::as_str).collect();
    let mut gone: Vec<String> = old.difference(&new).map(|l| (*l).to_owned()).collect();
    let mut added = Vec::new();
    for line in new.difference(&old) {
        if widens_an_exhaustive_type(line, &old) {
            gone.push(format!(
                "{line} (new in a type callers match, build or implement in full)"
            ));
        } else {
            added.push((*line).to_owned());
        }
    }
    (gone, added)
}

/// Whether `line` is a variant or public field of a type that was in the committed API (`old`)
/// and whose head line there says callers can list all of them (no `#[non_exhaustive]`, no
/// private fields); the members of a new type are no break.
fn widens_an_exhaustive_type(line: &str, old: &BTreeSet<&str>) -> bool {
    let line = without_attributes(line);
    // The item's path: up to its fields or its rendering (`Kind::B(u32)`, `Opts.model: u8`).
    let path = line.split([' ', '(']).next().unwrap_or(&line);
    let path = path.strip_suffix(':').unwrap_or(path);
    // A trait's new item without a default must be written by every implementer.
    let required = !line.ends_with("(provided)");
    let owner = match (path.rsplit_once("::"), path.rsplit_once('.')) {
        (_, Some((owner, _))) => owner,
        (Some((owner, variant)), _) if variant.starts_with(char::is_uppercase) => owner,
        (Some((owner, "fn" | "async" | "unsafe" | "type" | "const")), _) if required => {
            return old.iter().any(|head| {
                head.strip_prefix(owner)
                    .and_then(|rest| rest.strip_prefix(": "))
                    .is_some_and(|rest| rest.contains("trait"))
            });
        }
        _ => return false,
    };
    old.iter().any(|head| {
        head.strip_prefix(owner)
            .and_then(|rest| rest.strip_prefix(": "))
            .is_some_and(|rest| {
                (rest.contains("enum") || rest.contains("struct"))
                    && !rest.contains("#[non_exhaustive]")
                    && !rest.contains("(private fields)")
            })
    })
}

/// `line` without its attributes (`#[cfg(...)] `), which may stand before a variant's name.
fn without_attributes(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find("#[") {
        out.push_str(&rest[..start]);
        let mut depth = 0;
        let mut end = rest.len();
        for (i, c) in rest[start..].char_indices() {
            match c {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        end = start + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = rest[end..].trim_start();
    }
    out.push_str(rest);
    out
}

/// Checks every crate's public API against its committed `public-api.txt`, or rewrites those
/// files when `bless`.
///
/// # Errors
///
/// A crate whose API differs, with its breaks and additions, or a source that cannot be read.
pub(crate) fn check(root: &Path, bless: bool) -> Result<()> {
    let mut report = String::new();
    for dir in gated_crates(root)? {
        let current = public_api(&dir.join("src"))?;
        let file = dir.join("public-api.txt");
        let text = current.join("\n") + "\n";
        if bless {
            std::fs::write(&file, &text)?;
            continue;
        }
        let committed = std::fs::read_to_string(&file).unwrap_or_default();
        let (gone, added) = changes(&committed, &current);
        if gone.is_empty() && added.is_empty() {
            continue;
        }
        report.push_str(&format!("\n{}:\n", dir.display()));
        for line in &gone {
            report.push_str(&format!("  breaking (gone or changed): {line}\n"));
        }
        for line in &added {
            report.push_str(&format!("  added: {line}\n"));
        }
    }
    if !report.is_empty() {
        bail!(
            "the public API changed:{report}\nA break needs a MIGRATING.md note and a CHANGELOG.md \
             entry; then `cargo xtask public-api --bless` (or `TIDY_BLESS=1 cargo test -p xtask`) \
             records the new API."
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api_of(lib: &str, files: &[(&str, &str)]) -> Vec<String> {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("public-api-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("lib.rs"), lib).unwrap();
        for (name, text) in files {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let api = public_api(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        api
    }

    const LIB: &str = "pub mod a;\nmod hidden;\npub use hidden::{Options, Kind};\npub use std::sync::Arc;\n\
                       pub fn run(task: &str, limit: u32) -> Option<String> { None }\n\
                       fn private() {}\n#[cfg(test)]\nmod tests;\n";
    const HIDDEN: &str = "#[derive(Debug, Clone)]\n#[non_exhaustive]\npub struct Options { pub model: String, secret: u8 }\n\
                          impl Options { pub fn new(model: &str) -> Self { todo!() } fn inner(&self) {} }\n\
                          impl Default for Options { fn default() -> Self { todo!() } }\n\
                          pub enum Kind { A, B(u32), C { x: i64 } }\npub struct Unexported;\n";

    #[test]
    fn the_api_is_what_other_crates_can_name_with_its_signatures() {
        let api = api_of(
            LIB,
            &[
                (
                    "a.rs",
                    "pub const LIMIT: usize = 3;\npub(crate) fn no() {}\n",
                ),
                ("hidden.rs", HIDDEN),
            ],
        );
        assert_eq!(
            api,
            [
                "Arc: pub use std::sync::Arc",
                "Kind: enum",
                "Kind::A",
                "Kind::B(u32)",
                "Kind::C { x: i64 }",
                "Options.model: String",
                "Options: #[derive(Debug, Clone)] #[non_exhaustive] struct (private fields)",
                "a::LIMIT: const usize",
                "impl Default for Options",
                "impl Options: fn new(model: &str) -> Self",
                "run: fn run(task: &str, limit: u32) -> Option<String>",
            ]
        );
    }

    /// The gate's self-check: a changed signature, a removed variant and a lost derive are
    /// breaks; a new function is an addition.
    #[test]
    fn a_broken_signature_is_a_break_and_a_new_item_an_addition() {
        let files = [("a.rs", ""), ("hidden.rs", HIDDEN)];
        let before = api_of(LIB, &files).join("\n");
        let broken = LIB.replace("limit: u32", "limit: u64") + "pub fn extra() {}\n";
        let hidden = HIDDEN
            .replace("B(u32), ", "")
            .replace("Debug, Clone", "Debug");
        let after = api_of(&broken, &[("a.rs", ""), ("hidden.rs", &hidden)]);
        let (gone, added) = changes(&before, &after);
        assert_eq!(
            gone,
            [
                "Kind::B(u32)",
                "Options: #[derive(Debug, Clone)] #[non_exhaustive] struct (private fields)",
                "run: fn run(task: &str, limit: u32) -> Option<String>",
            ]
        );
        assert!(added.contains(&"extra: fn extra()".to_owned()), "{added:?}");
        // A variant added to an enum callers can match exhaustively is a break.
        let widened = api_of(
            &LIB.replace("pub fn run", "pub enum Open { A, B }\npub fn run"),
            &files,
        );
        let more = api_of(
            &LIB.replace("pub fn run", "pub enum Open { A, B, C }\npub fn run"),
            &files,
        );
        let (breaks, additions) = changes(&widened.join("\n"), &more);
        assert_eq!(
            breaks,
            ["Open::C (new in a type callers match, build or implement in full)"]
        );
        assert!(additions.is_empty(), "{additions:?}");
        // So is a feature-gated one, and a required item added to a trait.
        let gated = api_of(
            &LIB.replace("pub fn run", "pub enum Open { A, B, #[cfg(feature = \"x\")] D }\npub trait T { fn a(&self); }\npub fn run"),
            &files,
        );
        let trait_before = api_of(
            &LIB.replace(
                "pub fn run",
                "pub enum Open { A, B }\npub trait T { fn a(&self); }\npub fn run",
            ),
            &files,
        );
        let with_method = api_of(&LIB.replace("pub fn run", "pub enum Open { A, B }\npub trait T { fn a(&self); fn b(&self); fn c(&self) {} }\npub fn run"), &files);
        let (breaks, _) = changes(&trait_before.join("\n"), &gated);
        assert_eq!(breaks.len(), 1, "{breaks:?}");
        let (breaks, additions) = changes(&trait_before.join("\n"), &with_method);
        assert_eq!(
            breaks,
            ["T::fn b(&self) (new in a type callers match, build or implement in full)"]
        );
        assert_eq!(additions, ["T::fn c(&self) (provided)"]);
        assert!(
            added.contains(&"run: fn run(task: &str, limit: u64) -> Option<String>".to_owned())
        );
        assert_eq!(changes(&before, &api_of(LIB, &files)), (vec![], vec![]));
    }
}
