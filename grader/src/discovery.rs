//! Finds each student's exercises in a folder of submissions: one folder per
//! student (its name is the student's id), and inside it the exercises
//! wherever the student put them: a copy of the whole workspace, bare
//! exercise folders, or either nested deeper as archives unpack. Two copies
//! of one exercise are reported, never chosen between silently; links are
//! never followed.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use walkdir::WalkDir;

use crate::catalogue;

/// How deep below a student's folder exercises are looked for: enough for
/// `archive/cuda-course/exercises/dot-sm`, not for a whole home folder.
const MAX_DEPTH: usize = 6;

/// Folders never looked into: build output and version control.
const SKIPPED: [&str; 3] = ["target", ".git", "node_modules"];

/// One student's submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submission {
    /// The student folder's name.
    pub student: String,
    pub root: PathBuf,
    /// Exercise name → the folder holding its src/, for each exercise found
    /// exactly once.
    pub exercises: BTreeMap<String, PathBuf>,
    pub problems: Vec<Problem>,
}

/// Something about a submission the instructor should hear about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The same exercise in more than one place: none of them is graded.
    Ambiguous {
        exercise: String,
        places: Vec<PathBuf>,
    },
    /// A symbolic link, not followed.
    Link { path: PathBuf },
    /// Not a folder: a loose file where student folders are expected.
    NotAFolder { path: PathBuf },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Ambiguous { exercise, places } => write!(
                f,
                "{exercise} was found in {} places ({}); keep one and resubmit, none was graded",
                places.len(),
                places
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Problem::Link { path } => write!(
                f,
                "{} is a symbolic link and was not followed",
                path.display()
            ),
            Problem::NotAFolder { path } => {
                write!(
                    f,
                    "{} is not a folder: each student needs a folder of their own",
                    path.display()
                )
            }
        }
    }
}

/// Every student folder under `submissions`, sorted by student; loose files
/// come back as problems of a pseudo-student named after them.
pub fn discover(submissions: &Path) -> std::io::Result<Vec<Submission>> {
    let mut entries: Vec<_> = std::fs::read_dir(submissions)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    let mut found = Vec::new();
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        let kind = entry.file_type()?;
        let problem = if kind.is_symlink() {
            Some(Problem::Link { path: path.clone() })
        } else if !kind.is_dir() {
            Some(Problem::NotAFolder { path: path.clone() })
        } else {
            None
        };
        found.push(match problem {
            Some(problem) => Submission {
                student: name,
                root: path,
                exercises: BTreeMap::new(),
                problems: vec![problem],
            },
            None => student(name, path),
        });
    }
    Ok(found)
}

/// One student's exercises.
fn student(name: String, root: PathBuf) -> Submission {
    let mut places: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    let mut problems = Vec::new();
    let walk = WalkDir::new(&root)
        .follow_links(false)
        .max_depth(MAX_DEPTH)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            !(e.file_type().is_dir() && SKIPPED.contains(&e.file_name().to_string_lossy().as_ref()))
        });
    for entry in walk.flatten() {
        if entry.path_is_symlink() {
            problems.push(Problem::Link {
                path: entry.path().to_owned(),
            });
            continue;
        }
        if !entry.file_type().is_dir() {
            continue;
        }
        let folder = entry.file_name().to_string_lossy();
        if let Some(exercise) = catalogue::find(&folder) {
            if looks_like_an_exercise(entry.path()) {
                places
                    .entry(exercise.name.to_owned())
                    .or_default()
                    .push(entry.path().to_owned());
            }
        }
    }
    let mut exercises = BTreeMap::new();
    for (exercise, mut found) in places {
        if found.len() == 1 {
            exercises.insert(exercise, found.remove(0));
        } else {
            problems.push(Problem::Ambiguous {
                exercise,
                places: found,
            });
        }
    }
    Submission {
        student: name,
        root,
        exercises,
        problems,
    }
}

/// An exercise folder has the student's work in src/: host code or kernel.
fn looks_like_an_exercise(folder: &Path) -> bool {
    ["src/main.rs", "src/kernel.cu"]
        .iter()
        .any(|f| folder.join(f).is_file())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn touch(root: &Path, relative: &str) {
        let path = root.join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, "// work\n").unwrap();
    }

    fn exercise(root: &Path, at: &str) {
        touch(root, &format!("{at}/src/main.rs"));
        touch(root, &format!("{at}/src/kernel.cu"));
    }

    #[test]
    fn finds_exercises_wherever_a_student_put_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // A whole workspace copy, with build output that must be skipped.
        exercise(root, "ada/cuda-course/exercises/vecadd-anyN");
        exercise(root, "ada/cuda-course/exercises/dot-sm");
        exercise(root, "ada/cuda-course/target/debug/build/dot-gm");
        // Bare folders, and one nested as an archive unpacks.
        exercise(root, "bo/dot-gm");
        exercise(root, "bo/submission-v2/matmul-tiled");
        // A folder named like an exercise but without work in it.
        fs::create_dir_all(root.join("bo/notes/dot-atomic")).unwrap();

        let found = discover(root).unwrap();
        assert_eq!(found.len(), 2);
        let ada = &found[0];
        assert_eq!(ada.student, "ada");
        assert_eq!(
            ada.exercises.keys().collect::<Vec<_>>(),
            ["dot-sm", "vecadd-anyN"]
        );
        assert!(ada.problems.is_empty(), "{:?}", ada.problems);
        let bo = &found[1];
        assert_eq!(
            bo.exercises.keys().collect::<Vec<_>>(),
            ["dot-gm", "matmul-tiled"]
        );
        assert!(bo.exercises["matmul-tiled"].ends_with("submission-v2/matmul-tiled"));
    }

    #[test]
    fn two_copies_of_an_exercise_are_reported_not_guessed() {
        let dir = tempfile::tempdir().unwrap();
        exercise(dir.path(), "cy/dot-sm");
        exercise(dir.path(), "cy/old/dot-sm");
        let found = discover(dir.path()).unwrap();
        assert!(found[0].exercises.is_empty());
        let Problem::Ambiguous { exercise, places } = &found[0].problems[0] else {
            panic!("{:?}", found[0].problems);
        };
        assert_eq!((exercise.as_str(), places.len()), ("dot-sm", 2));
        assert!(found[0].problems[0].to_string().contains("none was graded"));
    }

    #[test]
    #[cfg(unix)]
    fn links_are_reported_and_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        exercise(elsewhere.path(), "dot-sm");
        fs::create_dir_all(dir.path().join("di")).unwrap();
        std::os::unix::fs::symlink(
            elsewhere.path().join("dot-sm"),
            dir.path().join("di/dot-sm"),
        )
        .unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("eve")).unwrap();

        let found = discover(dir.path()).unwrap();
        let di = found.iter().find(|s| s.student == "di").unwrap();
        assert!(di.exercises.is_empty());
        assert!(matches!(di.problems[0], Problem::Link { .. }));
        let eve = found.iter().find(|s| s.student == "eve").unwrap();
        assert!(eve.exercises.is_empty() && matches!(eve.problems[0], Problem::Link { .. }));
    }

    #[test]
    fn loose_files_and_hidden_folders() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "README.txt");
        exercise(dir.path(), ".cache/dot-sm");
        let found = discover(dir.path()).unwrap();
        assert_eq!(found.len(), 1);
        assert!(matches!(found[0].problems[0], Problem::NotAFolder { .. }));
    }
}
