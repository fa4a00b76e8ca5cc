//! What every exercise binary shares on its command line: `--runs`,
//! `--json`, `--counters` and `--accesses`, argument errors as one line with
//! exit code 2, and how an outcome is printed and becomes the exit code.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind as ClapKind;
use serde::Serialize;

use crate::accesses::{self, Recorded};
use crate::counters::{self, Counted};
use crate::error::CourseError;
use crate::exit_code::Exit;
use crate::protocol::{ErrorReport, Report, SCHEMA_VERSION};
use crate::report;

/// Flags every exercise takes.
#[derive(clap::Args, Debug, Clone)]
pub struct CommonArgs {
    /// Timed runs of the kernel, 1 to 1000; the report gives their median
    /// (after one untimed warm-up run).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub runs: u32,

    /// Print one JSON object (the course's result protocol) instead of the
    /// report for people.
    #[arg(long)]
    pub json: bool,

    /// On the CPU emulator: count what a GPU's profiler would for the
    /// kernel's first launch (memory requests and the sectors they touch,
    /// shared-memory bank conflicts, active lanes) and show them, with the
    /// kernel.cu line that costs most. On a GPU, Nsight Compute (`ncu`)
    /// measures them instead.
    #[arg(long)]
    pub counters: bool,

    /// On the CPU emulator: draw the kernel's first launch as an SVG picture
    /// in FILE: how warp 0's lanes fall on memory sectors and shared-memory
    /// banks on its costliest lines, and which block wrote each element of
    /// the output (and which none did). On a GPU none is drawn.
    #[arg(long, value_name = "FILE", value_parser = picture_file)]
    pub accesses: Option<PathBuf>,
}

/// `--accesses`' FILE: a file that can be made, in a folder that exists.
fn picture_file(text: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(text);
    if text.is_empty() {
        return Err("no file named; give one, such as accesses.svg".to_owned());
    }
    if path.is_dir() {
        return Err(format!(
            "{text} is a folder; give a file, such as {}",
            path.join("accesses.svg").display()
        ));
    }
    match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(folder) if !folder.is_dir() => {
            Err(format!("the folder {} does not exist", folder.display()))
        }
        _ => Ok(path),
    }
}

/// `--seed`, for the exercises whose inputs can be drawn from one.
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct SeedArg {
    /// Draw the inputs from this seed (0 to 18446744073709551615) instead of
    /// the readable defaults: values no kernel can produce without reading
    /// them. The grader passes one on every run but those above 2^31
    /// elements, whose inputs the GPU makes.
    #[arg(long)]
    pub seed: Option<u64>,
}

/// Why the command line did not give arguments to run with.
#[derive(Debug)]
pub enum ArgsError {
    /// `--help` or `--version`: clap prints it, and that is a success.
    Show(clap::Error),
    /// A bad value or flag: one line naming it, for exit code 2.
    Bad(String),
}

/// Parses this process's arguments; on `--help` prints it, on a bad argument
/// prints one line, and returns the exit code to stop with.
pub fn parse<A: Parser>() -> Result<A, ExitCode> {
    report_args_error(parse_from(crate::batch::args()))
}

/// [`parse`] for argument types several exercises share, under the name and
/// description of the one running.
pub fn parse_named<A: Parser>(name: &'static str, about: &'static str) -> Result<A, ExitCode> {
    parse_shaped(|command| command.name(name).about(about))
}

/// [`parse`] for argument types several exercises share, with the command
/// reshaped for the one running first: its name, and help that names only
/// what applies to it.
pub fn parse_shaped<A: Parser>(
    shape: impl FnOnce(clap::Command) -> clap::Command,
) -> Result<A, ExitCode> {
    report_args_error(parse_command(shape(A::command()), crate::batch::args()))
}

fn report_args_error<A>(parsed: Result<A, ArgsError>) -> Result<A, ExitCode> {
    parsed.map_err(|err| match err {
        ArgsError::Show(shown) => {
            let _ = shown.print();
            ExitCode::SUCCESS
        }
        ArgsError::Bad(line) => {
            eprintln!("{line}");
            Exit::BadArguments.into()
        }
    })
}

/// [`parse`] without printing or exiting, for tests.
pub fn parse_from<A, I, T>(args: I) -> Result<A, ArgsError>
where
    A: Parser,
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    parse_command(A::command(), args)
}

