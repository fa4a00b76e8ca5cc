//! `grader build`: everything a GPU node needs to grade a class, made on a
//! build node. Discovers the submissions, lays each student's files over
//! the course's crates, builds them all, inspects each kernel's PTX, and
//! writes `BUNDLE/bin/<package>`, the CPU emulator's library
//! (`BUNDLE/emulator/libcuda.so.1`) and `BUNDLE/bundle.json`: the seed, and per
//! student and exercise its binary or build errors, refusals and missing
//! PTX features, and the course's trusted host code with each student's
//! PTX (see `reference`). A GPU node then needs no cargo, no course and no
//! network.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::build::canary;
use crate::build::compile::{Builder, Built};
use crate::build::digest;
use crate::build::emulator_library::{self, Library};
use crate::build::ptx_check;
use crate::build::reference::{self, BrokerFiles, Kept, PTX_DIR, Reference};
use crate::discover::discovery::{Problem, discover};
use crate::discover::overlay::Taken;
use kernels::catalogue::{ALL_IDS, ExerciseId};

use crate::atomic_file;
use crate::build::workspace::Entry;
use crate::confine::sandbox::Isolation;
use crate::error::{Error, Result};

/// 2: the reference binaries and each item's PTX. 3: the broker in place
/// of the tracer, and each item's canary as PTX only.
pub const BUNDLE_SCHEMA: u32 = 3;

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Bundle {
    pub schema_version: u32,
    pub seed: u64,
    /// The course's solution binary per exercise: the host code a
    /// student's kernel runs in for its kernel points.
    pub reference: BTreeMap<String, Reference>,
    /// The broker every run of a student's binary reaches the GPU through
    /// (its record is the evidence of what the binary did there).
    #[serde(default)]
    pub broker: Option<BrokerFiles>,
    pub items: Vec<Item>,
    /// The CPU emulator's library, for `grader run --emulate`; None when
    /// it could not be built (the reason was said then).
    #[serde(default)]
    pub emulator: Option<Library>,
}

/// One student's one exercise.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Item {
    pub student: String,
    pub exercise: ExerciseId,
    /// Problems with the student's submission as a whole.
    pub problems: Vec<String>,
    /// Why nothing was built, when nothing was: not found, or ambiguous.
    pub absent: Option<String>,
    pub refused: Vec<String>,
    pub build_errors: Option<String>,
    /// The binary, relative to the bundle.
    pub binary: Option<PathBuf>,
    /// The binary's sha256, as built: a run checks it first.
    #[serde(default)]
    pub digest: Option<String>,
    pub ptx_missing: Vec<String>,
    /// The kernel's PTX as the student's build made it, copied out of
    /// their build folder: what the reference binary runs.
    pub ptx: Option<Kept>,
    /// The grader's canary kernel for this build (`build::canary`): the
    /// broker loads it in place of the student's kernels in every run of
    /// their binary.
    #[serde(default)]
    pub canary: Option<Canary>,
}

/// A student's canary, as kept in the bundle: never in their build.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Canary {
    /// The canary's PTX: the broker loads it for the student's binary, and
    /// the course's host code runs it too, for the result the student's
    /// host must report.
    pub ptx: Kept,
}

/// What to build.
pub struct Request<'a> {
    /// The course checkout (its root Cargo.toml's folder).
    pub course: &'a Path,
    pub submissions: &'a Path,
    pub bundle: &'a Path,
    /// Exercises to grade; all when empty.
    pub exercises: &'a [ExerciseId],
    /// Student ids to build; all when empty. With some, the earlier
    /// bundle's items for everyone else are kept (`earlier`).
    pub students: &'a [String],
    /// The bundle BUNDLE/bundle.json held, when only some students are
    /// rebuilt.
    pub earlier: Option<Bundle>,
    pub seed: u64,
    pub jobs: Option<usize>,
    /// Where the dependencies are built [default: BUNDLE/.build]; keep it
    /// between batches and classes so they compile once. Each student's
    /// own build folder is in BUNDLE/.build/students.
    pub target: Option<&'a Path>,
    pub isolation: &'a Isolation,
    /// How long one student's build may take.
    pub build_timeout: Duration,
    /// Told when each student's build starts.
    pub progress: &'a dyn Fn(&Progress),
}

/// How far a build is.
pub enum Progress<'a> {
    /// Compiling the dependencies (once per class; minutes when cold).
    Preparing,
    Building {
        student: &'a str,
        done: usize,
        total: usize,
    },
    Done,
}

