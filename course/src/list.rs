//! `list`, `next` and `hint`: where the student stands and what to do next,
//! read from the catalogue and the exercise files, without building.

use std::process::ExitCode;

use kernels::exit_code::ToolExit;

use kernels::catalogue::{EXERCISES, Exercise};

use crate::text::wrap;
use crate::workspace::{self, Problem, State, Workspace};

/// Width of the progress bar in characters.
const BAR: usize = 32;

/// Every exercise with its state, then a progress bar.
pub fn list(workspace: &Workspace) -> Result<ExitCode, Problem> {
    let name_width = EXERCISES.iter().map(|e| e.name.len()).max().unwrap_or(0);
    let mut done = 0;
    let next = workspace.next_exercise().map(|e| e.name);
    for (index, exercise) in EXERCISES.iter().enumerate() {
        let state = workspace.state(exercise);
        done += usize::from(state == State::Done);
        let pointer = if Some(exercise.name) == next {
            ">"
        } else {
            " "
        };
        println!(
            "{pointer} {number}. {name:<name_width$}  {state:<30} {title}",
            number = index + 1,
            name = exercise.name,
            state = state.describe(exercise),
            title = exercise.title,
        );
    }
    let total = EXERCISES.len();
    let filled = BAR * done / total;
    println!();
    println!(
        "[{}{}] {done} of {total} done on this machine",
        "#".repeat(filled),
        "-".repeat(BAR - filled)
    );
    match next {
        Some(name) => println!("Next: {name}. `cargo course next` says where to start."),
        None => println!("Every exercise is done here. Well done."),
    }
    Ok(ToolExit::Done.into())
}

/// The first exercise not done, with where to start on it.
pub fn next(workspace: &Workspace) -> Result<ExitCode, Problem> {
    let Some(exercise) = workspace.next_exercise() else {
        println!("Every exercise is done on this machine: the course is done.");
        return Ok(ToolExit::Done.into());
    };
    let state = workspace.state(exercise);
    println!("{}: {}", exercise.name, exercise.title);
    println!("{}", exercise.summary);
    println!("Read: {}", exercise.chapter());
    println!();
    match workspace.steps_left(exercise).first() {
        Some(&number) => {
            let step = exercise.step(number).expect("a step of the exercise");
            println!(
                "Step {number} of {} is next, in exercises/{}/{}:",
                exercise.steps.len(),
                exercise.name,
                step.file.path()
            );
            print!("{}", wrap("  ", step.task));
            println!();
            let text = format!(
                "Stuck? `cargo course hint {}`. Check your work: `cargo course check {}`.",
                exercise.name, exercise.name
            );
            print!("{}", wrap("", &text));
        }
        None => {
            println!("Every step is written ({}).", state.describe(exercise));
            println!("Check it: `cargo course check {}`.", exercise.name);
        }
    }
    Ok(ToolExit::Done.into())
}

/// One hint: for `step`, or for the first step not written yet.
pub fn hint(workspace: &Workspace, name: &str, step: Option<u32>) -> Result<ExitCode, Problem> {
    let exercise = workspace::exercise(name)?;
    let number = match step {
        Some(number) => number,
        None => match workspace.steps_left(exercise).first() {
            Some(&number) => number,
            None => {
                let text = format!(
                    "Every step of {} is written. For a hint on one, name it: \
                     `cargo course hint {} <step>` (1 to {}).",
                    exercise.name,
                    exercise.name,
                    exercise.steps.len()
                );
                print!("{}", wrap("", &text));
                return Ok(ToolExit::Done.into());
            }
        },
    };
    let step = step_of(exercise, number)?;
    println!(
        "{} step {number} of {} ({}):",
        exercise.name,
        exercise.steps.len(),
        step.file.path()
    );
    print!("{}", wrap("  ", step.task));
    println!();
    print!("{}", wrap("Hint: ", step.hint));
    Ok(ToolExit::Done.into())
}

fn step_of(exercise: &Exercise, number: u32) -> Result<&'static kernels::catalogue::Step, Problem> {
    exercise.step(number).ok_or_else(|| {
        Problem::BadInput(format!(
            "{} has no step {number}; its steps are 1 to {}",
            exercise.name,
            exercise.steps.len()
        ))
    })
}
