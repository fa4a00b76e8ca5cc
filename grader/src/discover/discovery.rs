//! Finds each student's exercises in a folder of submissions: one folder per
//! student (its name made into the student's id by `student_id`), and
//! inside it the exercises wherever the student put them: a copy of the
//! whole workspace, bare exercise folders, or either nested deeper as
//! archives unpack. A workspace copy's `solutions/` is the course's, not
//! the student's: it is set aside with a note. Identical copies of one
//! exercise are one; two copies that differ are reported, never chosen
//! between silently. Links are never followed.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

use walkdir::WalkDir;

use crate::discover::overlay;
use crate::discover::student_id;
use kernels::catalogue;

/// How deep below a student's folder exercises are looked for: enough for
/// `archive/cuda-course/exercises/dot-sm`, not for a whole home folder.
const MAX_DEPTH: usize = 6;

/// Folders never looked into: build output and version control.
const SKIPPED: [&str; 3] = ["target", ".git", "node_modules"];

/// The folder of a workspace copy that holds the course's reference
/// solutions, which are not the student's work.
const SOLUTIONS: &str = "solutions";

/// One student's submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submission {
    /// The student's id: the folder's name when that is safe as a file
    /// name, otherwise made from it (see `student_id`).
    pub student: String,
    pub root: PathBuf,
    /// Exercise name → the folder holding its src/, for each exercise found
    /// once (or in identical copies).
    pub exercises: BTreeMap<String, PathBuf>,
    pub problems: Vec<Problem>,
}

/// Something about a submission the instructor should hear about. Paths
/// are relative to the student's folder: feedback shows no instructor's
/// paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The same exercise in more than one place, differing: none of them
    /// is graded.
    Ambiguous {
        exercise: String,
        places: Vec<PathBuf>,
    },
    /// The course's solutions in a copy of the workspace: not graded.
    SolutionsIgnored { folder: PathBuf },
    /// Identical copies of an exercise: the first is graded.
    IdenticalCopies {
        exercise: String,
        graded: PathBuf,
        copies: usize,
    },
    /// A symbolic link, not followed.
    Link { path: PathBuf },
    /// Not a folder: a loose file where student folders are expected.
    NotAFolder { path: PathBuf },
    /// The folder's name is not the student's id, and why.
    Renamed { note: String },
}

fn shown(path: &Path) -> String {
    student_id::quoted(&path.to_string_lossy())
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Ambiguous { exercise, places } => write!(
                f,
                "{exercise} was found in {} places that differ ({}); keep one and resubmit, none was graded",
                places.len(),
                places
                    .iter()
                    .map(|p| shown(p))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Problem::SolutionsIgnored { folder } => write!(
                f,
                "{} holds the course's reference solutions, not your work: it was not graded",
                shown(folder)
            ),
            Problem::IdenticalCopies {
                exercise,
                graded,
                copies,
            } => write!(
                f,
                "{exercise} was found in {copies} identical copies; {} was graded",
                shown(graded)
            ),
            Problem::Link { path } => {
                write!(f, "{} is a symbolic link and was not followed", shown(path))
            }
            Problem::NotAFolder { path } => write!(
                f,
                "{} is not a folder: each student needs a folder of their own",
                shown(path)
            ),
            Problem::Renamed { note } => f.write_str(note),
        }
    }
}

