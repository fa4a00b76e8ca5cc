//! The public course: what the student's build may read where no sandbox
//! hides the rest. It is the course as students are given it
//! (`scripts/student-copy.sh`'s crates: `kernels` without its tests of
//! correct kernels in other styles, `ptx`, `course`, `emulator`,
//! `exercises`), with `tracer/` (the course's library, no answer in it)
//! and a `solutions/` whose every crate holds its stub's sources: `grader
//! build` builds the course's solutions for its reference binaries, and
//! builds these instead, which the trusted bundle's real ones then replace
//! (`stages`). No solution, no grader and no test of the grader is in it.

use std::fs;
use std::path::Path;

use crate::error::{Error, Result};

/// The folders copied whole, but for [`LEFT_OUT`].
const TAKEN: [&str; 9] = [
    ".cargo",
    "kernels",
    "ptx",
    "course",
    "emulator",
    "tracer",
    "broker",
    "broker-client",
    "exercises",
];

/// What of them stays out: correct kernels in other styles (answers).
const LEFT_OUT: [&str; 2] = ["kernels/tests/ptx_styles", "kernels/tests/stub_drift.rs"];

/// Writes the public course of `course` into `to` (a fresh folder).
pub fn write(course: &Path, to: &Path) -> Result<()> {
    if to.exists() {
        fs::remove_dir_all(to).map_err(Error::io(to))?;
    }
    fs::create_dir_all(to).map_err(Error::io(to))?;
    for file in ["Cargo.toml", "Cargo.lock"] {
        copy_file(&course.join(file), &to.join(file))?;
    }
    for folder in TAKEN {
        copy_tree(course, Path::new(folder), to)?;
    }
    // Each solution crate: its own manifest and build script (identical to
    // the stub's, `stub_drift`), the stub's sources.
    let solutions = course.join("solutions");
    for entry in fs::read_dir(&solutions).map_err(Error::io(&solutions))? {
        let entry = entry.map_err(Error::io(&solutions))?;
        let name = entry.file_name();
        let stub = course.join("exercises").join(&name);
        if !entry.path().join("Cargo.toml").is_file() || !stub.is_dir() {
            continue;
        }
        let into = to.join("solutions").join(&name);
        copy_file(&entry.path().join("Cargo.toml"), &into.join("Cargo.toml"))?;
        copy_file(&stub.join("build.rs"), &into.join("build.rs"))?;
        copy_tree(&stub, Path::new("src"), &into)?;
    }
    // The tracer's and the broker's tests use the grader, which is not in
    // the public course: their builds do not.
    for crate_dir in ["tracer", "broker"] {
        let manifest = to.join(crate_dir).join("Cargo.toml");
        let text = fs::read_to_string(&manifest).map_err(Error::io(&manifest))?;
        let kept: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with("grader = "))
            .collect();
        fs::write(&manifest, kept.join("\n") + "\n").map_err(Error::io(&manifest))?;
        same_time(&course.join(crate_dir).join("Cargo.toml"), &manifest)?;
    }
    // The workspace without the grader (not in the public course).
    let manifest = to.join("Cargo.toml");
    let text = fs::read_to_string(&manifest).map_err(Error::io(&manifest))?;
    let members = "members = [\"kernels\", \"ptx\", \"tracer\", \"course\", \"emulator\", \
                   \"broker\", \"broker-client\", \"exercises/*\", \"solutions/*\"]";
    let rewritten: Vec<String> = text
        .lines()
        .map(|line| {
            if line.starts_with("members = ") {
                members.to_owned()
            } else {
                line.to_owned()
            }
        })
        .collect();
    if !text.lines().any(|l| l.starts_with("members = ")) {
        return Err(Error::Tool(format!(
            "{} has no `members = ` line to rewrite",
            manifest.display()
        )));
    }
    fs::write(&manifest, rewritten.join("\n") + "\n").map_err(Error::io(&manifest))?;
    same_time(&course.join("Cargo.toml"), &manifest)
}

/// Copies a file with its modification time: the grader rebuilds the
/// dependencies when the course's files change time, and a setup run
/// again must not make them change.
fn copy_file(from: &Path, to: &Path) -> Result<()> {
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent).map_err(Error::io(parent))?;
    }
    fs::copy(from, to).map_err(Error::io(from))?;
    same_time(from, to)
}

/// Gives `to` the modification time of `from`.
pub fn same_time(from: &Path, to: &Path) -> Result<()> {
    let time = fs::metadata(from)
        .and_then(|m| m.modified())
        .map_err(Error::io(from))?;
    fs::File::options()
        .write(true)
        .open(to)
        .and_then(|f| f.set_modified(time))
        .map_err(Error::io(to))
}

/// Copies `from/relative` to `to/relative`: files and folders, no links,
/// nothing under `target/` or `.git/`, nothing [`LEFT_OUT`].
fn copy_tree(from: &Path, relative: &Path, to: &Path) -> Result<()> {
    let walk = walkdir::WalkDir::new(from.join(relative))
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name();
            let inside = e.path().strip_prefix(from).unwrap_or(e.path());
            name != "target" && name != ".git" && !LEFT_OUT.iter().any(|l| inside == Path::new(l))
        });
    for entry in walk {
        let entry = entry.map_err(|err| Error::Io {
            path: err.path().unwrap_or(from).to_owned(),
            source: err.into(),
        })?;
        let inside = entry.path().strip_prefix(from).unwrap_or(entry.path());
        if entry.file_type().is_dir() {
            fs::create_dir_all(to.join(inside)).map_err(Error::io(&to.join(inside)))?;
        } else if entry.file_type().is_file() {
            copy_file(entry.path(), &to.join(inside))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_public_course_holds_every_stub_and_no_solution() {
        let course = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let public = dir.path().join("course");
        write(course, &public).unwrap();
        for exercise in kernels::catalogue::EXERCISES {
            let stub = course.join("exercises").join(exercise.name).join("src");
            let solution = course.join("solutions").join(exercise.name).join("src");
            let standing_in = public.join("solutions").join(exercise.name).join("src");
            for file in ["kernel.cu", "main.rs"] {
                let shown = fs::read(standing_in.join(file)).unwrap();
                assert_eq!(
                    shown,
                    fs::read(stub.join(file)).unwrap(),
                    "{}",
                    exercise.name
                );
                assert_ne!(
                    shown,
                    fs::read(solution.join(file)).unwrap(),
                    "{}",
                    exercise.name
                );
            }
        }
        assert!(!public.join("grader").exists());
        assert!(!public.join("kernels/tests/ptx_styles").exists());
        assert!(public.join("tracer/Cargo.toml").is_file());
        let manifest = fs::read_to_string(public.join("Cargo.toml")).unwrap();
        assert!(manifest.contains("\"solutions/*\"]") && !manifest.contains("\"grader\""));
        // No file of the public course is a solution's, byte for byte.
        let solutions: Vec<Vec<u8>> = walkdir::WalkDir::new(course.join("solutions"))
            .into_iter()
            .flatten()
            .filter(|e| {
                e.file_type().is_file() && e.path().components().any(|c| c.as_os_str() == "src")
            })
            .map(|e| fs::read(e.path()).unwrap())
            .collect();
        for entry in walkdir::WalkDir::new(&public).into_iter().flatten() {
            if entry.file_type().is_file() {
                let bytes = fs::read(entry.path()).unwrap();
                assert!(
                    !solutions.contains(&bytes),
                    "{} is a solution's",
                    entry.path().display()
                );
            }
        }
    }
}