/// Builds the bundle; returns it as written to BUNDLE/bundle.json. In
/// stages: what there is to build (`discovered`), the course's trusted
/// host code (`trusted`), each student's build (`build_students`), what
/// each item's build left kept in the bundle (`keep_built`), the files of
/// students no longer in the submissions swept away, and bundle.json.
pub fn build(request: Request) -> Result<Bundle> {
    let chosen: Vec<ExerciseId> = ALL_IDS
        .into_iter()
        .filter(|id| request.exercises.is_empty() || request.exercises.contains(id))
        .collect();
    let (mut items, taken) = discovered(&request, &chosen)?;
    let root = request
        .target
        .map_or_else(|| request.bundle.join(".build"), Path::to_owned);
    let students = request.bundle.join(".build").join("students");
    let builder = Builder {
        isolation: request.isolation,
        course: request
            .course
            .canonicalize()
            .map_err(Error::io(request.course))?,
        root: &root,
        jobs: request.jobs,
        timeout: request.build_timeout,
    };
    let bin = request.bundle.join("bin");
    fs::create_dir_all(&bin).map_err(Error::io(&bin))?;
    let mut by_student: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, item) in items.iter().enumerate() {
        if item.absent.is_none() {
            by_student.entry(&item.student).or_default().push(i);
        }
    }
    let (reference, broker) = if by_student.is_empty() {
        (BTreeMap::new(), None)
    } else {
        let names: Vec<&str> = chosen.iter().map(|id| id.name()).collect();
        trusted(&request, &builder, &root, &names)?
    };
    let built = build_students(&request, &builder, &students, &items, &taken, by_student)?;
    // Regrading some students (`--student`) keeps everyone else's build
    // folders and binaries: the earlier bundle's items still name them.
    let sweep = request.students.is_empty();
    // Build folders of students no longer in the submissions go.
    for entry in fs::read_dir(&students).into_iter().flatten().flatten() {
        if sweep
            && !built
                .students
                .contains(&*entry.file_name().to_string_lossy())
        {
            fs::remove_dir_all(entry.path()).map_err(Error::io(&entry.path()))?;
        }
    }
    let (binaries, mut kept_ptx) = keep_built(request.bundle, &mut items, built.by_item)?;
    kept_ptx.extend(canaries(request.bundle, &root, &mut items, request.jobs)?);
    // Binaries of students no longer in the submissions go.
    for entry in fs::read_dir(&bin).map_err(Error::io(&bin))? {
        let entry = entry.map_err(Error::io(&bin))?;
        if sweep && !binaries.contains(&*entry.file_name().to_string_lossy()) {
            fs::remove_file(entry.path()).map_err(Error::io(&entry.path()))?;
        }
    }
    if sweep {
        reference::sweep(request.bundle, PTX_DIR, &kept_ptx)?;
    }
    // Every bundle can be graded on the CPU emulator too; a course
    // without one still grades on a GPU.
    let emulator = emulator_library::build(request.course, &root, request.bundle)
        .inspect_err(|why| eprintln!("grader: warning: {why}; only a GPU can grade this bundle"))
        .ok();
    let mut bundle = Bundle {
        schema_version: BUNDLE_SCHEMA,
        seed: request.seed,
        reference,
        broker,
        items,
        emulator,
    };
    if let Some(earlier) = request.earlier {
        bundle = merged(earlier, bundle, request.students);
    }
    let path = request.bundle.join("bundle.json");
    let text = serde_json::to_string_pretty(&bundle).expect("a bundle is JSON");
    atomic_file::write(&path, text.as_bytes()).map_err(Error::io(&path))?;
    Ok(bundle)
}

/// What there is to build: an item per discovered student and `chosen`
/// exercise, with what was refused or why nothing was found, and the files
/// taken for each (in the items' order).
fn discovered(request: &Request, chosen: &[ExerciseId]) -> Result<(Vec<Item>, Vec<Vec<Taken>>)> {
    let submissions = discover(request.submissions).map_err(Error::io(request.submissions))?;
    let submissions = crate::discover::selection::only(submissions, request.students)?;
    let mut items = Vec::new();
    let mut taken = Vec::new();
    for submission in &submissions {
        let problems: Vec<String> = submission.problems.iter().map(|p| p.to_string()).collect();
        for &exercise in chosen {
            let ambiguous = submission.problems.iter().any(
                |p| matches!(p, Problem::Ambiguous { exercise: e, .. } if e == exercise.name()),
            );
            let (files, refused, absent) = match submission.exercises.get(exercise.name()) {
                Some(found) => {
                    let selection = &found.selection;
                    let refused = selection.refused.iter().map(|r| r.to_string()).collect();
                    (selection.taken.clone(), refused, None)
                }
                None if ambiguous => (
                    vec![],
                    vec![],
                    Some("two copies were found; see the problems".to_owned()),
                ),
                None => (
                    vec![],
                    vec![],
                    Some(format!("no {exercise} folder with a src/ was found")),
                ),
            };
            taken.push(files);
            items.push(Item {
                student: submission.student.clone(),
                exercise,
                problems: problems.clone(),
                absent,
                refused,
                build_errors: None,
                binary: None,
                digest: None,
                ptx_missing: vec![],
                ptx: None,
                canary: None,
            });
        }
    }
    Ok((items, taken))
}

