//! The grader's floor plan holds: every module of grader/src lives in a room
//! listed in [`ROOMS`], no module names one in a room below its own (the
//! pipeline runs one way), no two modules import each other round a cycle,
//! and a room's `mod.rs` only names its modules. Read from the source, every
//! `crate::` path outside comments counting, tests included. And the judge
//! starts nothing: of the room that makes the runs it names only what a
//! made run is ([`JUDGE_READS_FROM_RUN`]), never what makes one.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// The rooms from the bottom up: each may use those before it, never one
/// after. A file at the top of grader/src is a room of its own.
const ROOMS: &[&str] = &[
    "atomic_file",
    "error",
    "bounded",
    "plan",
    "discover",
    "confine",
    "build",
    "record",
    "run",
    "judge",
    "grade",
    "platform",
    "instructor",
];

/// All that `judge/` may name in `run/`: what a made run is, never what
/// makes one (`job::make`, the lanes, batches, the tools, the bench). The
/// dispatcher (`grade::exercise`) decides which runs are made and has
/// `run::bench` make them; the judge turns what came back into verdicts
/// and points.
const JUDGE_READS_FROM_RUN: &[&str] = &["job::Job", "job::Made", "trace::Trace"];

/// The binary's own files: the top, above every room.
const BINARY: &[&str] = &["main.rs", "cli.rs", "terminal.rs"];

/// A module: its room and its name within it ("" for a room's `mod.rs` or
/// a top-level file).
type Module = (String, String);

/// Every `crate::` path in `code` as (first, second) segments, comments
/// left out; grouped imports (`crate::{a::b, c}`) give each of theirs.
fn crate_paths(code: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or_default();
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let (taken, paths) = path_or_group(after);
            found.extend(paths);
            rest = &after[taken..];
        }
    }
    found
}

/// The path or brace group at the start of `text`: how many bytes it takes
/// and its paths' first two segments.
fn path_or_group(text: &str) -> (usize, Vec<(String, String)>) {
    if let Some(inner) = text.strip_prefix('{') {
        let end = group_end(inner);
        let mut paths = Vec::new();
        for item in split_top_level(&inner[..end]) {
            let item = item.trim();
            let (first, rest) = item.split_once("::").unwrap_or((item, ""));
            let second = match rest.strip_prefix('{') {
                // `a::{b, c}`: each of b and c.
                Some(group) => {
                    for name in split_top_level(group.trim_end_matches('}')) {
                        paths.push((first.to_owned(), segment(name.trim())));
                    }
                    continue;
                }
                None => segment(rest),
            };
            paths.push((segment(first), second));
        }
        return (end + 2, paths);
    }
    let taken = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(text.len());
    let path = &text[..taken];
    let (first, rest) = path.split_once("::").unwrap_or((path, ""));
    (taken, vec![(segment(first), segment(rest))])
}

