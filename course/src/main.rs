//! `cargo course <verb>`: the student's side of the course. Which exercise
//! next, what to write, whether it is done. A thin main: parse, dispatch,
//! map the outcome to an exit code.
//!
//! Exit codes (`kernels::exit_code::ToolExit`): 0 done or nothing wrong, 1
//! the exercise is not done yet (or reset was not confirmed), 2 bad input
//! (an unknown exercise or step).

mod check;
mod list;
mod reset;
mod text;
mod watch;
mod workspace;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use kernels::exit_code::ToolExit;

use workspace::{Problem, Workspace};

/// The cuda-course exercises: progress, hints, checks.
#[derive(Parser, Debug)]
#[command(name = "cargo course")]
struct Cli {
    /// The course workspace [default: the one holding the current folder].
    #[arg(long, global = true, hide = true)]
    root: Option<PathBuf>,

    #[command(subcommand)]
    verb: Verb,
}

#[derive(Subcommand, Debug)]
enum Verb {
    /// Every exercise in course order with its state, and a progress bar.
    List,
    /// The first exercise not done yet, and where to start on it.
    Next,
    /// One hint: for the first step not written yet, or for STEP.
    Hint { exercise: String, step: Option<u32> },
    /// Build the exercise, look at its PTX, run it and say whether it is done.
    Check {
        exercise: String,
        /// Check this exercise binary, built elsewhere, instead of building
        /// (for a GPU machine without Rust).
        #[arg(long, value_name = "BINARY", hide = true)]
        prebuilt: Option<PathBuf>,
        /// Show the hardware counters the CPU emulator counts for the
        /// kernel (coalescing, bank conflicts, active lanes), as the
        /// exercises with a speed point always do.
        #[arg(long)]
        counters: bool,
        /// Flags for the exercise's program, after `--`, to check it where
        /// a bug shows: `cargo course check dot-sm -- --n 1000 --threads 128`.
        #[arg(last = true, value_name = "FLAGS")]
        flags: Vec<String>,
    },
    /// Check again on every save of the exercise's files (Ctrl-C stops).
    Watch { exercise: Option<String> },
    /// Put the exercise back to its stub (asks first, unless --yes).
    Reset {
        exercise: String,
        /// Do not ask; reset at once.
        #[arg(long)]
        yes: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(Problem::BadInput(message)) => {
            eprintln!("error: {message}");
            ToolExit::Stopped.into()
        }
        Err(Problem::Failed(message)) => {
            eprintln!("error: {message}");
            ToolExit::Short.into()
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode, Problem> {
    let workspace = Workspace::find(cli.root)?;
    match cli.verb {
        Verb::List => list::list(&workspace),
        Verb::Next => list::next(&workspace),
        Verb::Hint { exercise, step } => list::hint(&workspace, &exercise, step),
        Verb::Check {
            exercise,
            prebuilt,
            counters,
            flags,
        } => {
            let exercise = workspace::exercise(&exercise)?;
            // Absolute: the binary runs from the workspace root.
            let prebuilt = prebuilt
                .map(|path| {
                    path.canonicalize().map_err(|err| {
                        Problem::BadInput(format!("--prebuilt {}: {err}", path.display()))
                    })
                })
                .transpose()?;
            check::check(&workspace, exercise, prebuilt.as_deref(), counters, &flags)
                .map(check::Verdict::exit_code)
        }
        Verb::Watch { exercise } => watch::watch(&workspace, exercise.as_deref()),
        Verb::Reset { exercise, yes } => reset::reset(&workspace, &exercise, yes),
    }
}