/// Every student folder under `submissions`, sorted by folder name; loose
/// files come back as problems of a pseudo-student named after them.
pub fn discover(submissions: &Path) -> std::io::Result<Vec<Submission>> {
    let mut entries: Vec<_> = std::fs::read_dir(submissions)?.collect::<Result<_, _>>()?;
    entries.retain(|e| !e.file_name().as_encoded_bytes().starts_with(b"."));
    entries.sort_by_key(|e| e.file_name());
    let names: Vec<_> = entries.iter().map(|e| e.file_name()).collect();
    let names: Vec<&OsStr> = names.iter().map(|n| n.as_os_str()).collect();
    let ids = student_id::assign(&names);
    let mut found = Vec::new();
    for (entry, assigned) in entries.into_iter().zip(ids) {
        let path = entry.path();
        let kind = entry.file_type()?;
        let shown_as = PathBuf::from(&assigned.folder);
        let mut submission = if kind.is_symlink() {
            lone_problem(&assigned.id, &path, Problem::Link { path: shown_as })
        } else if !kind.is_dir() {
            lone_problem(&assigned.id, &path, Problem::NotAFolder { path: shown_as })
        } else {
            student(assigned.id, path)
        };
        if let Some(note) = assigned.note {
            submission.problems.insert(0, Problem::Renamed { note });
        }
        found.push(submission);
    }
    Ok(found)
}

fn lone_problem(student: &str, root: &Path, problem: Problem) -> Submission {
    Submission {
        student: student.to_owned(),
        root: root.to_owned(),
        exercises: BTreeMap::new(),
        problems: vec![problem],
    }
}

