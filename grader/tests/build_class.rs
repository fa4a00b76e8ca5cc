//! A small class built for real, each student in their own sandbox over
//! dependencies built once, and each failure attributed to its student
//! with its own errors. Needs the CUDA toolkit (nvcc) and bubblewrap, not
//! a GPU.

use std::fs;
use std::path::{Path, PathBuf};

use std::time::Duration;

use grader::build::compile::{Builder, Built};
use grader::build::workspace::Entry;
use grader::confine::sandbox::Isolation;
use grader::discover::overlay;

fn course() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// A student's dot-sm: the solution's files, with `edit` applied to one.
fn student(root: &Path, name: &str, edit: Option<(&str, &str, &str)>) -> PathBuf {
    let dir = root.join(name).join("dot-sm");
    fs::create_dir_all(dir.join("src")).unwrap();
    for file in ["main.rs", "kernel.cu"] {
        let mut text =
            fs::read_to_string(course().join("solutions/dot-sm/src").join(file)).unwrap();
        if let Some((target, from, to)) = edit {
            if target == file {
                assert!(text.contains(from), "{from} not in {file}");
                text = text.replacen(from, to, 1);
            }
        }
        fs::write(dir.join("src").join(file), text).unwrap();
    }
    dir
}

#[test]
fn each_student_gets_their_own_binary_or_their_own_errors() {
    let submissions = tempfile::tempdir().unwrap();
    let good = student(submissions.path(), "good", None);
    let nvcc = student(
        submissions.path(),
        "nvcc",
        Some((
            "kernel.cu",
            "float sum = 0.0f;",
            "float sum = 0.0f; undeclared_thing;",
        )),
    );
    let rustc = student(
        submissions.path(),
        "rustc",
        Some((
            "main.rs",
            "let n = task.a.len();",
            "let n: u8 = task.a.len();",
        )),
    );
    let taken: Vec<_> = [&good, &nvcc, &rustc]
        .iter()
        .map(|d| overlay::select(d).0)
        .collect();
    let entries: Vec<Entry> = ["good", "nvcc", "rustc"]
        .iter()
        .zip(&taken)
        .map(|(student, taken)| Entry {
            student,
            exercise: "dot-sm",
            taken,
        })
        .collect();

    let isolation = Isolation::choose(false).unwrap();
    // Kept between test runs and shared by the grader's tests, so the
    // dependencies build once.
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("grader-deps");
    fs::create_dir_all(&root).unwrap();
    let builder = Builder {
        isolation: &isolation,
        course: course(),
        root: &root,
        jobs: None,
        timeout: Duration::from_secs(300),
    };
    builder.prepare().unwrap();
    let builds = tempfile::tempdir().unwrap();
    let built: Vec<(&str, Built)> = entries
        .iter()
        .map(|entry| {
            let dir = builds.path().join(entry.student);
            let mut built = builder.build_student(&dir, &[*entry]).unwrap();
            (entry.student, built.remove(0))
        })
        .collect();

    let by_name = |student: &str| &built.iter().find(|b| b.0 == student).unwrap().1;
    let good = by_name("good");
    assert!(good.errors.is_none(), "{:?}", good.errors);
    assert!(good.binary.as_ref().is_some_and(|b| b.is_file()));
    let ptx = fs::read_to_string(good.ptx.as_ref().unwrap()).unwrap();
    assert!(ptx.contains(".entry dot(") && ptx.contains("bar.sync"));

    let nvcc = by_name("nvcc");
    assert!(nvcc.binary.is_none());
    let said = nvcc.errors.as_deref().unwrap();
    assert!(
        said.contains("src/kernel.cu(") && said.contains("undeclared_thing"),
        "{said}"
    );
    assert!(
        !said.contains("let n: u8"),
        "another student's errors leaked in: {said}"
    );

    // Errors name the student's files, not the instructor's folders.
    let here = course().display().to_string();
    assert!(!said.contains(&here), "{said}");

    let rustc = by_name("rustc");
    assert!(rustc.binary.is_none());
    let said = rustc.errors.as_deref().unwrap();
    assert!(
        said.contains("mismatched types") && said.contains("src/main.rs"),
        "{said}"
    );
    assert!(
        !said.contains("undeclared_thing"),
        "another student's errors leaked in: {said}"
    );
}
