//! The emulator's floor plan holds: every module of emulator/src lives in
//! a layer listed in [`LAYERS`], no module names one in a layer above its
//! own (values and memory never reach the scheduler, nothing in the
//! executor reaches the driver, the IR reaches nothing of the executor's
//! but values), no two modules import each other round a circle, and
//! `lib.rs` and each `mod.rs` only name their modules. Read from the
//! source, every `crate::` and `super::` path outside comments counting,
//! tests included (the reader is kernels' `tests/floor_plan`).

#[path = "../../kernels/tests/floor_plan/mod.rs"]
mod floor_plan;

use std::collections::BTreeMap;

use floor_plan::{crate_sources, find_cycle, graph, logic_lines, module_of, plan};

/// The layers from the bottom up, as module paths: each may use those
/// before it, never one after. A module is in the longest layer its path
/// starts with.
const LAYERS: &[&str] = &[
    // The emulated device's limits and its memory.
    "device",
    "heap",
    // The register machine kernels are decoded to.
    "ir",
    // What instructions compute: below the decoder, which picks them.
    "exec::value",
    // PTX to the register machine, and a loaded module.
    "decode",
    "module",
    // The executor, bottom up: typed faults, the memory model, the
    // scheduler, a launch.
    "exec::error",
    "exec::memory",
    "exec::schedule",
    "exec::launch",
    // The C ABI: the one place faults become CUDA codes and words.
    "driver",
];

/// The layer of `module`: the index of the longest layer it is or is in.
fn layer_of(module: &str, layers: &[&str]) -> Option<usize> {
    layers
        .iter()
        .enumerate()
        .filter(|(_, layer)| {
            module == **layer
                || module
                    .strip_prefix(**layer)
                    .is_some_and(|rest| rest.starts_with("::"))
        })
        .max_by_key(|(_, layer)| layer.len())
        .map(|(i, _)| i)
}

/// Files that only name modules: the crate's root and each `mod.rs`.
fn names_modules_only(path: &str) -> bool {
    path == "lib.rs" || path.ends_with("/mod.rs")
}

/// What is wrong with a floor plan of `files` (path relative to
/// emulator/src, source), layers ordered by `layers`; empty when nothing
/// is.
fn problems(files: &BTreeMap<String, String>, layers: &[&str]) -> Vec<String> {
    let graph = graph(files);
    let mut problems = Vec::new();
    for (path, code) in files {
        if names_modules_only(path) {
            for line in logic_lines(code) {
                problems.push(format!("{path}: only names its modules, yet holds: {line}"));
            }
        } else if layer_of(&module_of(path), layers).is_none() {
            problems.push(format!(
                "{path}: in no layer of the floor plan (tests/layers.rs LAYERS)"
            ));
        }
    }
    for (path, item) in &graph.root_items {
        problems.push(format!("{path}: names crate::{item}, which is no module"));
    }
    for (from, targets) in &graph.edges {
        let Some(own) = layer_of(from, layers) else {
            continue;
        };
        for to in targets {
            match layer_of(to, layers) {
                Some(theirs) if theirs > own => problems.push(format!(
                    "{from} ({}) uses {to}, of the layer {} above it",
                    layers[own], layers[theirs]
                )),
                Some(_) => {}
                None => problems.push(format!("{from} uses {to}, which is in no layer")),
            }
        }
    }
    if let Some(cycle) = find_cycle(&graph.edges) {
        problems.push(format!("an import circle: {}", cycle.join(" -> ")));
    }
    problems
}

#[test]
fn the_emulator_s_layers_import_only_downwards_and_round_no_circle() {
    let files = crate_sources(env!("CARGO_MANIFEST_DIR"));
    assert!(files.len() > 30, "{:?}", files.keys());
    let found = problems(&files, LAYERS);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_executor_picking_a_cuda_code_is_caught() {
    let files = plan(&[
        ("exec/launch.rs", "use crate::driver::codes::CuResult;\n"),
        ("driver/codes.rs", "pub type CuResult = u32;\n"),
    ]);
    assert_eq!(
        problems(&files, &["exec::launch", "driver"]),
        ["exec::launch (exec::launch) uses driver::codes, of the layer driver above it"]
    );
}

#[test]
fn a_circle_inside_a_layer_is_caught() {
    let files = plan(&[
        ("exec/memory/access.rs", "use super::global_load::Recent;\n"),
        (
            "exec/memory/global_load.rs",
            "use super::{access::{Place, ThreadMemory}};\n",
        ),
    ]);
    assert_eq!(
        problems(&files, &["exec::memory"]),
        [
            "an import circle: exec::memory::access -> exec::memory::global_load -> \
             exec::memory::access"
        ]
    );
}

#[test]
fn logic_in_a_mod_rs_and_a_module_in_no_layer_are_caught() {
    let files = plan(&[
        (
            "exec/mod.rs",
            "//! The executor.\npub mod value;\nfn helper() {}\n",
        ),
        ("exec/value/int.rs", "// see crate::driver\n"),
        ("extra.rs", "\n"),
    ]);
    let found = problems(&files, &["exec::value"]);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].starts_with("exec/mod.rs: only names its modules"));
    assert!(found[1].starts_with("extra.rs: in no layer"));
}
