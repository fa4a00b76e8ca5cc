//! The scratch workspace the grader builds in: one crate per student and
//! exercise, each the course's crate with the student's files laid over it
//! (see `overlay`) under a package name of its own, all depending on the
//! course's `kernels` by path and sharing one target directory. It starts
//! from the course's Cargo.lock: build it with `--offline` but not
//! `--locked`, so cargo keeps every dependency's version and only adds the
//! renamed members. A solution's crate built this way (`cargo build
//! --release --offline`, 18 s from cold here) runs like the course's own.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::overlay::{self, Taken};

/// One crate of the scratch workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub student: String,
    pub exercise: String,
    /// Package and binary name: `<exercise>--<student slug>`.
    pub package: String,
    pub dir: PathBuf,
}

/// What to put in the workspace: a student's taken files for an exercise.
pub struct Entry<'a> {
    pub student: &'a str,
    pub exercise: &'a str,
    pub taken: &'a [Taken],
}

/// A student id as a package-name part: lower-case letters, digits and
/// '_' (anything else becomes '_'), never empty.
pub fn slug(student: &str) -> String {
    let slug: String = student
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if slug.is_empty() { "_".into() } else { slug }
}

/// Writes the workspace under `scratch` for `entries`, from the course at
/// `course` (the folder of its root Cargo.toml). An existing workspace is
/// updated in place: unchanged files keep their times, so cargo rebuilds
/// only the crates whose sources changed, and crates no longer wanted are
/// removed.
pub fn create(course: &Path, scratch: &Path, entries: &[Entry]) -> std::io::Result<Vec<Member>> {
    fs::create_dir_all(scratch)?;
    let course = course.canonicalize()?;
    let mut members = Vec::new();
    let mut slugs: BTreeSet<(String, String)> = BTreeSet::new();
    for entry in entries {
        // Students whose ids fold to the same slug get _2, _3, ...
        let base = slug(entry.student);
        let mut unique = base.clone();
        let mut k = 2;
        while !slugs.insert((entry.exercise.to_owned(), unique.clone())) {
            unique = format!("{base}_{k}");
            k += 1;
        }
        let package = format!("{}--{unique}", entry.exercise);
        let dir = scratch.join(entry.exercise).join(&unique);
        let pristine = course.join("exercises").join(entry.exercise);
        let manifest = renamed(
            &fs::read_to_string(pristine.join("Cargo.toml"))?,
            entry.exercise,
            &package,
        )?;
        overlay::lay_over(&pristine, &manifest, entry.taken, &dir)?;
        members.push(Member {
            student: entry.student.to_owned(),
            exercise: entry.exercise.to_owned(),
            package,
            dir,
        });
    }
    remove_stale(scratch, &slugs)?;
    let manifest = workspace_manifest(
        &fs::read_to_string(course.join("Cargo.toml"))?,
        &course,
        scratch,
        &members,
    )?;
    overlay::write_if_changed(&scratch.join("Cargo.toml"), manifest.as_bytes())?;
    // Cargo adds the renamed members to the lock and keeps every version.
    fs::copy(course.join("Cargo.lock"), scratch.join("Cargo.lock"))?;
    // Cargo reads its configuration from the folder it builds in: the
    // course's (CUDA_LIBRARY_PATH for distribution toolkits) must come along.
    fs::create_dir_all(scratch.join(".cargo"))?;
    overlay::write_if_changed(
        &scratch.join(".cargo/config.toml"),
        &fs::read(course.join(".cargo/config.toml"))?,
    )?;
    Ok(members)
}

/// Removes crates of earlier builds that `wanted` (exercise, slug) lacks.
fn remove_stale(scratch: &Path, wanted: &BTreeSet<(String, String)>) -> std::io::Result<()> {
    for exercise in crate::catalogue::EXERCISES {
        let Ok(entries) = fs::read_dir(scratch.join(exercise.name)) else {
            continue;
        };
        for entry in entries {
            let entry = entry?;
            let slug = entry.file_name().to_string_lossy().into_owned();
            if !wanted.contains(&(exercise.name.to_owned(), slug)) {
                fs::remove_dir_all(entry.path())?;
            }
        }
    }
    Ok(())
}

/// The course's crate manifest, with the package renamed.
fn renamed(manifest: &str, exercise: &str, package: &str) -> std::io::Result<String> {
    let old = format!("name = \"{exercise}\"");
    if !manifest.contains(&old) {
        return Err(invalid(format!(
            "the {exercise} manifest has no line {old}"
        )));
    }
    Ok(manifest.replacen(&old, &format!("name = \"{package}\""), 1))
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

    #[test]
    fn writing_again_keeps_unchanged_files_and_drops_who_left() {
        let scratch = tempfile::tempdir().unwrap();
        let student = tempfile::tempdir().unwrap();
        fs::create_dir_all(student.path().join("src")).unwrap();
        fs::write(student.path().join("src/main.rs"), "fn main() {}\n").unwrap();
        let (taken, _) = overlay::select(student.path());
        let entry = |who| Entry {
            student: who,
            exercise: "dot-sm",
            taken: &taken,
        };
        let first = create(&course(), scratch.path(), &[entry("ann"), entry("bo")]).unwrap();
        let main = first[0].dir.join("src/main.rs");
        let before = fs::metadata(&main).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));

        let second = create(&course(), scratch.path(), &[entry("ann")]).unwrap();
        assert_eq!(second.len(), 1);
        assert_eq!(fs::metadata(&main).unwrap().modified().unwrap(), before);
        assert!(!first[1].dir.exists(), "bo's crate outlived bo");
        assert!(
            !fs::read_to_string(scratch.path().join("Cargo.toml"))
                .unwrap()
                .contains("dot-sm/bo")
        );
    }

    #[test]
    fn slugs_are_package_safe() {
        assert_eq!(slug("Ada Lovelace"), "ada_lovelace");
        assert_eq!(slug("s1234-B"), "s1234_b");
        assert_eq!(slug("é"), "_");
        assert_eq!(slug(""), "_");
    }

    #[test]
    fn two_students_with_one_exercise_each_get_their_own_crate_and_cargo_accepts_it() {
        let scratch = tempfile::tempdir().unwrap();
        let student = tempfile::tempdir().unwrap();
        fs::create_dir_all(student.path().join("src")).unwrap();
        fs::write(student.path().join("src/main.rs"), "fn main() {}\n").unwrap();
        let (taken, _) = overlay::select(student.path());
        let entries = [
            Entry {
                student: "Ann",
                exercise: "dot-sm",
                taken: &taken,
            },
            Entry {
                student: "ann",
                exercise: "dot-sm",
                taken: &taken,
            },
            Entry {
                student: "Ann",
                exercise: "vecadd-anyN",
                taken: &taken,
            },
        ];
        let members = create(&course(), scratch.path(), &entries).unwrap();
        let packages: Vec<&str> = members.iter().map(|m| m.package.as_str()).collect();
        assert_eq!(
            packages,
            ["dot-sm--ann", "dot-sm--ann_2", "vecadd-anyN--ann"]
        );
        let main = fs::read_to_string(members[0].dir.join("src/main.rs")).unwrap();
        assert_eq!(main, "fn main() {}\n");
        assert!(
            fs::read_to_string(members[0].dir.join("build.rs"))
                .unwrap()
                .contains("build_kernel")
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
