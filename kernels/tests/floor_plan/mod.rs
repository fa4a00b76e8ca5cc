//! A crate's import graph, read from its source: each file a module, each
//! `crate::` and `super::` path outside comments an edge to the module it
//! names (the longest known prefix; grouped imports give each of theirs).
//! A module's bare paths to its own children are its inside, not edges.
//! Shared by kernels' and the emulator's `tests/layers.rs`
//! (`#[path = "../../kernels/tests/floor_plan/mod.rs"]`), which order the
//! modules into layers; `find_cycle` is the no-circle rule for both.

#![allow(dead_code, reason = "each layers test uses its own part of it")]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// Every .rs file of the crate at `manifest_dir`, by its path relative to
/// its src/.
pub fn crate_sources(manifest_dir: &str) -> BTreeMap<String, String> {
    let root = Path::new(manifest_dir).join("src");
    let mut files = BTreeMap::new();
    sources(&root, &root, &mut files);
    files
}

/// A made-up crate for a layers test's own tests: (path, source) pairs.
pub fn plan(files: &[(&str, &str)]) -> BTreeMap<String, String> {
    files
        .iter()
        .map(|(path, code)| (path.to_string(), code.to_string()))
        .collect()
}

/// Every .rs file under `dir`, by its path relative to `root`, with `/`.
pub fn sources(root: &Path, dir: &Path, into: &mut BTreeMap<String, String>) {
    for entry in fs::read_dir(dir).expect("the source folder reads") {
        let path = entry.expect("a folder entry reads").path();
        if path.is_dir() {
            sources(root, &path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(root).expect("under the root");
            let relative = relative.to_string_lossy().replace('\\', "/");
            into.insert(relative, fs::read_to_string(&path).expect("a source reads"));
        }
    }
}

/// The module a file is, as a `::` path: `dot/driver.rs` gives
/// `dot::driver`, `dot.rs` and `dot/mod.rs` give `dot`, `lib.rs` the root
/// (`""`).
pub fn module_of(path: &str) -> String {
    let path = path.trim_end_matches(".rs");
    let path = path.strip_suffix("/mod").unwrap_or(path);
    if path == "lib" {
        String::new()
    } else {
        path.replace('/', "::")
    }
}

/// The module `path` names, against the crate's `modules`: its longest
/// prefix that is one (`""` when it names an item at the root).
pub fn resolve(path: &[String], modules: &BTreeSet<String>) -> String {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|prefix| modules.contains(prefix))
        .unwrap_or_default()
}

/// Every path `code` (the module `module`'s file) writes from `crate::` or
/// `super::`, as full segment lists from the crate's root. Inside an inline
/// module (`mod tests {`), `super` is the file's own module.
pub fn paths(module: &str, code: &str) -> Vec<Vec<String>> {
    let own: Vec<String> = module
        .split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    // The brace depth, and where each inline module open now started.
    let mut depth = 0usize;
    let mut inline_at: Vec<usize> = Vec::new();
    let mut found = Vec::new();
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or_default();
        let words: Vec<&str> = line.split_whitespace().collect();
        if line.trim_end().ends_with('{') && words.iter().rev().nth(2) == Some(&"mod") {
            inline_at.push(depth);
        }
        depth += line.matches('{').count();
        depth = depth.saturating_sub(line.matches('}').count());
        let inline = !inline_at.is_empty();
        while inline_at.last().is_some_and(|&at| depth <= at) {
            inline_at.pop();
        }
        let mut rest = line;
        while let Some(at) = next_root(rest) {
            let (base, after) = if let Some(after) = rest[at..].strip_prefix("crate::") {
                (Vec::new(), after)
            } else {
                let mut after = &rest[at..];
                let mut base = if inline { own.clone() } else { parent(&own) };
                after = after.strip_prefix("super::").unwrap_or(after);
                while let Some(more) = after.strip_prefix("super::") {
                    base = parent(&base);
                    after = more;
                }
                (base, after)
            };
            let (taken, trees) = use_tree(after);
            for tail in trees {
                let mut path = base.clone();
                path.extend(tail.into_iter().filter(|s| s != "self"));
                found.push(path);
            }
            rest = &after[taken.max(1).min(after.len())..];
        }
    }
    found
}