fn parse_command<A, I, T>(command: clap::Command, args: I) -> Result<A, ArgsError>
where
    A: Parser,
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let sort = |err: clap::Error| match err.kind() {
        ClapKind::DisplayHelp
        | ClapKind::DisplayVersion
        | ClapKind::DisplayHelpOnMissingArgumentOrSubcommand => ArgsError::Show(err),
        _ => ArgsError::Bad(first_line(&err.to_string())),
    };
    let matches = command.try_get_matches_from(args).map_err(sort)?;
    A::from_arg_matches(&matches).map_err(sort)
}

/// `--n`: a whole number of elements from 1 to `max`, where each element
/// takes `bytes_per_element` bytes of GPU memory across `buffers`.
pub fn parse_n(text: &str, max: u64, bytes_per_element: u64, buffers: &str) -> Result<u64, String> {
    let n: u64 = text
        .parse()
        .map_err(|_| format!("not a whole number; --n takes 1 to {max}"))?;
    match n {
        0 => Err(format!(
            "the vectors need at least one element; --n takes 1 to {max}"
        )),
        n if n > max => Err(format!(
            "{} elements need {} of GPU memory for {buffers}, more than any GPU holds; \
             --n takes 1 to {max}",
            crate::units::count(n),
            crate::units::bytes(n.saturating_mul(bytes_per_element))
        )),
        n => Ok(n),
    }
}

/// clap's message without its usage and tips: "error: invalid value '0' for
/// '--n <N>': ...", which already names the flag and what it allows.
fn first_line(message: &str) -> String {
    let line = message
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("error: bad arguments");
    format!("{} (see --help)", line.trim_end())
}

/// Runs `outcome` (the exercise's run, counted where `--counters` asks),
/// prints it for a person, or as JSON with `--json`, and returns the exit
/// code it stands for. Errors also go to stderr, for the person watching.
pub fn finish<P: Serialize, R: Serialize>(
    exercise: &str,
    common: &CommonArgs,
    outcome: impl FnOnce() -> Result<Report<P, R>, CourseError>,
) -> ExitCode {
    finish_with(exercise, common, || {
        outcome().map(|report| (report, String::new()))
    })
}

/// [`finish`], with text a person sees before the report (a table, say);
/// `--json` leaves it out, since the report holds the same data.
pub fn finish_with<P: Serialize, R: Serialize>(
    exercise: &str,
    common: &CommonArgs,
    outcome: impl FnOnce() -> Result<(Report<P, R>, String), CourseError>,
) -> ExitCode {
    let json = common.json;
    counters::ask(common.counters);
    accesses::ask(common.accesses.is_some());
    let mut outcome = outcome();
    // Drawn whatever the run's verdict: a failed run's picture is the one
    // that shows which elements no thread wrote.
    if let Some(path) = &common.accesses {
        draw_accesses(exercise, path, outcome.is_ok());
    }
    if let Ok((report, _)) = &mut outcome {
        match counters::counted() {
            None => {}
            Some(Counted::Launches(launches)) if launches.is_empty() => eprintln!(
                "{exercise}: --counters: no launch of the kernel went through the course's \
                 timing, so none was counted"
            ),
            Some(Counted::Launches(launches)) => report.counters = Some(launches),
            Some(Counted::NotTheEmulator) => eprintln!(
                "{exercise}: --counters: only the course's CPU emulator counts, and the driver \
                 loaded is not it (on a GPU, Nsight Compute's `ncu` takes these counters); \
                 none were taken"
            ),
        }
    }
    let (text, exit) = match &outcome {
        Ok((report, _)) if json => (to_json(report), report.exit()),
        Ok((report, before)) => (before.clone() + &report::render(report), report.exit()),
        Err(err) => {
            eprintln!("{exercise}: error: {err}");
            let text = if json {
                to_json(&ErrorReport {
                    schema_version: SCHEMA_VERSION,
                    exercise: exercise.to_owned(),
                    error: err.info(),
                })
            } else {
                String::new()
            };
            (text, err.kind().exit())
        }
    };
    crate::batch::write_report(&text, exit);
    exit.into()
}

