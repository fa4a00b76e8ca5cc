//! `grader`: builds students' submissions, runs them on the GPU, judges them
//! and writes grades and feedback. Parses ([`cli`]), dispatches to the
//! library's commands, shows their progress ([`terminal`]) and maps their
//! outcome to an exit code (`kernels::exit_code::ToolExit`).

mod cli;
mod terminal;

use std::process::ExitCode;

use clap::Parser;
use cli::{AutograderCommand, Cli, Command, MutantsCommand, grading};
use grader::build::command as build;
use grader::confine::sandbox::Isolation;
use grader::discover::checkout::course;
use grader::error::{Error, Result};
use grader::grade::check::{self, Check};
use grader::grade::command as run;
use grader::instructor::{mutants, similarity, slurm};
use grader::record::{export, merge, reports, results::Results};
use kernels::exit_code::ToolExit;

fn main() -> ExitCode {
    match dispatch(Cli::parse().command) {
        Ok(exit) => exit.into(),
        Err(err) => {
            eprintln!("grader: error: {err}");
            err.exit().into()
        }
    }
}

fn dispatch(command: Command) -> Result<ToolExit> {
    match command {
        Command::Build(args) => {
            let isolation = Isolation::choose(args.safety.no_sandbox)?;
            let course = course(args.choose.course.as_deref())?;
            let options = args.options(&course, &isolation);
            terminal::building(|progress| build::build(options, progress))?;
        }
        Command::Run(args) => {
            let isolation = Isolation::choose(args.safety.no_sandbox)?;
            let (running, students) = (args.running.options(&args.jobs), args.students);
            let asked = grading(
                &args.bundle,
                &args.out,
                running,
                isolation,
                students,
                Some(&args.scale),
            )?;
            let results = terminal::grading(|progress| run::run(asked, progress))?;
            print!("{}", reports::summary(&results));
        }
        Command::Grade(args) => {
            let (choose, out) = (&args.choose, &args.out);
            let isolation = Isolation::choose(args.safety.no_sandbox)?;
            let (students, bundle) = (choose.students.clone(), out.join("bundle"));
            let asked = grading(
                &bundle,
                out,
                args.running.options(&args.jobs),
                isolation.clone(),
                students,
                None,
            )?;
            let course = course(choose.course.as_deref())?;
            let options = args.options(&course, &bundle, &isolation);
            terminal::building(|progress| build::build(options, progress))?;
            let results = terminal::grading(|progress| run::run(asked, progress))?;
            similarity::command(&course, &args.submissions, &choose.exercises, out)?;
            print!("{}", reports::summary(&results));
        }
        Command::Merge {
            out,
            shards,
            bundle,
        } => {
            grader::grade::shard::check_partition(&bundle, &shards)?;
            print!("{}", reports::summary(&merge::merge(&out, &shards)?));
        }
        Command::Slurm(args) => {
            let grader = match &args.grader {
                Some(path) => path.clone(),
                None => std::env::current_exe()
                    .map_err(|err| Error::Tool(format!("this grader's path: {err}")))?,
            };
            slurm::command(&args.job(&grader), args.submit)?;
        }
        Command::Report { dir } => print!("{}", reports::summary(&reports::rewrite(&dir)?)),
        Command::Export(args) => {
            let to = (args.to.clone()).unwrap_or_else(|| args.dir.join(args.lms.file_name()));
            export::command(&args.dir, args.lms, args.roster.as_deref(), &to)?;
        }
        Command::Similarity(args) => {
            let course = course(args.course.as_deref())?;
            similarity::command(&course, &args.submissions, &[], &args.out)?;
        }
        Command::Check(args) => {
            let isolation = Isolation::choose(args.safety.no_sandbox)?;
            let course = course(None)?;
            let asked = Check {
                course: &course,
                exercise: args.exercise,
                folder: args.path,
                running: args.running.options(&args.jobs),
                isolation,
                seed: args.seed,
            };
            let checked = terminal::building(|built| {
                terminal::grading(|graded| check::check(asked, built, graded))
            })?;
            print!("{}", checked.feedback);
            let (got, max) = checked.student.points();
            return Ok(if got == max {
                ToolExit::Done
            } else {
                ToolExit::Short
            });
        }
        Command::Mutants(MutantsCommand::Write { dir }) => {
            mutants::write_class(&course(None)?, &dir)?;
        }
        Command::Mutants(MutantsCommand::Verify { dir }) => {
            let broken = mutants::verify(&Results::load(&dir.join("results.json"))?);
            for line in &broken {
                println!("broken: {line}");
            }
            println!(
                "{} expectations, {} broken",
                mutants::expectations(),
                broken.len()
            );
            return Ok(if broken.is_empty() {
                ToolExit::Done
            } else {
                ToolExit::Short
            });
        }
        Command::Autograder(command) => autograder(command)?,
        Command::Mutants(MutantsCommand::Listing { dir }) => {
            print!(
                "{}",
                mutants::listing(&Results::load(&dir.join("results.json"))?)
            );
        }
    }
    Ok(ToolExit::Done)
}

/// `grader autograder ...`: package, install, grade.
fn autograder(command: AutograderCommand) -> Result<()> {
    use grader::platform::{command as platform, settings::Platform};
    match command {
        AutograderCommand::Gradescope(args) => {
            let course = course(args.course.as_deref())?;
            platform::package(&course, &args.settings(Platform::Gradescope), &args.out)
        }
        AutograderCommand::Prairielearn(args) => {
            let course = course(args.course.as_deref())?;
            platform::package(&course, &args.settings(Platform::Prairielearn), &args.out)
        }
        AutograderCommand::Prepare { dir } => platform::prepare(&dir),
        AutograderCommand::Grade {
            platform: which,
            exercises,
        } => platform::grade(which, &exercises),
    }
}