/// The course's trusted host code, built once per class: the dependencies,
/// the solution binaries of the exercises `names` (with the PTX each
/// embeds), the broker and its client.
fn trusted(
    request: &Request,
    builder: &Builder,
    root: &Path,
    names: &[&str],
) -> Result<(BTreeMap<String, Reference>, Option<BrokerFiles>)> {
    (request.progress)(&Progress::Preparing);
    builder.prepare()?;
    // In the bundle's own build folder, like the students': the
    // dependencies' folder is shared by graders running at once.
    let own = request.bundle.join(".build");
    let reference = reference::build(builder, request.course, names, &own, request.bundle)?;
    let broker = reference::build_broker(request.course, root, request.bundle)?;
    Ok((reference, Some(broker)))
}

/// The students' builds.
struct Builds {
    /// The students built, by id.
    students: BTreeSet<String>,
    /// Each item's build, by its index.
    by_item: Vec<(usize, Built)>,
}

/// Each student of `by_student` (their items' indices) built in their own
/// folder under `students`.
fn build_students(
    request: &Request,
    builder: &Builder,
    students: &Path,
    items: &[Item],
    taken: &[Vec<Taken>],
    by_student: BTreeMap<&str, Vec<usize>>,
) -> Result<Builds> {
    // Each student's build folder and binaries are named by their id,
    // which student_id made unique and safe as a file name.
    let mut built_students = BTreeSet::new();
    let total = by_student.len();
    let mut built_by_item: Vec<(usize, Built)> = Vec::new();
    for (done, (student, indices)) in by_student.into_iter().enumerate() {
        (request.progress)(&Progress::Building {
            student,
            done,
            total,
        });
        built_students.insert(student.to_owned());
        let entries: Vec<Entry> = indices
            .iter()
            .map(|&i| Entry {
                student,
                exercise: items[i].exercise.name(),
                taken: &taken[i],
            })
            .collect();
        let built = builder.build_student(&students.join(student), &entries)?;
        built_by_item.extend(indices.iter().copied().zip(built));
    }
    (request.progress)(&Progress::Done);
    Ok(Builds {
        students: built_students,
        by_item: built_by_item,
    })
}

/// What each item's build left, kept in the bundle at `bundle`: its
/// binary (with its digest), its PTX and what that PTX
/// lacks, or its build's errors. Returns the names kept in `bin/` and in
/// the PTX folder.
fn keep_built(
    bundle: &Path,
    items: &mut [Item],
    built_by_item: Vec<(usize, Built)>,
) -> Result<(BTreeSet<String>, BTreeSet<String>)> {
    let mut binaries = BTreeSet::new();
    let mut kept_ptx = BTreeSet::new();
    for (i, result) in built_by_item {
        let item = &mut items[i];
        item.build_errors = result.errors.clone();
        if let Some(binary) = &result.binary {
            let name = format!("{}--{}", item.exercise, item.student);
            let relative = Path::new("bin").join(&name);
            let copy = bundle.join(&relative);
            // A fresh file, never written through an existing one.
            let _ = fs::remove_file(&copy);
            fs::copy(binary, &copy).map_err(Error::io(&copy))?;
            item.digest = Some(digest::file(&copy).map_err(Error::io(&copy))?);
            binaries.insert(name);
            item.binary = Some(relative);
        }
        if let Some(ptx) = &result.ptx {
            let name = format!("{}--{}.ptx", item.exercise, item.student);
            item.ptx = Some(reference::keep(ptx, bundle, PTX_DIR, &name)?);
            kept_ptx.insert(name);
        }
        let exercise = item.exercise.exercise();
        item.ptx_missing = match result.ptx.as_ref().map(|p| ptx_check::read(p)) {
            Some(Ok(ptx)) => ptx_check::missing(exercise, &ptx),
            Some(Err(why)) => vec![why.to_string()],
            None if result.binary.is_some() => vec!["no PTX was found for the kernel".into()],
            None => vec![],
        };
    }
    Ok((binaries, kept_ptx))
}

