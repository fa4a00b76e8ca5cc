//! A student's workspace, as the grader builds it: one crate per exercise,
//! each the course's crate with the student's files laid over it (see
//! `overlay`) under the exercise's own name, depending on the course's
//! `kernels` by path. Every student's workspace looks alike to cargo, so
//! the dependencies built once serve them all. It starts from the course's
//! Cargo.lock: build it with `--offline` but not `--locked`, so cargo keeps
//! every dependency's version.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::discover::overlay::{self, Taken};

/// One crate of the scratch workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub student: String,
    pub exercise: String,
    /// Package and binary name: the exercise's.
    pub package: String,
    pub dir: PathBuf,
}

/// What to put in the workspace: a student's taken files for an exercise.
#[derive(Clone, Copy)]
pub struct Entry<'a> {
    pub student: &'a str,
    pub exercise: &'a str,
    pub taken: &'a [Taken],
}

/// Writes the workspace under `scratch` for `entries` (one student's, or
/// the course's own with nothing taken), from the course at `course` (the
/// folder of its root Cargo.toml), whose manifest names the course at
/// `course_seen` (where cargo finds it: the sandbox binds it elsewhere).
/// Each crate keeps its exercise's name, so every student's workspace
/// looks alike to cargo. An existing workspace is updated in place:
/// unchanged files keep their times, so cargo rebuilds only the crates
/// whose sources changed, and crates no longer wanted are removed.
pub fn create(
    course: &Path,
    course_seen: &Path,
    scratch: &Path,
    entries: &[Entry],
) -> std::io::Result<Vec<Member>> {
    fs::create_dir_all(scratch)?;
    let course = course.canonicalize()?;
    let mut members = Vec::new();
    let mut wanted = BTreeSet::new();
    for entry in entries {
        if !wanted.insert(entry.exercise.to_owned()) {
            return Err(invalid(format!(
                "{} is listed twice for {}",
                entry.exercise, entry.student
            )));
        }
        let dir = scratch.join(entry.exercise);
        let pristine = course.join("exercises").join(entry.exercise);
        let manifest = fs::read_to_string(pristine.join("Cargo.toml"))?;
        overlay::lay_over(&pristine, &manifest, entry.taken, &dir)?;
        members.push(Member {
            student: entry.student.to_owned(),
            exercise: entry.exercise.to_owned(),
            package: entry.exercise.to_owned(),
            dir,
        });
    }
    remove_stale(scratch, &wanted)?;
    let manifest = workspace_manifest(
        &fs::read_to_string(course.join("Cargo.toml"))?,
        course_seen,
        scratch,
        &members,
    )?;
    overlay::write_if_changed(&scratch.join("Cargo.toml"), manifest.as_bytes())?;
    // Cargo keeps every version and drops the packages no member needs.
    overlay::write_if_changed(
        &scratch.join("Cargo.lock"),
        &fs::read(course.join("Cargo.lock"))?,
    )?;
    // Cargo reads its configuration from the folder it builds in: the
    // course's (CUDA_LIBRARY_PATH for distribution toolkits) must come along.
    fs::create_dir_all(scratch.join(".cargo"))?;
    overlay::write_if_changed(
        &scratch.join(".cargo/config.toml"),
        &fs::read(course.join(".cargo/config.toml"))?,
    )?;
    Ok(members)
}

/// Removes crates of earlier builds that `wanted` lacks.
fn remove_stale(scratch: &Path, wanted: &BTreeSet<String>) -> std::io::Result<()> {
    for exercise in kernels::catalogue::EXERCISES {
        // Canary crates are of bundles built before the broker.
        for name in [
            exercise.name.to_owned(),
            format!("{}-canary", exercise.name),
        ] {
            let dir = scratch.join(&name);
            if dir.exists() && !wanted.contains(&name) {
                fs::remove_dir_all(dir)?;
            }
        }
    }
    Ok(())
}

/// The course's root manifest with its members replaced by the scratch
/// crates and its `kernels` path made absolute; every other table (shared
/// dependency versions, lints, profiles) is the course's own.
fn workspace_manifest(
    course_manifest: &str,
    course: &Path,
    scratch: &Path,
    members: &[Member],
) -> std::io::Result<String> {
    let listed: Vec<String> = members
        .iter()
        .map(|m| {
            format!(
                "{:?}",
                m.dir
                    .strip_prefix(scratch)
                    .unwrap_or(&m.dir)
                    .to_string_lossy()
            )
        })
        .collect();
    let mut found_members = false;
    let mut found_kernels = false;
    let lines: Vec<String> = course_manifest
        .lines()
        .map(|line| {
            if line.starts_with("members = ") {
                found_members = true;
                format!("members = [{}]", listed.join(", "))
            } else if line.starts_with("kernels = { path = \"kernels\"") {
                found_kernels = true;
                line.replacen(
                    "\"kernels\"",
                    &format!("{:?}", course.join("kernels").to_string_lossy()),
                    1,
                )
            } else {
                line.to_owned()
            }
        })
        .collect();
    if !(found_members && found_kernels) {
        return Err(invalid(
            "the course's Cargo.toml has no `members = ` line or no `kernels = { path = \"kernels\"` line".into(),
        ));
    }
    Ok(lines.join("\n") + "\n")
}

