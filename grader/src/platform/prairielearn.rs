//! PrairieLearn's side: the results.json an external grader writes to
//! `/grade/results/` (prairielearn.readthedocs.io, "External Grading",
//! "Grading results": `gradable`, `score` in [0, 1], `message`, `output`,
//! `format_errors`, and `tests` with `name`, `points`, `max_points`,
//! `message` and `output`; the file at most 1 MB, which the grader host
//! refuses past, and read only when the entrypoint exits 0). An upload
//! that cannot be graded is `gradable: false`: PrairieLearn then takes no
//! attempt from the student. `grader/tests/schemas/prairielearn.json` is
//! that page as a JSON schema, which the tests hold every results.json to.

use serde::Serialize;

use crate::platform::report::Report;

/// Where the entrypoint finds the upload and writes its results, under the
/// platform's root.
pub const STUDENT_DIR: &str = "grade/student";
pub const RESULTS_FILE: &str = "grade/results/results.json";
/// The question's and the course's files, and the question's data: open
/// to root alone before any student code runs.
pub const PRIVATE_DIRS: [&str; 3] = ["grade/tests", "grade/serverFilesCourse", "grade/data"];
/// PrairieLearn's limit on results.json, in bytes (its grader host reads
/// at most 1024 * 1024).
pub const MAX_BYTES: usize = 1 << 20;

#[derive(Serialize)]
struct Results {
    gradable: bool,
    score: f64,
    message: String,
    output: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    format_errors: Vec<String>,
    tests: Vec<Test>,
}

#[derive(Serialize)]
struct Test {
    name: String,
    points: u32,
    max_points: u32,
    message: String,
    output: String,
}

/// The results.json of `report`, under PrairieLearn's 1 MB: the longest
/// outputs are cut, saying so, until it fits.
pub fn results(report: &Report) -> String {
    let mut results = Results {
        gradable: report.gradable,
        score: match report.max_points {
            0 => 0.0,
            max => f64::from(report.points) / f64::from(max),
        },
        message: report.message.clone(),
        output: report.feedback.clone(),
        format_errors: if report.gradable {
            vec![]
        } else {
            vec![report.message.clone()]
        },
        tests: report
            .tests
            .iter()
            .map(|t| Test {
                name: t.name.clone(),
                points: t.points,
                max_points: t.max_points,
                message: if t.passed { "passed" } else { "failed" }.into(),
                output: t.output.clone(),
            })
            .collect(),
    };
    let mut keep = MAX_BYTES;
    loop {
        let text = serde_json::to_string(&results).expect("results are JSON") + "\n";
        if text.len() < MAX_BYTES || keep == 0 {
            return text;
        }
        // Room for the JSON around the outputs, escapes included.
        keep /= 2;
        cut(&mut results.output, keep);
        for test in &mut results.tests {
            cut(&mut test.output, keep / 8);
        }
    }
}

/// `text` cut to about `bytes` at a character boundary, saying so.
fn cut(text: &mut String, bytes: usize) {
    if text.len() <= bytes {
        return;
    }
    let mut at = bytes;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text.truncate(at);
    text.push_str("\n[cut here: PrairieLearn takes at most 1 MB of results]\n");
}
