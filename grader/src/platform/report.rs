//! A grading as the platforms show it: a test per planned run and per
//! point that is not a run's, each with its points and the grader's own
//! words for it, the whole feedback as Markdown, and the confinement the
//! student's code ran in; or, for an upload that could not be graded,
//! why, with no points. Made from results.json alone, as every other
//! report is (`record`). Where the instructor fixed the seed, every seed
//! a student could see (the plan's and each run's `--seed`) is replaced
//! by `(hidden)`.

use std::fmt::Write;

use crate::plan::runs::Role;
use crate::platform::upload::{STUDENT, Unfit};
use crate::record::results::{Exercise, Results};
use crate::record::{quote, render, reports};

/// One test as every platform has it.
#[derive(Debug, Clone, PartialEq)]
pub struct Test {
    pub name: String,
    pub points: u32,
    pub max_points: u32,
    /// Markdown.
    pub output: String,
    /// Whether it counts as passed (full points, or a check that found
    /// nothing wrong).
    pub passed: bool,
}

/// What a platform's results.json is made from.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Whether the upload could be graded at all.
    pub gradable: bool,
    /// One line: the points, or why there are none.
    pub message: String,
    pub tests: Vec<Test>,
    pub points: u32,
    pub max_points: u32,
    /// The whole feedback, Markdown.
    pub feedback: String,
    /// Seconds the grading took.
    pub seconds: u64,
}

/// The test that says how the upload was read: always shown.
pub const SUBMISSION_TEST: &str = "Your upload";

/// The graded student's report; `notes` on how the upload was read,
/// `confinement` in words, `hide` where the seed is the instructor's.
pub fn graded(results: &Results, notes: &[String], confinement: &str, hide: bool) -> Report {
    let student = results.students.get(STUDENT).cloned().unwrap_or_default();
    let mut tests = vec![submission_test(notes, true, "")];
    for (name, exercise) in &student.exercises {
        tests.extend(exercise_tests(name, exercise));
    }
    let (points, max_points) = student.points();
    let mut feedback =
        reports::feedback("your submission", &student, results.seed) + &reports::emulated(results);
    let _ = write!(feedback, "\nYour code ran confined: {confinement}.\n");
    if !notes.is_empty() {
        feedback.push_str("\nHow your upload was read:\n\n");
        for note in notes {
            let _ = writeln!(feedback, "- {}", quote::inline(note));
        }
    }
    let mut report = Report {
        gradable: true,
        message: format!("{points} of {max_points} points"),
        tests,
        points,
        max_points,
        feedback,
        seconds: 0,
    };
    if hide {
        report.hide(results.seed, &seeds(results));
    }
    report
}

/// The report of an upload that could not be graded: no points, and why.
pub fn unfit(unfit: &Unfit, max_points: u32) -> Report {
    let message = unfit.message();
    let notes = unfit.notes();
    Report {
        gradable: false,
        message: message.clone(),
        tests: vec![submission_test(notes, false, &message)],
        points: 0,
        max_points,
        feedback: format!(
            "# Your upload could not be graded\n\n{}\n",
            quote::inline(&message)
        ) + &notes_list(notes),
        seconds: 0,
    }
}

/// The report of a grading the autograder itself could not finish: no
/// points, and it says it was not the student's doing.
pub fn failed(why: &str, max_points: u32) -> Report {
    let message = format!(
        "The autograder could not grade your upload ({}). This is not your code's fault: \
         tell your instructor.",
        why.trim_end_matches('.')
    );
    Report {
        gradable: false,
        message: message.clone(),
        tests: vec![],
        points: 0,
        max_points,
        feedback: format!("# Not graded\n\n{}\n", quote::inline(&message)),
        seconds: 0,
    }
}

fn notes_list(notes: &[String]) -> String {
    notes
        .iter()
        .map(|n| format!("- {}\n", quote::inline(n)))
        .collect()
}

fn submission_test(notes: &[String], passed: bool, message: &str) -> Test {
    let mut output = String::new();
    if !message.is_empty() {
        output = format!("{}\n\n", quote::inline(message));
    }
    output += &notes_list(notes);
    if output.is_empty() {
        output = "Your upload was read as it is.\n".into();
    }
    Test {
        name: SUBMISSION_TEST.into(),
        points: 0,
        max_points: 0,
        output,
        passed,
    }
}