/// Where the next `crate::` or `super::` starting a path is in `text`.
fn next_root(text: &str) -> Option<usize> {
    let crate_at = find_word(text, "crate::");
    let super_at = find_word(text, "super::");
    match (crate_at, super_at) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// `word` in `text` where it starts a path (not inside an identifier).
fn find_word(text: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = text[from..].find(word) {
        let at = from + at;
        let before = text[..at].chars().next_back();
        if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

fn parent(path: &[String]) -> Vec<String> {
    path[..path.len().saturating_sub(1)].to_vec()
}

/// The use tree at the start of `text` (`a::b`, `a::{b, c::{d, self}}`,
/// `{a, b}`): how many bytes it takes and each path it names.
fn use_tree(text: &str) -> (usize, Vec<Vec<String>>) {
    let mut at = 0;
    let mut segments = Vec::new();
    loop {
        let rest = &text[at..];
        if let Some(inner) = rest.strip_prefix('{') {
            let end = closing(inner);
            let mut paths = Vec::new();
            for item in split_top_level(&inner[..end]) {
                let item = item.trim();
                for tail in use_tree(item).1 {
                    let mut path = segments.clone();
                    path.extend(tail);
                    paths.push(path);
                }
            }
            return (at + end + 2, paths);
        }
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if len == 0 {
            return (at, vec![segments]);
        }
        segments.push(rest[..len].to_owned());
        at += len;
        match text[at..].strip_prefix("::") {
            Some(_) => at += 2,
            None => return (at, vec![segments]),
        }
    }
}

/// The index in `inner` of the brace that closes the one before it.
fn closing(inner: &str) -> usize {
    let mut depth = 1;
    for (i, c) in inner.char_indices() {
        depth += match c {
            '{' => 1,
            '}' => -1,
            _ => 0,
        };
        if depth == 0 {
            return i;
        }
    }
    inner.len()
}

fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

/// The import graph of `files` (path -> source): each module's edges to
/// the modules it names, and the modules whose files name an item at the
/// crate's root (`crate::Thing`, not `crate::module::Thing`).
pub struct Graph {
    pub modules: BTreeSet<String>,
    pub edges: BTreeMap<String, BTreeSet<String>>,
    pub root_items: Vec<(String, String)>,
}

pub fn graph(files: &BTreeMap<String, String>) -> Graph {
    let modules: BTreeSet<String> = files.keys().map(|p| module_of(p)).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut root_items = Vec::new();
    for (path, code) in files {
        let module = module_of(path);
        for named in paths(&module, code) {
            let to = resolve(&named, &modules);
            if to.is_empty() && !module.is_empty() {
                root_items.push((path.clone(), named.join("::")));
            } else if to != module && !to.is_empty() && !is_inside(&module, &to) {
                edges.entry(module.clone()).or_default().insert(to);
            }
        }
    }
    Graph {
        modules,
        edges,
        root_items,
    }
}

/// Whether `inner` is `outer` or one of its descendants.
fn is_inside(outer: &str, inner: &str) -> bool {
    inner
        .strip_prefix(outer)
        .is_some_and(|rest| rest.starts_with("::"))
}

/// A cycle of the graph, if it has one, as the modules round it.
pub fn find_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &String,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.clone());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.clone());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.clone());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|node| visit(node, edges, &mut Vec::new(), &mut done))
}

/// The lines of a file that only names modules (a `mod.rs`, a crate root)
/// that do more: anything but comments, attributes, `mod` and `pub use`.
pub fn logic_lines(code: &str) -> Vec<String> {
    code.lines()
        .map(str::trim)
        .filter(|l| {
            !(l.is_empty()
                || l.starts_with("//")
                || l.starts_with("#[")
                || l.starts_with("pub mod ")
                || l.starts_with("mod ")
                || l.starts_with("pub use "))
        })
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modules(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn paths_and_groups_resolve_to_modules() {
        let known = modules(&[
            "exec",
            "exec::memory",
            "exec::memory::access",
            "ir",
            "driver",
        ]);
        let code = "use super::access::{Place, ThreadMemory};\n\
                    use crate::{ir::{Kernel, fixed}, driver::codes::{self, X}};\n\
                    // use crate::driver::fault;\n\
                    fn f() { super::super::launch::go(); crate::Thing::new(); }\n";
        let found: Vec<String> = paths("exec::memory::taint", code)
            .iter()
            .map(|p| resolve(p, &known))
            .collect();
        assert_eq!(
            found,
            [
                "exec::memory::access",
                "exec::memory::access",
                "ir",
                "ir",
                "driver",
                "driver",
                "exec",
                ""
            ]
        );
    }

    #[test]
    fn inside_an_inline_module_super_is_the_file() {
        let code = "pub mod fixed {\n    use super::Reg;\n}\nuse super::launch;\n\
                    #[cfg(test)]\nmod tests {\n    use super::*;\n}\n";
        assert_eq!(
            paths("exec::race", code),
            [
                vec!["exec", "race", "Reg"],
                vec!["exec", "launch"],
                vec!["exec", "race"]
            ]
        );
    }

    #[test]
    fn a_cycle_is_found_and_a_tree_has_none() {
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        edges.entry("a".into()).or_default().insert("b".into());
        edges.entry("b".into()).or_default().insert("c".into());
        assert_eq!(find_cycle(&edges), None);
        edges.entry("c".into()).or_default().insert("a".into());
        assert_eq!(find_cycle(&edges).unwrap(), ["a", "b", "c", "a"]);
    }
}