fn invalid(message: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn course() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap()
            .to_owned()
    }

    fn main_only() -> (tempfile::TempDir, Vec<Taken>) {
        let student = tempfile::tempdir().unwrap();
        fs::create_dir_all(student.path().join("src")).unwrap();
        fs::write(student.path().join("src/main.rs"), "fn main() {}\n").unwrap();
        let (taken, _) = overlay::select(student.path());
        (student, taken)
    }

    #[test]
    fn writing_again_keeps_unchanged_files_and_drops_what_left() {
        let scratch = tempfile::tempdir().unwrap();
        let (_student, taken) = main_only();
        let entry = |exercise| Entry {
            student: "ann",
            exercise,
            taken: &taken,
        };
        let first = create(
            &course(),
            &course(),
            scratch.path(),
            &[entry("dot-sm"), entry("dot-gm")],
        )
        .unwrap();
        let main = first[0].dir.join("src/main.rs");
        let before = fs::metadata(&main).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));

        let second = create(&course(), &course(), scratch.path(), &[entry("dot-sm")]).unwrap();
        assert_eq!(second.len(), 1);
        assert_eq!(fs::metadata(&main).unwrap().modified().unwrap(), before);
        assert!(
            !first[1].dir.exists(),
            "dot-gm's crate outlived its exercise"
        );
        assert!(
            !fs::read_to_string(scratch.path().join("Cargo.toml"))
                .unwrap()
                .contains("dot-gm")
        );
    }

    #[test]
    fn a_students_crates_keep_the_exercise_names_and_cargo_accepts_them() {
        let scratch = tempfile::tempdir().unwrap();
        let (_student, taken) = main_only();
        let entries = [
            Entry {
                student: "Ann",
                exercise: "dot-sm",
                taken: &taken,
            },
            Entry {
                student: "Ann",
                exercise: "vecadd-anyN",
                taken: &taken,
            },
        ];
        let members = create(&course(), &course(), scratch.path(), &entries).unwrap();
        let packages: Vec<&str> = members.iter().map(|m| m.package.as_str()).collect();
        // No canary crate: the grader's canary is never in a student's
        // build, whose code could read it (`build::canary`).
        assert_eq!(packages, ["dot-sm", "vecadd-anyN"]);
        let main = fs::read_to_string(members[0].dir.join("src/main.rs")).unwrap();
        assert_eq!(main, "fn main() {}\n");
        assert!(
            fs::read_to_string(members[0].dir.join("build.rs"))
                .unwrap()
                .contains("build_kernel")
        );
        // Twice the same exercise is the caller's mistake, said.
        assert!(
            create(
                &course(),
                &course(),
                scratch.path(),
                &[entries[0], entries[0]]
            )
            .is_err()
        );

        // Cargo resolves the workspace offline, keeping the course's versions.
        // Only for this platform: a fresh cargo cache holds just the packages
        // this platform's build fetched, not every platform's in the lock.
        let output = std::process::Command::new(env!("CARGO"))
            .args(["metadata", "--format-version", "1", "--offline"])
            .args(["--filter-platform", &host_triple()])
            .current_dir(scratch.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "cargo metadata failed: {stderr}");
        let metadata = String::from_utf8_lossy(&output.stdout);
        for package in packages {
            assert!(
                metadata.contains(&format!("\"name\":\"{package}\"")),
                "{package} missing"
            );
        }
        let locked = |lock: &Path| {
            let text = fs::read_to_string(lock).unwrap();
            let at = text.find("name = \"cust\"").unwrap();
            text[at..].lines().nth(1).unwrap().to_owned()
        };
        assert_eq!(
            locked(&scratch.path().join("Cargo.lock")),
            locked(&course().join("Cargo.lock"))
        );
        assert!(scratch.path().join(".cargo/config.toml").is_file());
    }

    /// The triple rustc builds for by default, as `rustc -vV` names it.
    fn host_triple() -> String {
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        let output = std::process::Command::new(rustc)
            .arg("-vV")
            .output()
            .unwrap();
        String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("host: "))
            .expect("rustc -vV names its host")
            .to_owned()
    }
}
