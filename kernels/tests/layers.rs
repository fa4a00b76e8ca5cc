//! kernels' floor plan holds: its modules sit in the layers `lib.rs` names
//! by feature (standard library only, then `protocol`, `runtime`,
//! `testing`), and none uses a module of a layer after its own; no two
//! modules import each other round a circle; a module names another
//! module, never an item `lib.rs` re-exports (`crate::Gpu`), so the root
//! stays a list of modules, which is all it holds. Read from the source,
//! every `crate::` and `super::` path outside comments counting, tests
//! included.

#[path = "floor_plan/mod.rs"]
mod floor_plan;

use std::collections::BTreeMap;

use floor_plan::{crate_sources, find_cycle, graph, logic_lines, module_of, plan};

/// The layers from the bottom up: a module of one may use its own and
/// those before it.
const LAYERS: [&str; 4] = ["std", "protocol", "runtime", "testing"];

/// Each module's layer: the feature its `mod` line (or its parent's) is
/// behind, `std` where none is.
fn layers(files: &BTreeMap<String, String>) -> BTreeMap<String, usize> {
    let mut declared: BTreeMap<String, usize> = BTreeMap::new();
    for (path, code) in files {
        let parent = module_of(path);
        let mut feature = None;
        for line in code.lines().map(str::trim) {
            if let Some(rest) = line.strip_prefix("#[cfg(feature = \"") {
                feature = rest.split('"').next().map(str::to_owned);
                continue;
            }
            let name = line
                .strip_prefix("pub mod ")
                .or_else(|| line.strip_prefix("mod "))
                .and_then(|rest| rest.strip_suffix(';'));
            if let Some(name) = name {
                let layer = feature
                    .as_deref()
                    .and_then(|f| LAYERS.iter().position(|l| *l == f))
                    .unwrap_or(0);
                let module = if parent.is_empty() {
                    name.to_owned()
                } else {
                    format!("{parent}::{name}")
                };
                declared.insert(module, layer);
            }
            if !line.starts_with("#[") {
                feature = None;
            }
        }
    }
    // A module is in its own layer or its parent's, whichever is later.
    files
        .keys()
        .map(|path| {
            let module = module_of(path);
            let mut layer = 0;
            let mut prefix = String::new();
            for part in module.split("::").filter(|p| !p.is_empty()) {
                prefix = if prefix.is_empty() {
                    part.to_owned()
                } else {
                    format!("{prefix}::{part}")
                };
                layer = layer.max(declared.get(&prefix).copied().unwrap_or(0));
            }
            (module, layer)
        })
        .collect()
}

/// What is wrong with a floor plan of `files`; empty when nothing is.
fn problems(files: &BTreeMap<String, String>) -> Vec<String> {
    let layer_of = layers(files);
    let graph = graph(files);
    let mut problems = Vec::new();
    for (path, item) in &graph.root_items {
        problems.push(format!(
            "{path}: names crate::{item}, an item of lib.rs: name the module that has it"
        ));
    }
    if let Some(root) = files.get("lib.rs") {
        for line in logic_lines(root) {
            problems.push(format!(
                "lib.rs: holds more than modules and re-exports: {line}"
            ));
        }
    }
    for (from, targets) in &graph.edges {
        for to in targets {
            let (own, theirs) = (layer_of[from], layer_of[to]);
            if theirs > own {
                problems.push(format!(
                    "{from} ({}) uses {to}, of the later layer {}",
                    LAYERS[own], LAYERS[theirs]
                ));
            }
        }
    }
    if let Some(cycle) = find_cycle(&graph.edges) {
        problems.push(format!("an import circle: {}", cycle.join(" -> ")));
    }
    problems
}

#[test]
fn kernels_modules_import_down_their_layers_and_round_no_circle() {
    let files = crate_sources(env!("CARGO_MANIFEST_DIR"));
    assert!(files.len() > 30, "{:?}", files.keys());
    let found = problems(&files);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn a_circle_a_later_layer_and_a_root_item_are_each_caught() {
    let files = plan(&[
        (
            "lib.rs",
            "pub mod wire;\n#[cfg(feature = \"runtime\")]\npub mod gpu;\n\
             pub use gpu::Gpu;\npub const X: u32 = 1;\n",
        ),
        (
            "wire.rs",
            "use crate::gpu::Gpu;\nfn f() -> u32 { crate::X }\n",
        ),
        ("gpu.rs", "use crate::wire;\n"),
    ]);
    let found = problems(&files);
    assert_eq!(found.len(), 4, "{found:#?}");
    assert!(
        found[0].starts_with("wire.rs: names crate::X"),
        "{}",
        found[0]
    );
    assert!(found[1].starts_with("lib.rs: holds more"), "{}", found[1]);
    assert_eq!(found[2], "wire (std) uses gpu, of the later layer runtime");
    assert_eq!(found[3], "an import circle: gpu -> wire -> gpu");
}

#[test]
fn a_child_module_is_in_its_parent_s_layer() {
    let files = plan(&[
        (
            "lib.rs",
            "#[cfg(feature = \"protocol\")]\npub mod dot;\npub mod units;\n",
        ),
        (
            "dot.rs",
            "#[cfg(feature = \"runtime\")]\npub mod driver;\npub mod golden;\n",
        ),
        ("dot/golden.rs", "fn sum() {}\n"),
        ("dot/driver.rs", "use super::golden;\n"),
        ("units.rs", "use crate::dot::golden;\n"),
    ]);
    assert_eq!(
        problems(&files),
        ["units (std) uses dot::golden, of the later layer protocol"]
    );
}
