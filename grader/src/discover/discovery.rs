//! Finds each student's exercises in a folder of submissions: one folder per
//! student (its name made into the student's id by `student_id`), and
//! inside it the exercises wherever the student put them: a copy of the
//! whole workspace, bare exercise folders, or either nested deeper as
//! archives unpack. Where a submission holds a copy of the course's
//! workspace, its `exercises/<name>` is the exercise; the workspace's
//! other copies (its `solutions/`, the grader's test fixtures) are noted,
//! never graded. Identical copies of one exercise are one; two candidates
//! that differ are reported, never chosen between silently. Links are
//! never followed. Each submission is bounded: the entries looked at, and
//! the bytes read (see `overlay`), each file read once.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

use walkdir::WalkDir;

use crate::discover::overlay::{Reader, Refusal, Selection};
use crate::discover::student_id;
use kernels::catalogue;

/// How deep below a student's folder exercises are looked for: enough for
/// `archive/cuda-course/exercises/dot-sm`, not for a whole home folder.
const MAX_DEPTH: usize = 6;

/// The most files and folders looked at in one student's folder: a copy
/// of the whole course holds under a thousand outside `target/` and
/// `.git/`.
pub const MAX_ENTRIES: usize = 50_000;

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
    /// Exercise name → the copy graded, for each exercise found once (or
    /// in identical copies, or as the exercise of a workspace copy).
    pub exercises: BTreeMap<String, Found>,
    pub problems: Vec<Problem>,
}

/// The copy of an exercise that is graded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The folder holding its src/.
    pub folder: PathBuf,
    /// What is taken from it, as it was read.
    pub selection: Selection,
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
    /// Copies of an exercise besides the one graded, set aside because the
    /// graded one is the exercise of a workspace copy, or the others lie
    /// inside one (the course's own test fixtures, say).
    OtherCopies {
        exercise: String,
        graded: PathBuf,
        /// Whether `graded` is a workspace copy's exercise (else the
        /// others lie inside a workspace copy).
        in_workspace: bool,
        others: Vec<PathBuf>,
    },
    /// A symbolic link, not followed.
    Link { path: PathBuf },
    /// Not a folder: a loose file where student folders are expected.
    NotAFolder { path: PathBuf },
    /// The folder's name is not the student's id, and why.
    Renamed { note: String },
    /// More than [`MAX_ENTRIES`] files and folders: the rest were not
    /// looked at.
    TooManyEntries,
    /// What was refused in a copy of an exercise that was not graded.
    Refused { refusal: Refusal },
}

fn shown(path: &Path) -> String {
    student_id::quoted(&path.to_string_lossy())
}

