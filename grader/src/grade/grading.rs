//! A grading session: a bundle's exercises graded by each GPU's workers
//! (`Lane::workers`, for `--jobs` runs at a time; each exercise by
//! `grade::exercise`, its runs in the GPU's lanes, `run::lane`), each
//! student recorded once all their exercises are, and
//! results.json rewritten after each, so a killed grader loses no grade;
//! what an earlier results.json keeps (`--resume`: those graded from the
//! same inputs; `--student`: everyone else), and the refusals that keep one
//! results.json one grading (one seed, one confinement, one device).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, mpsc};

use crate::build::bundle::{Bundle, Item};
use crate::confine::gpus::Pin;
use crate::confine::runner::Limits;
use crate::confine::sandbox::Isolation;
use crate::error::{Error, Result};
use crate::grade::exercise::{self, Context};
use crate::grade::preflight::{self, Unbrokered};
use crate::record::results::{Results, Student};
use crate::run::lane::{Lane, Node};

#[derive(Clone)]
pub struct Settings {
    pub limits: Limits,
    /// Where the binaries run.
    pub isolation: Isolation,
    /// Skip students whose records results.json holds were graded from
    /// the same inputs (binary, plan, build outcome).
    pub resume: bool,
    /// Assess the memory-safety point: compute-sanitizer on a GPU, the
    /// emulator's own findings on it (`--no-sanitize`: not assessed).
    pub sanitize: bool,
    /// Only these students (`--student`), every other record kept; all
    /// when empty.
    pub only: Vec<String>,
    /// Run the kernels on the bundle's CPU emulator, at its capped sizes.
    pub emulate: bool,
    /// Exercises graded at once on each GPU (or on the emulator).
    pub jobs: usize,
    /// Exercises whose host runs are made without the broker on this
    /// node (`grade::preflight`); empty until the grading checks.
    pub unbrokered: Unbrokered,
}

impl Settings {
    /// What each exercise is graded with.
    pub fn context<'a>(
        &'a self,
        bundle: &'a Bundle,
        bundle_dir: &'a Path,
        (driver, emulator): (Option<&'a Path>, Option<&'a Path>),
        lane: &'a Lane,
    ) -> Context<'a> {
        Context {
            bundle,
            bundle_dir,
            isolation: &self.isolation,
            limits: self.limits,
            sanitize: self.sanitize,
            emulate: self.emulate,
            driver,
            emulator,
            lane,
            unbrokered: &self.unbrokered,
        }
    }
}