/// One student's exercises.
fn student(id: String, root: PathBuf) -> Submission {
    let mut places: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    let mut problems = Vec::new();
    let walk = WalkDir::new(&root)
        .follow_links(false)
        .max_depth(MAX_DEPTH)
        .sort_by_file_name()
        .into_iter()
        // The student's own folder may be called `target`: only what is
        // below it is skipped by name.
        .filter_entry(|e| {
            e.depth() == 0
                || !(e.file_type().is_dir()
                    && SKIPPED.contains(&e.file_name().to_string_lossy().as_ref()))
        });
    for entry in walk.flatten() {
        let relative = entry.path().strip_prefix(&root).unwrap_or(entry.path());
        if entry.path_is_symlink() {
            problems.push(Problem::Link {
                path: relative.to_owned(),
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
                    .push(relative.to_owned());
            }
        }
    }
    let mut exercises = BTreeMap::new();
    let mut solutions_seen = Vec::new();
    for (exercise, found) in places {
        let (chosen, mut said) = choose(&root, &exercise, found, &mut solutions_seen);
        if let Some(folder) = chosen {
            exercises.insert(exercise, root.join(folder));
        }
        problems.append(&mut said);
    }
    solutions_seen.sort();
    solutions_seen.dedup();
    let notes = solutions_seen
        .into_iter()
        .map(|folder| Problem::SolutionsIgnored { folder });
    problems.splice(0..0, notes);
    Submission {
        student: id,
        root,
        exercises,
        problems,
    }
}

/// Which of an exercise's `places` (relative to `root`) is graded. Copies
/// in a `solutions/` folder are set aside (their folders added to
/// `solutions_seen`) when any other copy exists; identical copies are one.
fn choose(
    root: &Path,
    exercise: &str,
    mut places: Vec<PathBuf>,
    solutions_seen: &mut Vec<PathBuf>,
) -> (Option<PathBuf>, Vec<Problem>) {
    let in_solutions = |p: &PathBuf| {
        p.parent()
            .and_then(Path::file_name)
            .is_some_and(|n| n == SOLUTIONS)
    };
    if places.iter().any(|p| !in_solutions(p)) {
        for p in places.iter().filter(|p| in_solutions(p)) {
            solutions_seen.extend(p.parent().map(Path::to_owned));
        }
        places.retain(|p| !in_solutions(p));
    }
    if places.len() == 1 {
        return (places.pop(), vec![]);
    }
    // The shallowest first: the copy a student most likely meant.
    places.sort_by_key(|p| (p.components().count(), p.clone()));
    let first = sources(&root.join(&places[0]));
    let identical = first.is_some() && places[1..].iter().all(|p| sources(&root.join(p)) == first);
    if identical {
        let problem = Problem::IdenticalCopies {
            exercise: exercise.to_owned(),
            graded: places[0].clone(),
            copies: places.len(),
        };
        return (Some(places.swap_remove(0)), vec![problem]);
    }
    let problem = Problem::Ambiguous {
        exercise: exercise.to_owned(),
        places,
    };
    (None, vec![problem])
}

/// What grading would take from an exercise folder: each taken file's
/// place and bytes; None when anything is refused or unreadable, so such
/// copies never count as identical.
fn sources(folder: &Path) -> Option<Vec<(PathBuf, Vec<u8>)>> {
    let (taken, refused) = overlay::select(folder);
    if !refused.is_empty() {
        return None;
    }
    let mut files = taken
        .into_iter()
        .map(|t| Some((t.relative, std::fs::read(&t.source).ok()?)))
        .collect::<Option<Vec<_>>>()?;
    files.sort();
    Some(files)
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
    fn a_workspace_copy_is_graded_from_its_exercises_not_its_solutions() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for name in ["dot-sm", "vecadd-anyN"] {
            exercise(root, &format!("ada/cuda-course/exercises/{name}"));
            touch(
                root,
                &format!("ada/cuda-course/solutions/{name}/src/main.rs"),
            );
        }
        // Only a solutions copy: taken, as a folder the student named so.
        exercise(root, "bo/solutions/dot-gm");
        let found = discover(root).unwrap();
        let ada = &found[0];
        assert_eq!(
            ada.exercises.keys().collect::<Vec<_>>(),
            ["dot-sm", "vecadd-anyN"]
        );
        assert!(ada.exercises["dot-sm"].ends_with("cuda-course/exercises/dot-sm"));
        assert_eq!(
            ada.problems,
            [Problem::SolutionsIgnored {
                folder: "cuda-course/solutions".into()
            }]
        );
        assert!(ada.problems[0].to_string().contains("not your work"));
        assert!(found[1].exercises["dot-gm"].ends_with("solutions/dot-gm"));
        assert!(found[1].problems.is_empty());
    }

    #[test]
    fn identical_copies_are_one_and_differing_ones_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        exercise(dir.path(), "bo/dot-sm");
        exercise(dir.path(), "bo/backup/dot-sm");
        let found = discover(dir.path()).unwrap();
        assert!(found[0].exercises["dot-sm"].ends_with("bo/dot-sm"));
        assert!(matches!(
            &found[0].problems[..],
            [Problem::IdenticalCopies { copies: 2, .. }]
        ));
        touch(dir.path(), "bo/backup/dot-sm/src/extra.rs");
        let found = discover(dir.path()).unwrap();
        assert!(found[0].exercises.is_empty());
        assert!(matches!(
            &found[0].problems[..],
            [Problem::Ambiguous { .. }]
        ));
    }

    #[test]
    fn awkward_folder_names_get_distinct_safe_ids_and_are_searched() {
        let dir = tempfile::tempdir().unwrap();
        let long = "l".repeat(240);
        for name in ["target", "zo\u{eb}", "zo\u{e9}", "new\nline", long.as_str()] {
            exercise(dir.path(), &format!("{name}/dot-sm"));
        }
        let found = discover(dir.path()).unwrap();
        assert_eq!(found.len(), 5);
        let ids: std::collections::BTreeSet<&str> =
            found.iter().map(|s| s.student.as_str()).collect();
        assert_eq!(ids.len(), 5, "{ids:?}");
        for s in &found {
            assert!(
                crate::discover::student_id::is_safe(&s.student),
                "{}",
                s.student
            );
            assert!(s.exercises.contains_key("dot-sm"), "{s:?}");
        }
        let target = found.iter().find(|s| s.student == "target").unwrap();
        assert!(target.problems.is_empty());
        let zoe = found.iter().find(|s| s.student.starts_with("zo_")).unwrap();
        assert!(
            matches!(&zoe.problems[0], Problem::Renamed { note } if note.contains("same file name")),
            "{:?}",
            zoe.problems
        );
    }

    #[test]
    fn two_copies_of_an_exercise_are_reported_not_guessed() {
        let dir = tempfile::tempdir().unwrap();
        exercise(dir.path(), "cy/dot-sm");
        touch(dir.path(), "cy/old/dot-sm/src/main.rs");
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
