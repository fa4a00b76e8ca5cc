//! What every exercise binary shares on its command line: `--runs` and
//! `--json`, argument errors as one line with exit code 2, and how an outcome
//! is printed and becomes the exit code.

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind as ClapKind;
use serde::Serialize;

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
    parse_from(std::env::args_os()).map_err(|err| match err {
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
    A::try_parse_from(args).map_err(|err| match err.kind() {
        ClapKind::DisplayHelp
        | ClapKind::DisplayVersion
        | ClapKind::DisplayHelpOnMissingArgumentOrSubcommand => ArgsError::Show(err),
        _ => ArgsError::Bad(first_line(&err.to_string())),
    })
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

/// Prints `outcome` for a person, or as JSON with `--json`, and returns the
/// exit code it stands for. Errors also go to stderr, for the person watching.
pub fn finish<P: Serialize, R: Serialize>(
    exercise: &str,
    json: bool,
    outcome: Result<Report<P, R>, CourseError>,
) -> ExitCode {
    let (text, exit) = match &outcome {
        Ok(report) if json => (to_json(report), report.exit()),
        Ok(report) => (report::render(report), report.exit()),
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
    // A closed pipe (`| head`) is not the exercise's failure.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    exit.into()
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
            (demo.threads, demo.common.runs, demo.common.json),
            (32, 10, false)
        );
    }
}
