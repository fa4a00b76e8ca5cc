//! Grading or regrading some students of a class (`--student ID`): only
//! their submissions are built and run, under the seed the class was
//! graded with, and every other student's record is kept as it was.

use std::path::Path;

use crate::atomic_file;
use crate::build::bundle::Bundle;
use crate::record::results::Results;

/// The seed to build with: the one given, else the earlier batch's; a
/// given seed that differs from the earlier batch's is an error, since one
/// results.json holds one seed.
pub fn seed(given: Option<u64>, earlier: Option<u64>) -> Result<Option<u64>, String> {
    match (given, earlier) {
        (Some(given), Some(earlier)) if given != earlier => Err(format!(
            "--seed {given}: the class was graded with seed {earlier}; regrade some students \
             with that seed (leave --seed out), or grade the whole class again"
        )),
        (Some(given), _) => Ok(Some(given)),
        (None, earlier) => Ok(earlier),
    }
}

/// Earlier results with the students to regrade taken out; with
/// `--resume` too, those already graded stay and are skipped.
pub fn forget(mut earlier: Results, students: &[String], resume: bool) -> Results {
    if !resume {
        earlier.students.retain(|name, _| !students.contains(name));
    }
    earlier
}

/// The earlier bundle's items for everyone but `students`, and the fresh
/// bundle's for them, in student and course order.
pub fn merge_bundle(earlier: Bundle, fresh: Bundle, students: &[String]) -> Bundle {
    let mut items: Vec<_> = earlier
        .items
        .into_iter()
        .filter(|i| !students.contains(&i.student))
        .chain(fresh.items)
        .collect();
    // ExerciseId's order is the course's.
    items.sort_by(|a, b| (&a.student, a.exercise).cmp(&(&b.student, b.exercise)));
    Bundle { items, ..fresh }
}

/// Writes BUNDLE/bundle.json.
pub fn save_bundle(bundle: &Bundle, dir: &Path) -> Result<(), String> {
    let path = dir.join("bundle.json");
    let text = serde_json::to_string_pretty(bundle).map_err(|err| err.to_string())?;
    atomic_file::write(&path, text.as_bytes()).map_err(|err| format!("{}: {err}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::bundle::Item;
    use kernels::catalogue::ExerciseId::{self, DotSm, VecaddAnyN};

    fn item(student: &str, exercise: ExerciseId, binary: &str) -> Item {
        Item {
            student: student.into(),
            exercise,
            problems: vec![],
            absent: None,
            refused: vec![],
            build_errors: None,
            binary: Some(binary.into()),
            digest: None,
            ptx_missing: vec![],
            ptx: None,
        }
    }

    #[test]
    fn a_regraded_student_replaces_only_their_own_items() {
        let bundle = |seed, items| Bundle {
            schema_version: crate::build::bundle::BUNDLE_SCHEMA,
            seed,
            reference: Default::default(),
            tracer: None,
            items,
            emulator: None,
        };
        let earlier = bundle(
            9,
            vec![
                item("ann", VecaddAnyN, "old-ann"),
                item("bo", VecaddAnyN, "old-bo"),
                item("bo", DotSm, "old-bo-dot"),
            ],
        );
        let fresh = bundle(9, vec![item("bo", VecaddAnyN, "new-bo")]);
        let merged = merge_bundle(earlier, fresh, &["bo".into()]);
        let got: Vec<(&str, &str)> = merged
            .items
            .iter()
            .map(|i| {
                (
                    i.student.as_str(),
                    i.binary.as_ref().unwrap().to_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(got, [("ann", "old-ann"), ("bo", "new-bo")]);
    }

    #[test]
    fn a_seed_other_than_the_class_s_is_refused() {
        assert_eq!(seed(None, Some(4)), Ok(Some(4)));
        assert_eq!(seed(Some(4), Some(4)), Ok(Some(4)));
        assert_eq!(seed(Some(5), None), Ok(Some(5)));
        assert!(
            seed(Some(5), Some(4))
                .unwrap_err()
                .contains("graded with seed 4")
        );
    }
}
