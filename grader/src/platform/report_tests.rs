//! The platforms' results.json, made from real gradings (the golden
//! class, graded on the CPU emulator), against each platform's schema.

use super::*;
use crate::platform::settings::{Platform, Settings, Visibility};
use crate::platform::{gradescope, prairielearn};
use kernels::catalogue::ExerciseId;
use serde_json::Value;

const GOLDEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/golden-class/results.json"
);

/// Every error `schema` finds in `results`.
pub fn schema_errors(schema: &str, results: &str) -> Vec<String> {
    let schema: Value = serde_json::from_str(schema).unwrap();
    let results: Value = serde_json::from_str(results).expect("results.json is JSON");
    let validator = jsonschema::validator_for(&schema).expect("the schema is one");
    validator
        .iter_errors(&results)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

pub const GRADESCOPE: &str = include_str!("../../tests/schemas/gradescope.json");
pub const PRAIRIELEARN: &str = include_str!("../../tests/schemas/prairielearn.json");

/// The golden class's `student`, graded on `exercise` alone, as the one
/// student of an autograder's class.
fn one(student: &str, exercise: &str) -> Results {
    let mut results = Results::load(std::path::Path::new(GOLDEN)).unwrap();
    let mut graded = results.students.remove(student).unwrap();
    graded.exercises.retain(|name, _| name == exercise);
    results.students = [(STUDENT.to_owned(), graded)].into();
    results
}

fn settings(seed: Option<u64>) -> Settings {
    Settings {
        platform: Platform::Gradescope,
        exercises: vec![ExerciseId::DotSm],
        visibility: Visibility::AfterDueDate,
        stdout_visibility: Visibility::Hidden,
        seed,
        time_limit: 600,
        run_timeout: 60,
        build_timeout: 240,
        student: 61_000,
    }
}

#[test]
fn a_solution_and_a_stub_give_tests_that_add_up_and_fit_both_schemas() {
    for (student, want) in [("solutions", 12), ("stubs", 0)] {
        let results = one(student, "dot-sm");
        let report = graded(&results, &[], "bubblewrap", false);
        assert_eq!((report.points, report.max_points), (want, 12));
        // Every point is in exactly one test; the upload's test has none.
        let sum: u32 = report.tests.iter().map(|t| t.points).sum();
        let max: u32 = report.tests.iter().map(|t| t.max_points).sum();
        assert_eq!((sum, max), (want, 12), "{:#?}", report.tests);
        assert_eq!(report.tests[0].name, SUBMISSION_TEST);
        assert_eq!(
            report.tests[1].name,
            "dot-sm: the kernel shows what the exercise is about (PTX)"
        );
        // PTX, 10 runs, memory safety (speed is not assessed here).
        assert_eq!(report.tests.len(), 1 + 1 + 10 + 1);
        assert!(
            report
                .feedback
                .contains("Your code ran confined: bubblewrap.")
        );

        let gs = gradescope::results(&report, &settings(None));
        assert_eq!(schema_errors(GRADESCOPE, &gs), Vec::<String>::new(), "{gs}");
        let gs: Value = serde_json::from_str(&gs).unwrap();
        assert_eq!(gs["score"], want);
        assert_eq!(gs["visibility"], "after_due_date");
        assert_eq!(gs["tests"][0]["visibility"], "visible");
        assert!(gs["tests"][1].get("visibility").is_none());
        let pl = prairielearn::results(&report);
        assert_eq!(
            schema_errors(PRAIRIELEARN, &pl),
            Vec::<String>::new(),
            "{pl}"
        );
        let pl: Value = serde_json::from_str(&pl).unwrap();
        assert_eq!(pl["score"], f64::from(want) / 12.0);
        assert_eq!(pl["gradable"], true);
    }
}

#[test]
fn a_fixed_seed_is_nowhere_in_what_the_student_reads() {
    let results = one("stubs", "vecadd-anyN");
    let seeds = seeds(&results);
    assert!(seeds.len() > 5, "{seeds:?}");
    let shown = graded(&results, &[], "bubblewrap", false);
    assert!(
        shown.feedback.contains(&seeds[0]),
        "the test must see a seed to hide"
    );
    assert!(shown.feedback.contains("test plan seed 2026"));
    let hidden = graded(&results, &[], "bubblewrap", true);
    for text in [
        gradescope::results(&hidden, &settings(Some(2026))),
        prairielearn::results(&hidden),
    ] {
        for seed in &seeds {
            assert!(!text.contains(seed.as_str()), "{seed} in {text}");
        }
        assert!(!text.contains("seed 2026"));
        assert!(text.contains("--seed (hidden)"));
    }
    // Only whole numbers go: a 7 in "17 points" stays when the seed is 7.
    assert_eq!(
        without_number("17 of 7 points, seed 7", "7"),
        "17 of (hidden) points, seed (hidden)"
    );
}

#[test]
fn an_unfit_upload_or_a_failed_grading_is_zero_points_and_not_gradable() {
    let unfit = unfit(
        &Unfit::Empty {
            notes: vec!["not taken: main.rs is a link".into()],
        },
        12,
    );
    let failed = failed("the build stage ended with exit status 2.", 12);
    for report in [&unfit, &failed] {
        let gs = gradescope::results(report, &settings(None));
        assert_eq!(schema_errors(GRADESCOPE, &gs), Vec::<String>::new(), "{gs}");
        let gs: Value = serde_json::from_str(&gs).unwrap();
        assert_eq!(gs["score"], 0);
        let pl = prairielearn::results(report);
        assert_eq!(
            schema_errors(PRAIRIELEARN, &pl),
            Vec::<String>::new(),
            "{pl}"
        );
        let pl: Value = serde_json::from_str(&pl).unwrap();
        assert_eq!(
            (pl["gradable"].clone(), pl["score"].clone()),
            (Value::Bool(false), 0.0.into())
        );
        assert_eq!(pl["format_errors"][0], pl["message"]);
    }
    assert!(
        unfit.tests[0]
            .output
            .contains("not taken: main.rs is a link")
    );
    assert!(
        failed
            .message
            .contains("(the build stage ended with exit status 2)")
    );
    assert!(failed.message.contains("not your code's fault"));
}

#[test]
fn prairielearn_results_stay_under_a_megabyte() {
    let results = one("solutions", "dot-sm");
    let mut report = graded(&results, &[], "bubblewrap", false);
    report.feedback = "ü".repeat(700_000);
    for test in &mut report.tests {
        test.output = "x\"".repeat(100_000);
    }
    let pl = prairielearn::results(&report);
    assert!(pl.len() < prairielearn::MAX_BYTES, "{}", pl.len());
    assert_eq!(schema_errors(PRAIRIELEARN, &pl), Vec::<String>::new());
    assert!(pl.contains("[cut here: PrairieLearn takes at most 1 MB of results]"));
}

#[test]
fn the_schemas_refuse_what_the_platforms_would() {
    // Each schema can fail: fields the platforms do not know, values they
    // do not take, a missing score.
    let wrong_gradescope = [
        r#"{"tests": [{"name": "a"}]}"#,
        r#"{"score": 1, "visibility": "later"}"#,
        r#"{"score": 1, "tests": [{"score": 1, "points": 1}]}"#,
        r#"{"score": "1"}"#,
    ];
    for wrong in wrong_gradescope {
        assert!(!schema_errors(GRADESCOPE, wrong).is_empty(), "{wrong}");
    }
    let wrong_prairielearn = [
        r#"{"gradable": true}"#,
        r#"{"score": 1.5}"#,
        r#"{"score": 1, "tests": [{"name": "a", "score": 1}]}"#,
        r#"{"gradable": false, "format_errors": 3}"#,
    ];
    for wrong in wrong_prairielearn {
        assert!(!schema_errors(PRAIRIELEARN, wrong).is_empty(), "{wrong}");
    }
    assert!(schema_errors(PRAIRIELEARN, r#"{"gradable": false}"#).is_empty());
}
