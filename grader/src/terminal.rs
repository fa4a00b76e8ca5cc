//! How the `grader` command shows progress: a bar on a terminal, a line per
//! step where there is none (a log, CI), fed by the library's callbacks.

use std::time::Duration;

use grader::build::bundle::Progress as Built;
use grader::build::command::Step;
use grader::grade::command::Progress;
use indicatif::{ProgressBar, ProgressStyle};

fn bar(template: &str) -> ProgressBar {
    ProgressBar::new(0)
        .with_style(ProgressStyle::with_template(template).expect("a fixed template"))
}

/// A build's progress: students built of all, and who is building.
pub struct BuildBar(ProgressBar);

impl BuildBar {
    pub fn new() -> BuildBar {
        BuildBar(bar("{bar:30} {pos}/{len} students built, {elapsed} {msg}"))
    }

    pub fn step(&self, step: Step) {
        let bar = &self.0;
        match step {
            Step::Seeded { seed, submissions } => {
                bar.set_message(format!(
                    "dependencies of {} (seed {seed})",
                    submissions.display()
                ));
                bar.enable_steady_tick(Duration::from_millis(120));
            }
            Step::Bundle(Built::Preparing) => bar.set_message("compiling the dependencies, once"),
            Step::Bundle(Built::Building {
                student,
                done,
                total,
            }) => {
                bar.set_length(*total as u64);
                bar.set_position(*done as u64);
                bar.set_message(student.to_string());
                if bar.is_hidden() {
                    eprintln!("grader: building {} of {total}", done + 1);
                }
            }
            Step::Bundle(Built::Done) => bar.set_position(bar.length().unwrap_or(0)),
        }
    }

    /// Gone from the terminal, whether the build ended well or not.
    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// A grading's progress: students graded of all, and who was last.
pub struct RunBar(ProgressBar);

impl RunBar {
    pub fn new() -> RunBar {
        RunBar(bar("{bar:30} {pos}/{len} students, {elapsed} {msg}"))
    }

    pub fn step(&self, step: Progress) {
        let bar = &self.0;
        match step {
            Progress::Students(count) => bar.set_length(count as u64),
            Progress::Graded(student) => {
                // A bar on a terminal; a line per student where there is none.
                if bar.is_hidden() {
                    // Escaped: a name cannot start a line that looks like the grader's.
                    eprintln!("grader: graded {}", student.escape_debug());
                }
                bar.set_message(student.to_owned());
                bar.inc(1);
            }
            Progress::Done => bar.finish_and_clear(),
        }
    }
}

/// Runs `build` with a build bar, gone from the terminal afterwards
/// whether it ended well or not.
pub fn building<T>(build: impl FnOnce(&dyn Fn(Step)) -> T) -> T {
    let bar = BuildBar::new();
    let done = build(&|step| bar.step(step));
    bar.finish();
    done
}

/// Runs `grade` with a grading bar.
pub fn grading<T>(grade: impl FnOnce(&mut dyn FnMut(Progress)) -> T) -> T {
    let bar = RunBar::new();
    grade(&mut |progress| bar.step(progress))
}
