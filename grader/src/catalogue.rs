//! The course's exercises, as the grader sees them: the one catalogue in
//! `kernels::catalogue` (order, steps, what each exercise's PTX must show),
//! which the `course` command and the stub drift test read too. Everything
//! the grader does per exercise starts from here.

pub use kernels::catalogue::{EXERCISES, Exercise, PtxNeed, find};

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn folders(parent: &str) -> Vec<String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap()
            .join(parent);
        let mut names: Vec<String> = std::fs::read_dir(root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn the_catalogue_lists_exactly_the_exercise_folders() {
        let mut names: Vec<String> = EXERCISES.iter().map(|e| e.name.to_owned()).collect();
        names.sort();
        assert_eq!(names, folders("exercises"));
        assert_eq!(names, folders("solutions"));
    }

    #[test]
    fn the_grader_finds_exercises_and_their_ptx_needs() {
        let sm = find("dot-sm").unwrap();
        assert_eq!(sm.solution_package(), "dot-sm-solution");
        assert_eq!(sm.ptx.len(), 3);
    }
}
