//! A grading session: a bundle graded student by student (each exercise
//! by `judge::exercise`), results.json rewritten after each, so a killed
//! grader loses no grade; what an earlier results.json keeps (`--resume`:
//! those graded from the same inputs; `--student`: everyone else), and the
//! refusals that keep one results.json one grading (one seed, one
//! confinement, one device).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::build::bundle::{self, Bundle, Item};
use crate::confine::runner::Limits;
use crate::confine::sandbox::Isolation;
use crate::error::{Error, Result};
use crate::judge::exercise::{self, Context};
use crate::record::results::{Results, Student};

#[derive(Clone)]
pub struct Settings {
    pub limits: Limits,
    /// Where the binaries run.
    pub isolation: Isolation,
    /// Skip students whose records results.json holds were graded from
    /// the same inputs (binary, plan, build outcome).
    pub resume: bool,
    /// Run compute-sanitizer on each exercise's first run, for the
    /// memory-safety point (`--no-sanitize`: not assessed).
    pub sanitize: bool,
    /// Only these students (`--student`), every other record kept; all
    /// when empty.
    pub only: Vec<String>,
    /// Run the kernels on the bundle's CPU emulator, at its capped sizes.
    pub emulate: bool,
}

impl Settings {
    /// What each exercise is graded with.
    pub fn context<'a>(
        &'a self,
        bundle: &'a Bundle,
        bundle_dir: &'a Path,
        driver: Option<&'a Path>,
    ) -> Context<'a> {
        Context {
            bundle,
            bundle_dir,
            isolation: &self.isolation,
            limits: self.limits,
            sanitize: self.sanitize,
            emulate: self.emulate,
            driver,
        }
    }
}

/// Grades the bundle at `bundle_dir` into `out`/results.json; `progress` is
/// told each student as they are done.
pub fn run(
    bundle_dir: &Path,
    out: &Path,
    settings: &Settings,
    mut progress: impl FnMut(&str),
) -> Result<Results> {
    let Pending {
        bundle,
        mut results,
        path,
        students,
        driver,
    } = prepare(bundle_dir, out, settings)?;
    for student in students {
        let graded = grade_student(bundle_dir, &bundle, &student, settings, driver.as_deref());
        results.students.insert(student.clone(), graded);
        results.save(&path)?;
        progress(&student);
    }
    Ok(results)
}

/// A grading about to start: the bundle, the records kept from an earlier
/// results.json, and who is left to grade.
pub struct Pending {
    pub bundle: Bundle,
    pub results: Results,
    /// `out`/results.json, to be saved after each student.
    pub path: PathBuf,
    /// The students to grade, in id order.
    pub students: Vec<String>,
    /// The bundle's CPU emulator library, when the kernels run on it.
    pub driver: Option<PathBuf>,
}

/// Loads the bundle and what `out`/results.json keeps (`--resume`,
/// `--student`), and says who is left to grade.
pub fn prepare(bundle_dir: &Path, out: &Path, settings: &Settings) -> Result<Pending> {
    let bundle = bundle::load(bundle_dir)?;
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
    let driver = crate::run::device::driver(bundle_dir, &bundle, settings.emulate)?;
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
                                        &settings.context(&bundle, bundle_dir, driver.as_deref()),
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
        bundle,
        results,
        path,
        students,
        driver,
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

/// Grades every exercise of `student` in the bundle.
pub fn grade_student(
    bundle_dir: &Path,
    bundle: &Bundle,
    student: &str,
    settings: &Settings,
    driver: Option<&Path>,
) -> Student {
    let items: Vec<&Item> = bundle
        .items
        .iter()
        .filter(|i| i.student == student)
        .collect();
    Student {
        problems: items
            .first()
            .map(|i| i.problems.clone())
            .unwrap_or_default(),
        exercises: items
            .iter()
            .map(|item| {
                let context = settings.context(bundle, bundle_dir, driver);
                (
                    item.exercise.name().to_owned(),
                    exercise::grade(&context, item),
                )
            })
            .collect(),
    }
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