/// Grades `bundle` (read from `bundle_dir`) into `out`/results.json, on every GPU
/// of `gpus` (none: on the GPUs the runs see, or the emulator), `--jobs`
/// exercises at a time on each; `progress` is told each student as they
/// are recorded. Exercises are taken student by student, so students are
/// recorded about in order, and none waits for the whole class.
pub fn run(
    bundle: &Bundle,
    bundle_dir: &Path,
    out: &Path,
    settings: &Settings,
    gpus: &[Pin],
    mut progress: impl FnMut(&str),
) -> Result<Results> {
    let mut workers = pinned(settings, gpus)?;
    let Pending {
        mut results,
        path,
        students,
        driver,
        emulator,
    } = prepare(bundle, bundle_dir, out, settings)?;
    if !settings.emulate && !students.is_empty() {
        for worker in &mut workers {
            worker.unbrokered = preflight::unbrokered(bundle, bundle_dir, &worker.isolation);
            for (id, why) in &worker.unbrokered {
                eprintln!(
                    "grader: warning: the GPU broker could not serve the course's own {id} binary \
                     on this node ({why}); {id}'s host runs are made without it, their points \
                     resting on each student's report, rechecked, not on the broker's record"
                );
            }
        }
    }
    // Each student's exercises, in the bundle's order, and their record as
    // the exercises come in (a submission's problems are on each item).
    let mine = |student: &String| -> Vec<&Item> {
        (bundle.items.iter())
            .filter(|i| i.student == *student)
            .collect()
    };
    let per_student: Vec<Vec<&Item>> = students.iter().map(mine).collect();
    let mut left: Vec<usize> = per_student.iter().map(Vec::len).collect();
    let mut graded: Vec<Student> = per_student
        .iter()
        .map(|items| Student {
            problems: items
                .first()
                .map(|i| i.problems.clone())
                .unwrap_or_default(),
            exercises: BTreeMap::new(),
        })
        .collect();
    let items: Vec<(usize, &Item)> = per_student
        .iter()
        .enumerate()
        .flat_map(|(k, items)| items.iter().map(move |i| (k, *i)))
        .collect();
    // Several GPUs' lanes share the node: its host memory, and runs alone.
    let node = (workers.len() > 1).then(|| std::sync::Arc::new(Node::default()));
    let lanes: Vec<Lane> = workers
        .iter()
        .map(|w| {
            let index = w.isolation.gpu().map(|g| g.index);
            let lane = match &node {
                Some(node) => Lane::on_node(w.jobs, index, node.clone()),
                None => Lane::new(w.jobs, index),
            };
            // Every run's memory cap reserved from the node's room.
            lane.reserving_caps(settings.emulate)
        })
        .collect();
    // Exercises submitted: one not found is recorded, never run.
    let exercises = items.iter().filter(|(_, i)| i.absent.is_none()).count();
    let started = std::time::Instant::now();
    let mut timeline =
        std::env::var_os(TIMELINE_ENV).map(|path| Timeline::create(path.into(), lanes.len()));
    let queue = Mutex::new(items.into_iter());
    let (done, finished) = mpsc::channel();
    std::thread::scope(|scope| {
        for (worker, lane) in workers.iter().zip(&lanes) {
            for _ in 0..lane.workers() {
                let (queue, done) = (&queue, done.clone());
                let libraries = (driver.as_deref(), emulator.as_deref());
                scope.spawn(move || {
                    loop {
                        // The lock is held only to take an item, never while grading.
                        let next = queue.lock().map(|mut q| q.next()).ok().flatten();
                        let Some((k, item)) = next else { break };
                        let context = worker.context(bundle, bundle_dir, libraries, lane);
                        let started = std::time::Instant::now();
                        let exercise = exercise::grade(&context, item);
                        if item.absent.is_none() {
                            lane.mark_exercise(started);
                        }
                        if done.send((k, item.exercise.name(), exercise)).is_err() {
                            break;
                        }
                    }
                });
            }
        }
        // Only the workers hold senders now: the loop ends when they do.
        drop(done);
        for (k, name, exercise) in finished {
            graded[k].exercises.insert(name.to_owned(), exercise);
            left[k] -= 1;
            // As far as it goes: a grading stopped midway keeps the
            // timeline of the exercises it finished.
            if let Some(timeline) = &mut timeline {
                timeline.append(&lanes);
            }
            if left[k] == 0 {
                let record = std::mem::take(&mut graded[k]);
                results.students.insert(students[k].clone(), record);
                results.save(&path)?;
                progress(&students[k]);
            }
        }
        Ok::<(), Error>(())
    })?;
    if !students.is_empty() {
        say_where_time_went(exercises, started.elapsed().as_secs_f64(), &lanes);
    }
    if let Some(timeline) = &mut timeline {
        timeline.append(&lanes);
    }
    Ok(results)
}

/// The variable naming a file for the grading's timeline: a line per run,
/// per exercise submitted and graded (phase `exercise`) and per time a gated run had the
/// GPU alone (phase `alone`), `lane phase asked start end` (tab-separated,
/// seconds since the grading's lanes were made: when the worker asked for
/// the run's turn on the GPU, when the run started and when it ended; the
/// lane is the GPU's place in `--gpus`, 0 without), for seeing how many
/// runs were in flight when, and how long workers waited for a turn
/// (`bench/harness/timeline-phases.py`). Appended to as each exercise is graded.
pub const TIMELINE_ENV: &str = "GRADER_TIMELINE";

/// The grading's timeline file ([`TIMELINE_ENV`]), appended to as
/// exercises end: each lane's spans not yet written. A file that cannot be
/// written costs the timeline only, never the grading, with one warning.
struct Timeline {
    path: PathBuf,
    file: Option<File>,
    /// Spans of each lane already in the file.
    written: Vec<usize>,
}

impl Timeline {
    fn create(path: PathBuf, lanes: usize) -> Timeline {
        let file = File::create(&path).and_then(|mut file| {
            file.write_all(b"lane\tphase\tasked\tstart\tend\n")
                .map(|()| file)
        });
        let mut timeline = Timeline {
            path,
            file: None,
            written: vec![0; lanes],
        };
        match file {
            Ok(file) => timeline.file = Some(file),
            Err(err) => timeline.lost(&err),
        }
        timeline
    }

    /// Appends the spans the lanes have added since the last call.
    fn append(&mut self, lanes: &[Lane]) {
        let Some(file) = &mut self.file else { return };
        let mut text = String::new();
        for (k, (lane, written)) in lanes.iter().zip(&mut self.written).enumerate() {
            let spans = lane.timeline_since(*written);
            *written += spans.len();
            for span in spans {
                text.push_str(&format!(
                    "{k}\t{}\t{:.3}\t{:.3}\t{:.3}\n",
                    span.phase, span.asked, span.from, span.to
                ));
            }
        }
        if let Err(err) = file.write_all(text.as_bytes()) {
            self.lost(&err);
        }
    }

