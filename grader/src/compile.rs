//! Builds the scratch workspace: every crate of the class in one cargo run
//! (dependencies compile once, crates build in parallel), then each crate
//! that produced no binary once more on its own, for its errors exactly as
//! the student would see them: nvcc's from the build script, or rustc's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::workspace::Member;

/// One crate's build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Built {
    pub package: String,
    pub binary: Option<PathBuf>,
    /// The kernel's PTX, for inspection: the build script's OUT_DIR.
    pub ptx: Option<PathBuf>,
    /// What cargo said when the crate was built alone, if it failed.
    pub errors: Option<String>,
}

/// Builds `members` of the workspace at `scratch` into `target` (release,
/// offline), `jobs` parallel jobs if given.
pub fn build(
    scratch: &Path,
    target: &Path,
    members: &[Member],
    jobs: Option<usize>,
) -> std::io::Result<Vec<Built>> {
    let mut all = cargo(scratch, target, jobs);
    all.args(["--keep-going", "--message-format=json"]);
    let output = all.output()?;
    let found = artifacts(&String::from_utf8_lossy(&output.stdout));
    let mut built = Vec::new();
    for member in members {
        let binary = found.binaries.get(&member.package).cloned();
        let ptx = found
            .out_dirs
            .get(&member.package)
            .map(|dir| dir.join("kernel.ptx"))
            .filter(|p| p.is_file());
        let errors = if binary.is_some() {
            None
        } else {
            // Alone, so its stderr holds its own errors only; the rest is
            // already built.
            let alone = cargo(scratch, target, jobs)
                .args(["-p", &member.package])
                .output()?;
            Some(String::from_utf8_lossy(&alone.stderr).into_owned())
        };
        built.push(Built {
            package: member.package.clone(),
            binary,
            ptx,
            errors,
        });
    }
    Ok(built)
}

fn cargo(scratch: &Path, target: &Path, jobs: Option<usize>) -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command
        .current_dir(scratch)
        .env("CARGO_TARGET_DIR", target)
        .args(["build", "--release", "--offline", "--bins"]);
    if let Some(jobs) = jobs {
        command.arg(format!("--jobs={jobs}"));
    }
    command
}

/// What a cargo JSON message stream says was built: binaries by package
/// (a bin target is named like its package), build-script output folders
/// by package.
struct Found {
    binaries: BTreeMap<String, PathBuf>,
    out_dirs: BTreeMap<String, PathBuf>,
}

fn artifacts(stream: &str) -> Found {
    let mut found = Found {
        binaries: BTreeMap::new(),
        out_dirs: BTreeMap::new(),
    };
    for message in stream
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
    {
        match message["reason"].as_str() {
            Some("compiler-artifact") => {
                let is_bin = message["target"]["kind"]
                    .as_array()
                    .is_some_and(|k| k.iter().any(|x| x == "bin"));
                if let (true, Some(name), Some(exe)) = (
                    is_bin,
                    message["target"]["name"].as_str(),
                    message["executable"].as_str(),
                ) {
                    found.binaries.insert(name.to_owned(), PathBuf::from(exe));
                }
            }
            Some("build-script-executed") => {
                if let (Some(id), Some(out)) =
                    (message["package_id"].as_str(), message["out_dir"].as_str())
                {
                    found.out_dirs.insert(package_name(id), PathBuf::from(out));
                }
            }
            _ => {}
        }
    }
    found
}

/// The package name in a cargo package id: `path+file:///x/y#name@1.0`, or
/// `path+file:///x/name#1.0` when the folder carries the name.
fn package_name(id: &str) -> String {
    let Some((url, fragment)) = id.rsplit_once('#') else {
        return id.split(' ').next().unwrap_or(id).to_owned();
    };
    match fragment.split_once('@') {
        Some((name, _)) => name.to_owned(),
        None => url.rsplit('/').next().unwrap_or(url).to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_ids_in_both_forms_give_the_name() {
        assert_eq!(
            package_name("path+file:///s/dot-sm/ann#dot-sm--ann@0.1.0"),
            "dot-sm--ann"
        );
        assert_eq!(package_name("path+file:///s/kernels#0.1.0"), "kernels");
        assert_eq!(
            package_name("registry+https://github.com/rust-lang/crates.io-index#cust@0.3.2"),
            "cust"
        );
        assert_eq!(package_name("cust 0.3.2 (registry+https://...)"), "cust");
    }

    #[test]
    fn binaries_and_out_dirs_are_read_from_the_messages() {
        let stream = r#"{"reason":"compiler-artifact","target":{"kind":["bin"],"name":"dot-sm--ann"},"executable":"/t/release/dot-sm--ann"}
{"reason":"compiler-artifact","target":{"kind":["lib"],"name":"kernels"},"executable":null}
{"reason":"build-script-executed","package_id":"path+file:///s/dot-sm/ann#dot-sm--ann@0.1.0","out_dir":"/t/release/build/dot-sm--ann-1/out"}
not json
{"reason":"build-finished","success":false}"#;
        let found = artifacts(stream);
        assert_eq!(found.binaries.len(), 1);
        assert_eq!(
            found.binaries["dot-sm--ann"],
            PathBuf::from("/t/release/dot-sm--ann")
        );
        assert_eq!(
            found.out_dirs["dot-sm--ann"],
            PathBuf::from("/t/release/build/dot-sm--ann-1/out")
        );
    }
}