/// At most three paths, then how many more.
fn listed(paths: &[PathBuf]) -> String {
    let mut text: Vec<String> = paths.iter().take(3).map(|p| shown(p)).collect();
    if paths.len() > 3 {
        text.push(format!("and {} more", paths.len() - 3));
    }
    text.join(", ")
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
            Problem::OtherCopies {
                exercise,
                graded,
                in_workspace,
                others,
            } => write!(
                f,
                "{exercise} was graded from {}; {} other {} ({}) {} not graded: {}",
                shown(graded),
                others.len(),
                if others.len() == 1 { "copy" } else { "copies" },
                listed(others),
                if others.len() == 1 { "was" } else { "were" },
                if *in_workspace {
                    "in a copy of the course's workspace, its exercises/ folder holds your work"
                } else {
                    "copies inside a copy of the course's workspace (its test fixtures, say) \
                     are not your work"
                }
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
            Problem::Refused { refusal } => write!(f, "not taken: {refusal}"),
            Problem::TooManyEntries => write!(
                f,
                "the submission holds more than {MAX_ENTRIES} files and folders (outside \
                 target/ and .git/): only the first were searched for exercises"
            ),
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
    let mut links = Vec::new();
    let mut reader = Reader::submission();
    // Two levels below the deepest exercise folder: its src/ files, whose
    // other names (hard links) must be counted.
    let walk = WalkDir::new(&root)
        .follow_links(false)
        .max_depth(MAX_DEPTH + 2)
        .into_iter()
        // The student's own folder may be called `target`: only what is
        // below it is skipped by name.
        .filter_entry(|e| {
            e.depth() == 0
                || !(e.file_type().is_dir()
                    && SKIPPED.contains(&e.file_name().to_string_lossy().as_ref()))
        });
    for (seen, entry) in walk.flatten().enumerate() {
        if seen >= MAX_ENTRIES {
            problems.push(Problem::TooManyEntries);
            break;
        }
        let relative = entry.path().strip_prefix(&root).unwrap_or(entry.path());
        if entry.path_is_symlink() {
            if entry.depth() <= MAX_DEPTH {
                links.push(relative.to_owned());
            }
            continue;
        }
        if let Ok(metadata) = entry.metadata() {
            reader.count_name(&metadata);
        }
        if !entry.file_type().is_dir() || entry.depth() > MAX_DEPTH {
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
    links.sort();
    problems.extend(links.into_iter().map(|path| Problem::Link { path }));
    let workspaces = workspace_copies(&root, places.values().flatten());
    let mut exercises = BTreeMap::new();
    let mut solutions_seen = Vec::new();
    for (exercise, found) in places {
        let (chosen, mut said) = choose(
            &root,
            &exercise,
            found,
            &workspaces,
            &mut reader,
            &mut solutions_seen,
        );
        if let Some(chosen) = chosen {
            exercises.insert(exercise, chosen);
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

/// The copies of the course's workspace among the folders holding
/// `places`: a folder with a Cargo.toml whose `exercises/<name>` is one of
/// them.
fn workspace_copies<'a>(
    root: &Path,
    places: impl Iterator<Item = &'a PathBuf>,
) -> BTreeSet<PathBuf> {
    places
        .filter_map(|place| {
            let parent = place.parent()?;
            let workspace = parent.parent()?;
            (parent.file_name()? == "exercises"
                && root.join(workspace).join("Cargo.toml").is_file())
            .then(|| workspace.to_owned())
        })
        .collect()
}

/// How likely a place is the student's work, best first: the exercise of
/// a workspace copy; a copy outside any workspace; a copy elsewhere inside
/// one (its test fixtures); a copy in a `solutions/` folder.
fn rank(place: &Path, workspaces: &BTreeSet<PathBuf>) -> u8 {
    let parent = place.parent();
    let in_folder = |name: &str| parent.and_then(Path::file_name).is_some_and(|n| n == name);
    let workspace_exercise = in_folder("exercises")
        && parent
            .and_then(Path::parent)
            .is_some_and(|w| workspaces.contains(w));
    if workspace_exercise {
        0
    } else if in_folder(SOLUTIONS) {
        3
    } else if workspaces.iter().any(|w| place.starts_with(w)) {
        2
    } else {
        1
    }
}

/// Which of an exercise's `places` (relative to `root`) is graded: those
/// of the best [`rank`] are the candidates, one of them or identical
/// copies; the others are noted (`solutions/` folders added to
/// `solutions_seen`).
fn choose(
    root: &Path,
    exercise: &str,
    mut places: Vec<PathBuf>,
    workspaces: &BTreeSet<PathBuf>,
    reader: &mut Reader,
    solutions_seen: &mut Vec<PathBuf>,
) -> (Option<Found>, Vec<Problem>) {
    // The shallowest first: the copy a student most likely meant.
    places.sort_by_key(|p| (rank(p, workspaces), p.components().count(), p.clone()));
    let best = rank(&places[0], workspaces);
    let (candidates, others): (Vec<PathBuf>, Vec<PathBuf>) = places
        .into_iter()
        .partition(|p| rank(p, workspaces) == best);
    let mut problems = Vec::new();
    let (solutions, mut others): (Vec<PathBuf>, Vec<PathBuf>) =
        others.into_iter().partition(|p| rank(p, workspaces) == 3);
    solutions_seen.extend(
        solutions
            .iter()
            .filter_map(|p| p.parent().map(Path::to_owned)),
    );
    others.sort();
    if !others.is_empty() {
        problems.push(Problem::OtherCopies {
            exercise: exercise.to_owned(),
            graded: candidates[0].clone(),
            in_workspace: best == 0,
            others,
        });
    }
    let mut read = candidates.iter().map(|p| Found {
        folder: root.join(p),
        selection: reader.select(&root.join(p), p),
    });
    let first = read.next().expect("one place at least");
    if candidates.len() == 1 {
        return (Some(first), problems);
    }
    // Each candidate is read once, and the others only while they agree.
    let differing = read.find(|other| !first.selection.same_as(&other.selection));
    let Some(differing) = differing else {
        problems.push(Problem::IdenticalCopies {
            exercise: exercise.to_owned(),
            graded: candidates[0].clone(),
            copies: candidates.len(),
        });
        return (Some(first), problems);
    };
    problems.push(Problem::Ambiguous {
        exercise: exercise.to_owned(),
        places: candidates,
    });
    // A copy may differ only in what was refused: say what.
    let refused = [first, differing]
        .into_iter()
        .flat_map(|found| found.selection.refused);
    problems.extend(refused.map(|refusal| Problem::Refused { refusal }));
    (None, problems)
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
        assert!(
            bo.exercises["matmul-tiled"]
                .folder
                .ends_with("submission-v2/matmul-tiled")
        );
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
        assert!(
            ada.exercises["dot-sm"]
                .folder
                .ends_with("cuda-course/exercises/dot-sm")
        );
        assert_eq!(
            ada.problems,
            [Problem::SolutionsIgnored {
                folder: "cuda-course/solutions".into()
            }]
        );
        assert!(ada.problems[0].to_string().contains("not your work"));
        assert!(
            found[1].exercises["dot-gm"]
                .folder
                .ends_with("solutions/dot-gm")
        );
        assert!(found[1].problems.is_empty());
    }

    #[test]
    fn a_clone_of_the_whole_course_is_graded_from_its_exercises() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // The course's own repository handed in as it is, its grader's
        // fixtures included, with the student's work in its exercises/.
        touch(root, "cy/Cargo.toml");
        fs::write(root.join("cy/Cargo.toml"), "[workspace]\n").unwrap();
        touch(root, "cy/exercises/dot-sm/src/main.rs");
        fs::write(
            root.join("cy/exercises/dot-sm/src/main.rs"),
            "// cy's own\n",
        )
        .unwrap();
        exercise(root, "cy/solutions/dot-sm");
        for case in 0..27 {
            let at = format!("cy/grader/tests/fixtures/hostile/case{case:02}/dot-sm");
            touch(root, &format!("{at}/src/main.rs"));
            fs::write(root.join(at).join("src/main.rs"), format!("// {case}\n")).unwrap();
        }
        // A fixture-only exercise: the fixtures are all there is, and differ.
        exercise(root, "cy/grader/tests/fixtures/a/dot-gm");
        touch(root, "cy/grader/tests/fixtures/b/dot-gm/src/main.rs");
        let found = discover(root).unwrap();
        let cy = &found[0];
        let graded = &cy.exercises["dot-sm"];
        assert!(graded.folder.ends_with("cy/exercises/dot-sm"));
        assert_eq!(graded.selection.taken.len(), 1);
        let other = cy
            .problems
            .iter()
            .find(|p| matches!(p, Problem::OtherCopies { .. }))
            .expect("the other copies are noted");
        let said = other.to_string();
        assert!(
            said.starts_with("dot-sm was graded from \"exercises/dot-sm\"; 27 other copies"),
            "{said}"
        );
        assert!(said.contains("and 24 more"), "{said}");
        assert!(
            said.contains("its exercises/ folder holds your work"),
            "{said}"
        );
        assert!(cy.problems.contains(&Problem::SolutionsIgnored {
            folder: "solutions".into()
        }));
        // Without a workspace exercise, differing copies are still reported.
        assert!(!cy.exercises.contains_key("dot-gm"));
        assert!(cy.problems.iter().any(
            |p| matches!(p, Problem::Ambiguous { exercise, places } if exercise == "dot-gm" && places.len() == 2)
        ));
    }

    #[test]
    fn thousands_of_hard_links_are_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let one = root.join("hal/one.rs");
        fs::create_dir_all(one.parent().unwrap()).unwrap();
        fs::write(
            &one,
            "x".repeat(crate::discover::overlay::MAX_FILE_BYTES as usize),
        )
        .unwrap();
        for copy in ["a", "b", "c"] {
            let src = root.join(format!("hal/{copy}/dot-sm/src"));
            fs::create_dir_all(&src).unwrap();
            for i in 0..300 {
                fs::hard_link(&one, src.join(format!("m{i:04}.rs"))).unwrap();
            }
            fs::hard_link(&one, src.join("main.rs")).unwrap();
        }
        let found = discover(root).unwrap();
        let hal = &found[0];
        assert!(hal.exercises.is_empty(), "{:?}", hal.exercises);
        let said: Vec<String> = hal.problems.iter().map(|p| p.to_string()).collect();
        assert!(
            said[0].starts_with("dot-sm was found in 3 places that differ"),
            "{said:?}"
        );
        // What each copy read says, naming the limit.
        assert_eq!(said.len(), 3, "{said:?}");
        assert!(
            said[1].starts_with("not taken: a/dot-sm/src holds 301 or more files"),
            "{said:?}"
        );
        assert!(said[1].contains("over the limit of 32"), "{said:?}");
    }

    #[test]
    fn a_submission_of_too_many_entries_is_searched_only_so_far() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        exercise(root, "ivy/a/dot-sm");
        let many = root.join("ivy/b");
        fs::create_dir_all(&many).unwrap();
        for i in 0..MAX_ENTRIES {
            fs::write(many.join(format!("{i}")), "").unwrap();
        }
        let found = discover(root).unwrap();
        assert!(
            found[0].problems.contains(&Problem::TooManyEntries),
            "{:?}",
            found[0].problems
        );
    }

    #[test]
    fn identical_copies_are_one_and_differing_ones_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        exercise(dir.path(), "bo/dot-sm");
        exercise(dir.path(), "bo/backup/dot-sm");
        let found = discover(dir.path()).unwrap();
        assert!(found[0].exercises["dot-sm"].folder.ends_with("bo/dot-sm"));
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