    fn lost(&mut self, err: &std::io::Error) {
        self.file = None;
        eprintln!(
            "grader: the timeline could not be written to {} ({err}); ${TIMELINE_ENV} names it",
            self.path.display()
        );
    }
}

/// One line on where a grading's time went: the wall time, and each
/// phase's runs and their seconds (summed over runs made at once, so they
/// may add up to more than the wall time).
fn say_where_time_went(exercises: usize, wall: f64, lanes: &[Lane]) {
    let mut spent: BTreeMap<&str, (u32, f64)> = BTreeMap::new();
    for (phase, (runs, seconds)) in lanes.iter().flat_map(Lane::spent) {
        let entry = spent.entry(phase).or_default();
        *entry = (entry.0 + runs, entry.1 + seconds);
    }
    let phases: Vec<String> = spent
        .iter()
        .map(|(phase, (runs, seconds))| format!("{phase} {runs} in {seconds:.1} s"))
        .collect();
    let jobs: usize = lanes.iter().map(Lane::jobs).sum();
    eprintln!(
        "grader: {exercises} exercises graded in {wall:.1} s with {jobs} at a time ({:.1} a minute); {}",
        if wall > 0.0 {
            exercises as f64 * 60.0 / wall
        } else {
            0.0
        },
        if phases.is_empty() {
            "no runs".to_owned()
        } else {
            phases.join(", ")
        }
    );
}

/// One worker group's settings per GPU of `gpus`, each with runs pinned to
/// it; without `gpus`, the settings as they are.
fn pinned(settings: &Settings, gpus: &[Pin]) -> Result<Vec<Settings>> {
    if gpus.is_empty() {
        return Ok(vec![settings.clone()]);
    }
    gpus.iter()
        .map(|gpu| {
            let isolation = settings.isolation.on_gpu(gpu).ok_or_else(|| {
                Error::Usage(
                    "--gpus needs the sandbox, which lets each run see only its GPU; without \
                     it, start one `grader run --shard K/N` per GPU with CUDA_VISIBLE_DEVICES \
                     set, then `grader merge`"
                        .into(),
                )
            })?;
            Ok(Settings {
                isolation,
                ..settings.clone()
            })
        })
        .collect()
}

/// A grading about to start: the records kept from an earlier
/// results.json, and who is left to grade.
pub struct Pending {
    pub results: Results,
    /// `out`/results.json, to be saved after each student.
    pub path: PathBuf,
    /// The students to grade, in id order.
    pub students: Vec<String>,
    /// The bundle's CPU emulator library, when the kernels run on it.
    pub driver: Option<PathBuf>,
    /// The bundle's CPU emulator library, checked, wherever the kernels
    /// run (the lesson point's runs); None where the bundle has none.
    pub emulator: Option<PathBuf>,
}

