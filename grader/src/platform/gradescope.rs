//! Gradescope's side: the results.json its harness reads from
//! `/autograder/results/` after `run_autograder`, as its autograder
//! specification gives it (gradescope-autograders.readthedocs.io,
//! "Autograder Specifications": `score`, `execution_time`, `output` and
//! `output_format`, `visibility`, `stdout_visibility`, and `tests` with
//! `name`, `number`, `score`, `max_score`, `status`, `output`,
//! `output_format` and `visibility`). `grader/tests/schemas/gradescope.json`
//! is that specification as a JSON schema, which the tests hold every
//! results.json to.
//!
//! The score is in points, the grader's own: the instructor sets the
//! assignment's total to the maximum the feedback states (lower on the
//! CPU emulator, where the speed point and the runs past 2^31 elements
//! are not assessed). The tests follow the package's visibility, but the
//! one that says how the upload was read, which is always shown (the
//! specification's "pre-submission check").

use serde::Serialize;

use crate::platform::report::{Report, SUBMISSION_TEST};
use crate::platform::settings::{Settings, Visibility};

/// Where run_autograder finds the upload and writes its results, under
/// the platform's root.
pub const SUBMISSION_DIR: &str = "autograder/submission";
pub const RESULTS_FILE: &str = "autograder/results/results.json";
/// Where the package's files are unpacked.
pub const SOURCE_DIR: &str = "autograder/source";

#[derive(Serialize)]
struct Results<'a> {
    score: u32,
    execution_time: u64,
    output: &'a str,
    output_format: &'static str,
    test_output_format: &'static str,
    test_name_format: &'static str,
    visibility: Visibility,
    stdout_visibility: Visibility,
    tests: Vec<Test<'a>>,
}

#[derive(Serialize)]
struct Test<'a> {
    name: &'a str,
    number: String,
    score: u32,
    max_score: u32,
    status: &'static str,
    output: &'a str,
    output_format: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    visibility: Option<Visibility>,
}

/// The results.json of `report`, with the package's visibility.
pub fn results(report: &Report, settings: &Settings) -> String {
    let tests = report
        .tests
        .iter()
        .enumerate()
        .map(|(index, test)| Test {
            name: &test.name,
            number: format!("{}", index + 1),
            score: test.points,
            max_score: test.max_points,
            status: if test.passed { "passed" } else { "failed" },
            output: &test.output,
            output_format: "md",
            visibility: (test.name == SUBMISSION_TEST).then_some(Visibility::Visible),
        })
        .collect();
    let results = Results {
        score: report.points,
        execution_time: report.seconds,
        output: &report.feedback,
        output_format: "md",
        test_output_format: "md",
        test_name_format: "text",
        visibility: settings.visibility,
        stdout_visibility: settings.stdout_visibility,
        tests,
    };
    serde_json::to_string_pretty(&results).expect("results are JSON") + "\n"
}
