//! The catalogue (kernels::catalogue) against the workspace it describes:
//! every exercise folder is in it, every entry has a folder, and cargo sees
//! each one as a workspace member of the exercise's name. Runs in the
//! course repository and in a student's copy (which has no solutions/; the
//! stub drift test checks those).

use std::path::{Path, PathBuf};
use std::process::Command;

use kernels::catalogue::EXERCISES;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

#[test]
fn the_catalogue_lists_exactly_the_exercise_folders() {
    let mut folders: Vec<String> = std::fs::read_dir(root().join("exercises"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    let mut names: Vec<String> = EXERCISES.iter().map(|e| e.name.to_owned()).collect();
    names.sort();
    assert_eq!(names, folders, "catalogue vs exercises/");
}

#[test]
fn every_exercise_is_a_workspace_member_of_its_name() {
    let output = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let metadata = String::from_utf8(output.stdout).unwrap();
    for exercise in EXERCISES {
        let manifest = root()
            .join("exercises")
            .join(exercise.name)
            .join("Cargo.toml");
        let member = format!(
            "\"name\":\"{}\",\"version\":\"0.1.0\",\"id\":\"path+file://{}",
            exercise.name,
            manifest.parent().unwrap().display()
        );
        assert!(
            metadata.contains(&member),
            "{} is not a workspace member named {} (looked for {member})",
            manifest.display(),
            exercise.name
        );
    }
}
