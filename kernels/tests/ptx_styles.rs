//! The catalogue's PTX needs, judged by meaning, on kernels written in many
//! styles (kernels/tests/ptx_styles/*.cu: cooperative groups, warp
//! shuffles, `__syncwarp` tails, `__syncthreads_or`, inline PTX, atomics of
//! other types and scopes, compare-and-swap loops, vector loads) as each
//! nvcc compiled them (one folder per nvcc, made by scripts/ptx-styles.sh):
//! a correct kernel meets every need of its exercise, and each wrong one
//! lacks exactly the need its first line names. Each PTX file starts with
//! its source's digest: PTX older than its source fails here.

use std::fs;
use std::path::{Path, PathBuf};

use kernels::catalogue;
use sha2::{Digest, Sha256};

/// The first line scripts/ptx-styles.sh writes, before the source's digest.
const STAMP: &str = "// ptx-style source sha256 ";

fn styles() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ptx_styles")
}

/// The `// expect:` line of a source: the needs it lacks, by meaning
/// (`DataFrom(Global)`), none for `every need`.
fn expected(source: &Path) -> Vec<String> {
    let text = fs::read_to_string(source).unwrap();
    let line = text.lines().next().unwrap_or_default();
    let expect = line
        .strip_prefix("// expect: ")
        .unwrap_or_else(|| panic!("{}: the first line says what to expect", source.display()));
    match expect.strip_prefix("lacks ") {
        Some(needs) => needs.split(", ").map(str::to_owned).collect(),
        None => {
            assert_eq!(expect, "every need", "{}", source.display());
            Vec::new()
        }
    }
}

fn sources() -> Vec<PathBuf> {
    let mut sources: Vec<PathBuf> = fs::read_dir(styles())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .collect();
    sources.sort();
    sources
}

fn compilers() -> Vec<PathBuf> {
    let mut folders: Vec<PathBuf> = fs::read_dir(styles())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    folders
}

#[test]
fn every_style_meets_its_exercises_needs_and_every_wrong_one_lacks_its_own() {
    let mut judged = 0;
    for folder in compilers() {
        for source in sources() {
            let stem = source.file_stem().unwrap().to_string_lossy().into_owned();
            let ptx = folder.join(format!("{stem}.ptx"));
            let Ok(text) = fs::read_to_string(&ptx) else {
                // Every source compiled by the course's own nvcc; another
                // nvcc's folder may be older than the newest source.
                assert!(
                    !folder.ends_with("nvcc11.8"),
                    "{} is missing",
                    ptx.display()
                );
                continue;
            };
            let digest = format!("{:x}", Sha256::digest(fs::read(&source).unwrap()));
            assert_eq!(
                text.lines().next().and_then(|l| l.strip_prefix(STAMP)),
                Some(digest.as_str()),
                "{} was compiled from another {stem}.cu: run scripts/ptx-styles.sh",
                ptx.display()
            );
            let name = stem.split('.').next().unwrap();
            let exercise =
                catalogue::find(name).unwrap_or_else(|| panic!("{stem}: no exercise {name}"));
            let module =
                ptx::parser::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", ptx.display()));
            let lacking: Vec<String> = exercise
                .ptx
                .iter()
                .filter(|need| need.missing_in(&module).is_some())
                .map(|need| format!("{:?}", need.shows))
                .collect();
            assert_eq!(lacking, expected(&source), "{}", ptx.display());
            judged += 1;
        }
    }
    assert!(judged >= sources().len(), "only {judged} PTX files judged");
}

#[test]
fn every_wrong_style_is_told_what_it_lacks_with_its_line() {
    // Reading another space names the load and its kernel.cu line.
    let ptx = styles().join("nvcc11.8/memspace-timing.global-reads-constant.ptx");
    let module = ptx::parser::parse(&fs::read_to_string(ptx).unwrap()).unwrap();
    let memspace = catalogue::find("memspace-timing").unwrap();
    let said: Vec<String> = memspace
        .ptx
        .iter()
        .filter_map(|n| n.missing_in(&module))
        .collect();
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains("constant memory (ld.const.f32, kernel.cu line"),
        "{}",
        said[0]
    );
}