/// A canary for each item that built, with a mark of its own
/// (`build::canary`), compiled by the grader in `root` (never in a
/// student's build, whose code could read it) on up to `jobs` threads, and
/// kept in the bundle's PTX folder. Returns the names kept there.
fn canaries(
    bundle: &Path,
    root: &Path,
    items: &mut [Item],
    jobs: Option<usize>,
) -> Result<BTreeSet<String>> {
    let dir = root.join("canaries");
    fs::create_dir_all(&dir).map_err(Error::io(&dir))?;
    let wanted: Vec<(usize, ExerciseId, String)> = (items.iter().enumerate())
        .filter(|(_, item)| item.binary.is_some())
        .map(|(i, item)| {
            let name = format!("{}--{}--canary.ptx", item.exercise, item.student);
            (i, item.exercise, name)
        })
        .collect();
    let threads = jobs
        .or_else(|| std::thread::available_parallelism().ok().map(Into::into))
        .unwrap_or(1)
        .clamp(1, wanted.len().max(1));
    let next = AtomicUsize::new(0);
    let done = Mutex::new(Vec::with_capacity(wanted.len()));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some((i, exercise, name)) = wanted.get(next.fetch_add(1, Relaxed)) {
                    let kept = canary::compile(*exercise, &dir.join(name))
                        .and_then(|ptx| reference::keep(&ptx, bundle, PTX_DIR, name));
                    done.lock().unwrap_or_else(PoisonError::into_inner).push((
                        *i,
                        name.clone(),
                        kept,
                    ));
                }
            });
        }
    });
    let mut kept = BTreeSet::new();
    for (i, name, ptx) in done.into_inner().unwrap_or_else(PoisonError::into_inner) {
        items[i].canary = Some(Canary { ptx: ptx? });
        kept.insert(name);
    }
    Ok(kept)
}

/// The earlier bundle's items for everyone but `students`, and the fresh
/// bundle's for them, in student and course order.
fn merged(earlier: Bundle, fresh: Bundle, students: &[String]) -> Bundle {
    let mut items: Vec<_> = earlier
        .items
        .into_iter()
        .filter(|i| !students.contains(&i.student))
        .chain(fresh.items)
        .collect();
    // ExerciseId's order is the course's.
    items.sort_by(|a, b| (&a.student, a.exercise).cmp(&(&b.student, b.exercise)));
    Bundle { items, ..fresh }
}

/// Reads BUNDLE/bundle.json.
pub fn load(bundle: &Path) -> Result<Bundle> {
    let path = bundle.join("bundle.json");
    let text = fs::read_to_string(&path).map_err(Error::io(&path))?;
    let malformed = |err: serde_json::Error| Error::Malformed {
        path: path.clone(),
        why: err.to_string(),
    };
    let value: serde_json::Value = serde_json::from_str(&text).map_err(malformed)?;
    let found = value["schema_version"].as_u64();
    if found != Some(u64::from(BUNDLE_SCHEMA)) {
        return Err(Error::Schema {
            path,
            found,
            want: BUNDLE_SCHEMA,
            what: "build the bundle again with this grader's `grader build`",
        });
    }
    serde_json::from_value(value).map_err(malformed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::catalogue::ExerciseId::{DotSm, VecaddAnyN};

    fn item(student: &str, exercise: ExerciseId, binary: &str) -> Item {
        Item {
            student: student.into(),
            exercise,
            problems: vec![],
            absent: None,
            refused: vec![],
            build_errors: None,
            binary: Some(binary.into()),
            digest: None,
            ptx_missing: vec![],
            ptx: None,
            canary: None,
        }
    }

    #[test]
    fn a_regraded_student_replaces_only_their_own_items() {
        let bundle = |seed, items| Bundle {
            schema_version: crate::build::bundle::BUNDLE_SCHEMA,
            seed,
            reference: Default::default(),
            broker: None,
            items,
            emulator: None,
        };
        let earlier = bundle(
            9,
            vec![
                item("ann", VecaddAnyN, "old-ann"),
                item("bo", VecaddAnyN, "old-bo"),
                item("bo", DotSm, "old-bo-dot"),
            ],
        );
        let fresh = bundle(9, vec![item("bo", VecaddAnyN, "new-bo")]);
        let merged = merged(earlier, fresh, &["bo".into()]);
        let got: Vec<(&str, &str)> = merged
            .items
            .iter()
            .map(|i| {
                (
                    i.student.as_str(),
                    i.binary.as_ref().unwrap().to_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(got, [("ann", "old-ann"), ("bo", "new-bo")]);
    }
}