/// One exercise's tests: the PTX point, each run, each assessed check;
/// one test holding all its points where it did not build or was absent.
fn exercise_tests(name: &str, exercise: &Exercise) -> Vec<Test> {
    let whole = |output: String| {
        vec![Test {
            name: format!("{name}: builds and runs"),
            points: exercise.points,
            max_points: exercise.max_points,
            output,
            passed: exercise.points == exercise.max_points,
        }]
    };
    if let Some(errors) = &exercise.build_errors {
        return whole(format!(
            "It did not build:\n\n{}",
            quote::fenced(&quote::errors_first(errors), "text")
        ));
    }
    if let Some(absent) = &exercise.absent {
        return whole(format!("Not graded: {}.\n", quote::inline(absent)));
    }
    let assessed: Vec<_> = exercise.checks.iter().filter(|c| c.assessed).collect();
    let run_points =
        |f: fn(&crate::record::results::Run) -> u32| exercise.runs.iter().map(f).sum::<u32>();
    let check_points =
        |f: fn(&crate::record::results::Check) -> u32| assessed.iter().map(|c| f(c)).sum::<u32>();
    let ptx_max = exercise
        .max_points
        .checked_sub(run_points(|r| r.max_points) + check_points(|c| c.max_points));
    let ptx_points = exercise
        .points
        .checked_sub(run_points(|r| r.points) + check_points(|c| c.points));
    let (Some(ptx_max @ 0..=1), Some(ptx_points)) = (ptx_max, ptx_points) else {
        // Points that do not add up as this report expects: one test,
        // the grader's whole feedback for the exercise is in the output.
        return whole("See the feedback above.\n".into());
    };
    let mut tests = vec![Test {
        name: format!("{name}: the kernel shows what the exercise is about (PTX)"),
        points: ptx_points,
        max_points: ptx_max,
        output: ptx_words(exercise),
        passed: ptx_points == ptx_max,
    }];
    for run in &exercise.runs {
        let whose = match run.role {
            Some(Role::KernelInCourseHost) => "your kernel in the course's host code",
            Some(Role::StudentHost) | None => "your binary",
        };
        let said = render::verdict(&run.verdict, &run.findings);
        let output = if run.verdict.passed() && run.findings.is_empty() {
            "passed\n".to_owned()
        } else {
            quote::fenced(&said, "text")
        };
        tests.push(Test {
            name: format!("{name}: {}, {whose}", run.about()),
            points: run.points,
            max_points: run.max_points,
            output,
            passed: !run.lost(),
        });
    }
    for check in assessed {
        tests.push(Test {
            name: format!("{name}: {}", check.name),
            points: check.points,
            max_points: check.max_points,
            output: quote::inline(&render::check(check, &exercise.runs, &exercise.sanitizer))
                + "\n",
            passed: check.passed,
        });
    }
    tests
}

fn ptx_words(exercise: &Exercise) -> String {
    if !exercise.ptx_missing.is_empty() {
        let mut said = "The kernel does not show what the exercise is about, so its runs earn \
                        no points:\n\n"
            .to_owned();
        for missing in &exercise.ptx_missing {
            let _ = writeln!(said, "- {}", quote::inline(missing));
        }
        return said;
    }
    match exercise.kernel_lost {
        Some(tag) => format!(
            "The kernel shows what the exercise is about, but it did not pass the run \
             \"{}\": the PTX, memory-safety and speed points go only to a kernel that passes \
             every planned run.\n",
            exercise
                .runs
                .iter()
                .find(|r| r.tag == tag)
                .map_or_else(|| tag.to_string(), |r| r.about())
        ),
        None => "The kernel shows what the exercise is about.\n".into(),
    }
}

/// The seeds a student could read in the grading's words: each run's
/// `--seed` (the plan's own is said in one phrase, hidden apart).
fn seeds(results: &Results) -> Vec<String> {
    let mut seeds = Vec::new();
    for student in results.students.values() {
        for exercise in student.exercises.values() {
            for run in &exercise.runs {
                let mut words = run.command.iter();
                while let Some(word) = words.next() {
                    if word == "--seed" {
                        seeds.extend(words.next().cloned());
                    }
                }
            }
        }
    }
    seeds
}

/// `text` with every seed of `results` hidden, as a report hides them:
/// for the grader's log, where the seed is the instructor's.
pub fn hide_in(text: &str, results: &Results) -> String {
    let mut text = without_number(text, &results.seed.to_string());
    for seed in seeds(results) {
        text = without_number(&text, &seed);
    }
    text
}

/// `text` with every whole number equal to `number` (no digit on either
/// side) replaced by `(hidden)`.
pub fn without_number(text: &str, number: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(number) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + number.len()..].chars().next();
        let whole = !before.is_some_and(|c| c.is_ascii_digit())
            && !after.is_some_and(|c| c.is_ascii_digit());
        out.push_str(&rest[..at]);
        out.push_str(if whole { "(hidden)" } else { number });
        rest = &rest[at + number.len()..];
    }
    out.push_str(rest);
    out
}

impl Report {
    /// Hides the plan's seed and every one of `seeds` in the report's
    /// words.
    fn hide(&mut self, plan: u64, seeds: &[String]) {
        let phrase = format!("test plan seed {plan}");
        let hide = |text: &mut String| {
            *text = text.replace(&phrase, "test plan seed hidden");
            for seed in seeds {
                *text = without_number(text, seed);
            }
        };
        hide(&mut self.feedback);
        hide(&mut self.message);
        for test in &mut self.tests {
            hide(&mut test.output);
            hide(&mut test.name);
        }
    }
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
