//! Finds the course whose crates the grader builds, at run time: the folder
//! given with `--course`, else the workspace the grader is run from (the
//! nearest folder, from the working folder up, whose Cargo.toml is the
//! course's workspace). Never the checkout the grader happened to be
//! compiled in, so one grader binary grades against the course it is told.

use std::path::{Path, PathBuf};

use kernels::catalogue::EXERCISES;

use crate::error::{Error, Result};

/// The course's root folder, absolute, and how it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Course {
    pub root: PathBuf,
    pub how: &'static str,
}

/// The course to build against, found from the working folder (or given),
/// named on the first line of the run so that nobody grades against the
/// wrong checkout.
pub fn course(given: Option<&Path>) -> Result<PathBuf> {
    let cwd = std::env::current_dir().map_err(Error::io(Path::new(".")))?;
    let found = find(given, &cwd)?;
    eprintln!("grader: course {} ({})", found.root.display(), found.how);
    Ok(found.root)
}

/// `given` (from `--course`, relative to `cwd`) checked, or else the first
/// course workspace from `cwd` up.
pub fn find(given: Option<&Path>, cwd: &Path) -> Result<Course> {
    if let Some(given) = given {
        let root = cwd.join(given);
        return match missing(&root) {
            None => Ok(Course {
                root: root.canonicalize().unwrap_or(root),
                how: "given with --course",
            }),
            Some(why) => Err(Error::Usage(format!(
                "--course {}: not this course's workspace ({why})",
                root.display()
            ))),
        };
    }
    cwd.ancestors()
        .find(|folder| missing(folder).is_none())
        .map(|root| Course {
            root: root.to_owned(),
            how: "the workspace around the working folder",
        })
        .ok_or_else(|| {
            Error::Usage(format!(
                "no course workspace in {} or above it: run the grader from inside the course's \
                 checkout, or give --course DIR",
                cwd.display()
            ))
        })
}

/// What `folder` lacks to be the course's workspace: a `[workspace]`
/// Cargo.toml, the `kernels` crate and every exercise's crate.
fn missing(folder: &Path) -> Option<String> {
    let manifest = std::fs::read_to_string(folder.join("Cargo.toml")).unwrap_or_default();
    if !manifest.lines().any(|l| l.trim() == "[workspace]") {
        return Some("no Cargo.toml with a [workspace] table".into());
    }
    if !folder.join("kernels/Cargo.toml").is_file() {
        return Some("no kernels/Cargo.toml".into());
    }
    EXERCISES
        .iter()
        .find(|e| {
            !folder
                .join("exercises")
                .join(e.name)
                .join("Cargo.toml")
                .is_file()
        })
        .map(|e| format!("no exercises/{}/Cargo.toml", e.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn this_course() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn the_course_is_found_from_any_folder_inside_it() {
        let inside = this_course().join("exercises/dot-sm/src");
        let found = find(None, &inside).unwrap();
        assert_eq!(found.root, this_course());
        // The grader crate's own folder is a package, not the workspace.
        assert_eq!(
            find(None, &this_course().join("grader")).unwrap().root,
            this_course()
        );
    }

    #[test]
    fn given_courses_are_checked_and_outside_a_course_is_an_error() {
        let elsewhere = tempfile::tempdir().unwrap();
        let err = find(None, elsewhere.path()).unwrap_err().to_string();
        assert!(err.contains("--course DIR"), "{err}");
        let err = find(Some(Path::new(".")), elsewhere.path())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no Cargo.toml with a [workspace] table"),
            "{err}"
        );
        // Relative to the working folder given.
        let found = find(Some(Path::new("..")), &this_course().join("grader")).unwrap();
        assert_eq!(found.root, this_course());
        assert_eq!(found.how, "given with --course");
    }
}