/// Loads what `out`/results.json keeps of `bundle`'s grading (`--resume`,
/// `--student`), and says who is left to grade.
pub fn prepare(
    bundle: &Bundle,
    bundle_dir: &Path,
    out: &Path,
    settings: &Settings,
) -> Result<Pending> {
    let path = out.join("results.json");
    let keep_others = !settings.only.is_empty();
    let mut results = if (settings.resume || keep_others) && path.exists() {
        // Records whose points do not check are graded again below.
        let earlier = if settings.resume {
            Results::load_unverified(&path)?
        } else {
            Results::load(&path)?
        };
        if earlier.seed != bundle.seed {
            return Err(Error::Usage(format!(
                "{}: {} was graded with seed {}, the bundle has {}",
                if settings.resume {
                    "--resume"
                } else {
                    "--student"
                },
                path.display(),
                earlier.seed,
                bundle.seed
            )));
        }
        forget(earlier, &settings.only, settings.resume)
    } else {
        Results::new(bundle.seed)
    };
    crate::discover::selection::check_known(
        bundle.items.iter().map(|i| i.student.as_str()),
        &settings.only,
    )?;
    let sandbox = settings.isolation.description();
    if results.sandbox != sandbox {
        // One results.json says how all its records were made: regrading
        // some students under another confinement would mix the two.
        if keep_others && !results.students.is_empty() {
            return Err(Error::Usage(format!(
                "--student: {} was graded {}, this run would be {}; regrade with the same \
                 confinement, or grade the whole class again",
                path.display(),
                confinement(results.sandbox.as_deref()),
                confinement(sandbox.as_deref())
            )));
        }
        // Records made under another confinement are not carried over: the
        // reports say how all of them were made.
        results.students.clear();
    }
    results.sandbox = sandbox;
    results.grader = Some(crate::record::results::this_grader());
    let driver = crate::run::device::driver(bundle_dir, bundle, settings.emulate)?;
    let emulator = match &driver {
        Some(driver) => Some(driver.clone()),
        None => crate::build::emulator_library::verified(bundle_dir, bundle.emulator.as_ref())
            .inspect_err(|err| {
                eprintln!("grader: warning: lesson points are not assessed: {err}");
            })
            .ok(),
    };
    if results.emulated != settings.emulate {
        if keep_others && !results.students.is_empty() {
            return Err(mixed(&path, results.emulated));
        }
        results.students.clear();
    }
    results.emulated = settings.emulate;
    let mut by_student: BTreeMap<&str, Vec<&Item>> = BTreeMap::new();
    for item in &bundle.items {
        by_student.entry(&item.student).or_default().push(item);
    }
    // Who is no longer in the bundle is no longer in the results.
    results
        .students
        .retain(|student, _| by_student.contains_key(student.as_str()));
    let mut students = Vec::new();
    for (student, items) in by_student {
        let chosen = settings.only.is_empty() || settings.only.iter().any(|s| s == student);
        // Kept only when every record was graded from these very inputs.
        let unchanged = results.students.get(student).is_some_and(|earlier| {
            earlier.exercises.len() == items.len()
                && items.iter().all(|item| {
                    earlier
                        .exercises
                        .get(item.exercise.name())
                        .is_some_and(|e| {
                            e.inflated(item.exercise.name()).is_none()
                                && e.inputs.is_some()
                                && e.inputs
                                    == exercise::inputs(
                                        bundle,
                                        bundle_dir,
                                        settings.sanitize,
                                        settings.emulate,
                                        item,
                                    )
                        })
                })
        });
        if chosen && !unchanged {
            students.push(student.to_owned());
        }
    }
    Ok(Pending {
        results,
        path,
        students,
        driver,
        emulator,
    })
}

/// Earlier results with the students to regrade taken out; with
/// `--resume` too, those already graded stay and are skipped.
fn forget(mut earlier: Results, students: &[String], resume: bool) -> Results {
    if !resume {
        earlier.students.retain(|name, _| !students.contains(name));
    }
    earlier
}

/// How a results.json's records were confined, in words.
fn confinement(sandbox: Option<&str>) -> String {
    match sandbox {
        Some(sandbox) => format!("in the sandbox ({sandbox})"),
        None => "with --no-sandbox".to_owned(),
    }
}

/// Why `--student` cannot regrade some students on another device than
/// the rest were graded on.
fn mixed(results: &Path, was_emulated: bool) -> Error {
    let (was, now) = if was_emulated {
        ("on the CPU emulator", "on a GPU")
    } else {
        ("on a GPU", "on the CPU emulator")
    };
    Error::Usage(format!(
        "--student: {} was graded {was}, this run would be {now}; regrade with the same \
         device (--emulate or --no-emulate), or grade the whole class again",
        results.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timeline_gets_each_span_once_as_it_is_appended_to() {
        use crate::run::lane::Use;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("timeline.tsv");
        let lanes = [Lane::new(1, None), Lane::new(1, Some(1))];
        let mut timeline = Timeline::create(path.clone(), lanes.len());
        lanes[0].run_as("first", Use::Shared, |_| ());
        timeline.append(&lanes);
        lanes[1].run_as("second", Use::Shared, |_| ());
        lanes[0].run_as("third", Use::Shared, |_| ());
        timeline.append(&lanes);
        timeline.append(&lanes);
        let text = std::fs::read_to_string(&path).unwrap();
        let rows: Vec<(&str, &str)> = text
            .lines()
            .map(|l| {
                let mut cells = l.split('\t');
                (cells.next().unwrap(), cells.next().unwrap())
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("lane", "phase"),
                ("0", "first"),
                ("0", "third"),
                ("1", "second")
            ]
        );
        // A file that cannot be made costs the timeline only.
        let mut lost = Timeline::create(dir.path().join("no/such/folder/t.tsv"), 1);
        lost.append(&lanes[..1]);
        assert!(lost.file.is_none());
    }

    #[test]
    fn forget_keeps_everyone_else_and_with_resume_everyone() {
        let mut earlier = Results::new(4);
        for name in ["ann", "bo"] {
            let record = Student {
                problems: vec![],
                exercises: Default::default(),
            };
            earlier.students.insert(name.into(), record);
        }
        let kept = forget(earlier.clone(), &["bo".into()], false);
        assert_eq!(kept.students.keys().collect::<Vec<_>>(), ["ann"]);
        assert_eq!(forget(earlier.clone(), &["bo".into()], true), earlier);
    }
}