/// Where the group whose opening brace came just before `inner` closes: the
/// index of its closing brace, or the end.
fn group_end(inner: &str) -> usize {
    let mut depth = 1;
    inner
        .char_indices()
        .find(|&(_, c)| {
            depth += match c {
                '{' => 1,
                '}' => -1,
                _ => 0,
            };
            depth == 0
        })
        .map_or(inner.len(), |(i, _)| i)
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

/// The first segment of a path: `runs::Run` gives `runs`.
fn segment(path: &str) -> String {
    path.split("::")
        .next()
        .unwrap_or_default()
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// The module a `crate::first::second` path names.
fn target(first: &str, second: &str, rooms: &BTreeSet<String>) -> Module {
    if rooms.contains(first) {
        (first.to_owned(), second.to_owned())
    } else {
        (first.to_owned(), String::new())
    }
}

/// What is wrong with a floor plan of `files` (path relative to grader/src,
/// source), rooms ordered by `order`; empty when nothing is.
fn problems(files: &BTreeMap<String, String>, order: &[&str]) -> Vec<String> {
    let rank = |room: &str| order.iter().position(|r| *r == room);
    let rooms: BTreeSet<String> = files
        .keys()
        .filter_map(|path| path.split_once('/').map(|(room, _)| room.to_owned()))
        .collect();
    let mut problems = Vec::new();
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (path, code) in files {
        if BINARY.contains(&path.as_str()) || path == "lib.rs" {
            continue;
        }
        let module: Module = match path.split_once('/') {
            Some((room, file)) => (
                room.to_owned(),
                file.trim_end_matches(".rs")
                    .trim_end_matches("mod")
                    .trim_end_matches('/')
                    .to_owned(),
            ),
            None => (path.trim_end_matches(".rs").to_owned(), String::new()),
        };
        let Some(own) = rank(&module.0) else {
            problems.push(format!(
                "{path}: the room {} is not in the floor plan (tests/layers.rs ROOMS)",
                module.0
            ));
            continue;
        };
        if path.ends_with("/mod.rs") {
            let logic = code
                .lines()
                .map(str::trim)
                .find(|l| !(l.is_empty() || l.starts_with("//") || l.starts_with("pub mod ")));
            if let Some(line) = logic {
                problems.push(format!("{path}: a mod.rs only names its modules: {line}"));
            }
        }
        if code.contains("super::super") {
            problems.push(format!("{path}: names a module through super::super"));
        }
        for (first, second) in crate_paths(code) {
            let to = target(&first, &second, &rooms);
            match rank(&to.0) {
                None => problems.push(format!("{path}: crate::{first} is in no room")),
                Some(theirs) if theirs > own => problems.push(format!(
                    "{path}: imports crate::{first}::{second}, from the room {} above its \
                     own ({})",
                    to.0, module.0
                )),
                Some(_) => {
                    if to != module {
                        edges.entry(module.clone()).or_default().insert(to);
                    }
                }
            }
        }
    }
    if let Some(cycle) = find_cycle(&edges) {
        let names: Vec<String> = cycle
            .iter()
            .map(|(room, module)| format!("{room}::{module}"))
            .collect();
        problems.push(format!("an import cycle: {}", names.join(" -> ")));
    }
    problems
}

/// Every path `code` names under `crate::<room>::`, in full (`job::Job`;
/// `job::{self, Job}` gives `job::self` and `job::Job`), comments left out
/// and groups over several lines read whole.
fn paths_under(code: &str, room: &str) -> Vec<String> {
    let code: Vec<&str> = code
        .lines()
        .map(|l| l.split("//").next().unwrap_or_default())
        .collect();
    let code = code.join(" ");
    let prefix = format!("crate::{room}::");
    let mut found = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find(&prefix) {
        let after = &rest[at + prefix.len()..];
        let (taken, paths) = use_tree(after);
        found.extend(paths);
        rest = &after[taken..];
    }
    found
}

/// The use tree at the start of `text` (a path, or a group in braces): how
/// many bytes it takes and the full paths it names.
fn use_tree(text: &str) -> (usize, Vec<String>) {
    if let Some(inner) = text.strip_prefix('{') {
        let end = group_end(inner);
        let paths = split_top_level(&inner[..end])
            .into_iter()
            .flat_map(|item| use_tree(item.trim()).1)
            .collect();
        return (end + 2, paths);
    }
    let mut taken = 0;
    let mut segments = Vec::new();
    loop {
        let rest = &text[taken..];
        let length = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        segments.push(&rest[..length]);
        taken += length;
        if text[taken..].starts_with("::{") {
            let (group, paths) = use_tree(&text[taken + 2..]);
            let prefix = segments.join("::");
            let paths = paths.into_iter().map(|p| format!("{prefix}::{p}"));
            return (taken + 2 + group, paths.collect());
        }
        match text[taken..].strip_prefix("::") {
            Some(_) => taken += 2,
            None => return (taken, vec![segments.join("::")]),
        }
    }
}

/// What `judge/`'s files in `files` name in `run/` beyond
/// [`JUDGE_READS_FROM_RUN`].
fn judge_reaches(files: &BTreeMap<String, String>) -> Vec<String> {
    let mut problems = Vec::new();
    for (path, code) in files.iter().filter(|(p, _)| p.starts_with("judge/")) {
        for named in paths_under(code, "run") {
            if !JUDGE_READS_FROM_RUN.contains(&named.as_str()) {
                problems.push(format!(
                    "{path}: names crate::run::{named}; the judge starts nothing and reads of \
                     run/ only {JUDGE_READS_FROM_RUN:?} (tests/layers.rs)"
                ));
            }
        }
    }
    problems
}

/// A cycle of the graph, if it has one, as the modules round it.
fn find_cycle(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Option<Vec<Module>> {
    fn visit(
        node: &Module,
        edges: &BTreeMap<Module, BTreeSet<Module>>,
        path: &mut Vec<Module>,
        done: &mut BTreeSet<Module>,
    ) -> Option<Vec<Module>> {
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

/// Every .rs file under `dir`, by its path relative to `root`.
fn sources(root: &Path, dir: &Path, into: &mut BTreeMap<String, String>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(root, &path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(root).unwrap().to_string_lossy();
            into.insert(relative.into_owned(), fs::read_to_string(&path).unwrap());
        }
    }
}

#[test]
fn the_grader_s_rooms_import_only_downwards_and_round_no_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    sources(&root, &root, &mut files);
    assert!(files.len() > 20, "{files:?}");
    let found = problems(&files, ROOMS);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_judge_names_nothing_in_run_that_makes_a_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    sources(&root, &root, &mut files);
    assert!(files.keys().any(|p| p.starts_with("judge/")), "{files:?}");
    let found = judge_reaches(&files);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn a_judge_that_could_make_a_run_is_caught_in_any_form_of_import() {
    let files = plan(&[
        (
            "judge/run.rs",
            "// crate::run::lane::Lane in a comment\nuse crate::run::job::{Job, Made};\n\
             use crate::run::trace::Trace;\n",
        ),
        ("judge/ok.rs", "fn f(t: &crate::run::trace::Trace) {}\n"),
        (
            "judge/points.rs",
            "use crate::run::{\n    job::{self, Job},\n    lane::Lane,\n};\n\
             fn f() { crate::run::bench::ending(x) }\n",
        ),
        ("grade/exercise.rs", "use crate::run::lane::Lane;\n"),
    ]);
    let found = judge_reaches(&files);
    let named: Vec<&str> = found
        .iter()
        .map(|p| {
            p.split("names crate::run::")
                .nth(1)
                .unwrap()
                .split(';')
                .next()
                .unwrap()
        })
        .collect();
    assert_eq!(
        named,
        ["job::self", "lane::Lane", "bench::ending"],
        "{found:?}"
    );
    assert!(
        found.iter().all(|p| p.starts_with("judge/points.rs: ")),
        "{found:?}"
    );
}

fn plan(files: &[(&str, &str)]) -> BTreeMap<String, String> {
    files
        .iter()
        .map(|(path, code)| (path.to_string(), code.to_string()))
        .collect()
}

#[test]
fn an_import_from_a_room_above_is_caught() {
    let files = plan(&[
        ("plan/runs.rs", "use crate::record::results::Run;\n"),
        ("record/results.rs", "use crate::plan::runs;\n"),
    ]);
    let found = problems(&files, &["plan", "record"]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("plan/runs.rs: imports crate::record::results"));
}

#[test]
fn a_cycle_inside_a_room_is_caught() {
    let files = plan(&[
        (
            "build/bundle.rs",
            "fn f() { crate::build::compile::go() }\n",
        ),
        (
            "build/compile.rs",
            "use crate::{build::{bundle, digest}};\n",
        ),
    ]);
    let found = problems(&files, &["build"]);
    assert_eq!(
        found,
        ["an import cycle: build::bundle -> build::compile -> build::bundle"]
    );
}

#[test]
fn comments_do_not_count_and_unknown_rooms_and_logic_in_mod_rs_do() {
    let files = plan(&[
        ("plan/runs.rs", "// see crate::record::results\n"),
        ("record/results.rs", "use crate::plan::runs;\n"),
        ("extra/thing.rs", "\n"),
        ("plan/mod.rs", "//! Plans.\npub mod runs;\nfn helper() {}\n"),
    ]);
    let found = problems(&files, &["plan", "record"]);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].starts_with("extra/thing.rs: the room extra"));
    assert!(found[1].starts_with("plan/mod.rs: a mod.rs only names"));
}
