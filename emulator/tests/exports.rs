//! The stand-in library exports every driver function the course binaries
//! import: they bind all of them at load (BIND_NOW), so one missing symbol
//! stops a binary before `main`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// target/<profile>/, where the course binaries and libemulator.so are.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/..")
        .to_path_buf()
}

fn symbols(path: &Path, which: &str) -> Vec<String> {
    let out = Command::new("nm")
        .args(["-D", which])
        .arg(path)
        .output()
        .expect("nm (binutils) runs");
    assert!(
        out.status.success(),
        "nm {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().last())
        .filter(|name| name.starts_with("cu"))
        .map(|name| name.split('@').next().unwrap_or(name).to_string())
        .collect()
}

#[test]
fn every_driver_function_a_course_binary_imports_is_exported() {
    let dir = profile_dir();
    // `cargo build` copies the library up into target/<profile>/; a plain
    // `cargo test` (the README's test command on a fresh clone) leaves it in
    // deps/, where it is built with the crate.
    let library = ["libemulator.so", "deps/libemulator.so"]
        .iter()
        .map(|name| dir.join(name))
        .find(|path| path.exists())
        .unwrap_or_else(|| panic!("no libemulator.so in {} or its deps/", dir.display()));
    let exported = symbols(&library, "--defined-only");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut checked = 0;
    for group in ["exercises", "solutions"] {
        // A student's copy of the course has no solutions/.
        let Ok(entries) = std::fs::read_dir(root.join(group)) else {
            continue;
        };
        for entry in entries {
            let name = entry
                .expect("directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned();
            let binary = dir.join(if group == "solutions" {
                format!("{name}-solution")
            } else {
                name
            });
            if !binary.exists() {
                continue;
            }
            for import in symbols(&binary, "--undefined-only") {
                assert!(
                    exported.contains(&import),
                    "{} imports {import}, which the emulator lacks",
                    binary.display()
                );
            }
            checked += 1;
        }
    }
    // CI builds every binary first and sets this, so the test cannot pass
    // by finding none.
    if std::env::var_os("CUDA_COURSE_REQUIRE_BINARIES").is_some() {
        assert!(
            checked >= 16,
            "only {checked} course binaries were found in {}",
            dir.display()
        );
    } else if checked == 0 {
        eprintln!(
            "no course binaries built yet in {}: nothing to compare",
            dir.display()
        );
    }
}
