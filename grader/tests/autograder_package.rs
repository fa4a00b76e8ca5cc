//! `grader autograder gradescope|prairielearn OUT` through the real CLI:
//! the package each platform takes (the scripts where the platform looks
//! for them, executable; the instructor's choices in `autograder.json`;
//! the course without its build output or book), and settings that cannot
//! work refused with one line. Grading with a package is
//! `tests/autograder.rs`'s.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn grader() -> Command {
    let mut cmd = Command::cargo_bin("grader").unwrap();
    cmd.current_dir(repo());
    cmd
}

/// A zip's files: name to (mode, bytes).
fn unzipped(path: &Path) -> BTreeMap<String, (u32, Vec<u8>)> {
    let mut archive = zip::ZipArchive::new(fs::File::open(path).unwrap()).unwrap();
    (0..archive.len())
        .map(|index| {
            let mut entry = archive.by_index(index).unwrap();
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).unwrap();
            let mode = entry.unix_mode().unwrap_or(0) & 0o777;
            (entry.name().to_owned(), (mode, bytes))
        })
        .collect()
}

#[test]
fn the_gradescope_zip_has_its_scripts_at_the_root_the_settings_and_the_course() {
    let dir = tempfile::tempdir().unwrap();
    let zip = dir.path().join("dot-sm.zip");
    grader()
        .args(["autograder", "gradescope"])
        .arg(&zip)
        .args(["--exercise", "dot-sm", "--visibility", "after_due_date"])
        .args(["--seed", "4242", "--time-limit", "900"])
        .assert()
        .success()
        .stderr(predicates::str::contains("Configure Autograder"))
        .stderr(predicates::str::contains("set its timeout to 900 s"));
    let files = unzipped(&zip);
    // Gradescope runs these two from the zip's root: as the repository
    // holds them, and executable.
    for (name, script) in [
        ("setup.sh", "scripts/autograder/setup.sh"),
        ("run_autograder", "scripts/autograder/run_autograder"),
    ] {
        let (mode, bytes) = &files[name];
        assert_eq!(mode & 0o111, 0o111, "{name} is not executable: {mode:o}");
        assert_eq!(bytes, &fs::read(repo().join(script)).unwrap(), "{name}");
    }
    let settings: Value = serde_json::from_slice(&files["autograder.json"].1).unwrap();
    assert_eq!(settings["platform"], "gradescope");
    assert_eq!(settings["exercises"], serde_json::json!(["dot-sm"]));
    assert_eq!(settings["visibility"], "after_due_date");
    assert_eq!(settings["stdout_visibility"], "hidden");
    assert_eq!(settings["seed"], 4242);
    assert_eq!(settings["time_limit"], 900);
    // The course as the checkout holds it, solutions included (they stay
    // in the image, closed to the student's code).
    for file in [
        "Cargo.toml",
        "Cargo.lock",
        "solutions/dot-sm/src/kernel.cu",
        "exercises/dot-sm/src/main.rs",
    ] {
        let (_, bytes) = &files[&format!("course/{file}")];
        assert_eq!(bytes, &fs::read(repo().join(file)).unwrap(), "{file}");
    }
    let left_out: Vec<&String> = files
        .keys()
        .filter(|name| {
            name.split('/')
                .any(|part| part == "target" || part == ".git")
                || name.starts_with("course/docs/")
                || name.starts_with("course/bench/")
        })
        .collect();
    assert!(left_out.is_empty(), "{left_out:?}");
}

#[test]
fn the_prairielearn_grader_is_a_docker_context_and_is_never_written_over() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cuda-course-grader");
    grader()
        .args(["autograder", "prairielearn"])
        .arg(&out)
        .args(["--exercise", "dot-gm", "--exercise", "vecadd-anyN"])
        .args(["--exercise", "dot-gm"])
        .assert()
        .success()
        .stderr(predicates::str::contains("docker build -t IMAGE"));
    let dockerfile = fs::read_to_string(out.join("Dockerfile")).unwrap();
    assert!(dockerfile.contains("FROM ubuntu:22.04"), "{dockerfile}");
    // The Dockerfile's COPY and RUN name what the folder holds.
    assert!(dockerfile.contains("RUN /opt/cuda-course-autograder/package/setup.sh"));
    for name in ["setup.sh", "entrypoint"] {
        let mode = fs::metadata(out.join(name)).unwrap().permissions().mode();
        assert_eq!(mode & 0o111, 0o111, "{name}: {mode:o}");
    }
    assert_eq!(
        fs::read(out.join("entrypoint")).unwrap(),
        fs::read(repo().join("scripts/autograder/prairielearn-entrypoint")).unwrap()
    );
    let settings: Value =
        serde_json::from_str(&fs::read_to_string(out.join("autograder.json")).unwrap()).unwrap();
    assert_eq!(settings["platform"], "prairielearn");
    // In course order, each once, whatever order they were named in.
    assert_eq!(
        settings["exercises"],
        serde_json::json!(["vecadd-anyN", "dot-gm"])
    );
    assert!(settings["seed"].is_null());
    assert!(out.join("course/solutions/dot-gm/src/kernel.cu").is_file());

    // A second package into the same folder: refused, nothing changed.
    let before = fs::read(out.join("autograder.json")).unwrap();
    let refused = grader()
        .args(["autograder", "prairielearn"])
        .arg(&out)
        .args(["--exercise", "dot-sm"])
        .assert()
        .failure()
        .get_output()
        .clone();
    let said = String::from_utf8_lossy(&refused.stderr);
    let errors: Vec<&str> = said.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 1, "{said}");
    assert!(
        errors[0].contains("exists and is not empty: name a new folder"),
        "{said}"
    );
    assert_eq!(fs::read(out.join("autograder.json")).unwrap(), before);
}

#[test]
fn settings_that_cannot_work_are_refused_in_one_line_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let zip = dir.path().join("a.zip");
    for (args, says) in [
        (
            vec!["--exercise", "dot-sm", "--time-limit", "200"],
            "give at least 330 s",
        ),
        (
            vec!["--exercise", "dot-sm", "--course", "/nonexistent/course"],
            "/nonexistent/course",
        ),
    ] {
        let output = grader()
            .args(["autograder", "gradescope"])
            .arg(&zip)
            .args(&args)
            .assert()
            .failure()
            .get_output()
            .clone();
        let said = String::from_utf8_lossy(&output.stderr);
        // One line of error (after the line naming the course).
        let errors: Vec<&str> = said.lines().filter(|l| l.contains("error")).collect();
        assert_eq!(errors.len(), 1, "{args:?}: {said}");
        assert!(errors[0].contains(says), "{args:?}: {said}");
        assert!(!zip.exists(), "{args:?} wrote the zip");
    }
    // An exercise the course does not have: clap names the ones it has.
    grader()
        .args(["autograder", "gradescope"])
        .arg(&zip)
        .args(["--exercise", "dot-product"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "not an exercise; one of vecadd-anyN, dot-gm",
        ));
    assert!(!zip.exists());
}