/// `--accesses`: the picture of the first recorded launch written to
/// `path`, or one line on stderr saying why there is none.
fn draw_accesses(exercise: &str, path: &Path, ran: bool) {
    let launch = match accesses::recorded() {
        None => return,
        Some(Recorded::OnGpu) => {
            eprintln!(
                "{exercise}: --accesses: the picture needs the CPU emulator, which records every \
                 thread's accesses (CUDA_COURSE_EMULATOR=1); on a GPU none was drawn"
            );
            return;
        }
        Some(Recorded::Launches(launches)) => launches.into_iter().next(),
    };
    let Some(launch) = launch else {
        if ran {
            eprintln!(
                "{exercise}: --accesses: no launch of the kernel went through the course's \
                 timing, so none was recorded"
            );
        } else {
            eprintln!(
                "{exercise}: --accesses: the kernel's first launch did not finish, so there is \
                 nothing to draw"
            );
        }
        return;
    };
    match std::fs::write(path, crate::access_picture::svg(&launch)) {
        Ok(()) => eprintln!(
            "{exercise}: --accesses: drew kernel `{}`'s first launch in {}",
            launch.kernel,
            path.display()
        ),
        Err(err) => eprintln!(
            "{exercise}: --accesses {}: could not write it: {err}",
            path.display()
        ),
    }
}

fn to_json<T: Serialize>(value: &T) -> String {
    match serde_json::to_string(value) {
        Ok(text) => text + "\n",
        // The protocol types hold only strings, numbers and Real; this does not happen.
        Err(err) => format!(
            "{{\"schema_version\":{SCHEMA_VERSION},\"unserialisable\":{:?}}}\n",
            err.to_string()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Parser, Debug)]
    struct Demo {
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
        threads: u32,
        #[command(flatten)]
        common: CommonArgs,
    }

    fn bad(args: &[&str]) -> String {
        match parse_from::<Demo, _, _>(std::iter::once("demo").chain(args.iter().copied())) {
            Err(ArgsError::Bad(line)) => line,
            other => panic!("{args:?} gave {other:?}"),
        }
    }

    #[test]
    fn a_bad_value_is_one_line_naming_the_flag_and_range() {
        let line = bad(&["--threads", "2048"]);
        assert_eq!(line.lines().count(), 1, "{line}");
        assert!(
            line.contains("--threads") && line.contains("1..=1024"),
            "{line}"
        );
    }

    #[test]
    fn a_non_number_names_the_flag() {
        let line = bad(&["--threads", "many"]);
        assert!(
            line.contains("'many'") && line.contains("--threads"),
            "{line}"
        );
    }

    #[test]
    fn runs_must_be_positive() {
        assert!(bad(&["--threads", "1", "--runs", "0"]).contains("--runs"));
    }

    #[test]
    fn accesses_needs_a_file_in_a_folder_that_exists() {
        let missing = bad(&["--threads", "1", "--accesses", "no-such-folder/a.svg"]);
        assert_eq!(missing.lines().count(), 1, "{missing}");
        assert!(
            missing.contains("--accesses")
                && missing.contains("the folder no-such-folder does not exist"),
            "{missing}"
        );
        let folder = std::env::temp_dir();
        let folder = folder.to_str().unwrap();
        let line = bad(&["--threads", "1", "--accesses", folder]);
        assert!(line.contains("is a folder; give a file"), "{line}");
        assert!(bad(&["--threads", "1", "--accesses", ""]).contains("no file named"));
        assert!(bad(&["--threads", "1", "--accesses"]).contains("--accesses"));
        let fine = parse_from::<Demo, _, _>(["demo", "--threads", "1", "--accesses", "a.svg"]);
        assert_eq!(
            fine.unwrap().common.accesses.as_deref(),
            Some(Path::new("a.svg"))
        );
    }

    #[test]
    fn help_is_not_an_error() {
        assert!(matches!(
            parse_from::<Demo, _, _>(["demo", "--help"]),
            Err(ArgsError::Show(_))
        ));
    }

    #[test]
    fn defaults_apply() {
        let demo = parse_from::<Demo, _, _>(["demo", "--threads", "32"]).unwrap();
        assert_eq!(
            (
                demo.threads,
                demo.common.runs,
                demo.common.json,
                demo.common.counters
            ),
            (32, 10, false, false)
        );
    }
}
