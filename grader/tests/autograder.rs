//! The autograders as the platforms run them, on this machine: an install
//! made by `grader autograder prepare` (setup.sh's step) in a scratch root
//! laid out like the platforms' containers (`CUDA_COURSE_AUTOGRADER_ROOT`),
//! then Gradescope's `run_autograder` and PrairieLearn's entrypoint, as
//! the package holds them, on uploads as students make them: a zip of the
//! workspace, loose files, the wrong exercise, an empty upload, a compile
//! error, and a solution whose code tries to read the course's solutions,
//! the settings and the trusted binaries, and to write the results, at
//! build and at run time, once in bubblewrap and once where bubblewrap is
//! missing (as in a Docker container), as the unprivileged student user.
//! Every results.json is held to its platform's schema
//! (`tests/schemas/`).
//!
//! The install persists in `CARGO_TARGET_TMPDIR/autograder-root`, so that
//! its builds are made once (the first setup builds the course twice:
//! minutes). It needs root: the student user is another uid.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use serde_json::Value;

const GRADESCOPE_SCHEMA: &str = include_str!("schemas/gradescope.json");
const PRAIRIELEARN_SCHEMA: &str = include_str!("schemas/prairielearn.json");
/// The exercise the test package grades.
const EXERCISE: &str = "dot-sm";
/// The student user of `grader autograder`'s packages.
const STUDENT_UID: u32 = 61_000;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn is_root() -> bool {
    // SAFETY: geteuid only reads the process's credentials.
    unsafe { libc::geteuid() == 0 }
}

/// The install: its root, and the environment the platform's scripts run
/// in (a toolchain the student user can reach).
struct Install {
    root: PathBuf,
    path: String,
}

/// The install, made once per test run (one grading at a time: they share
/// its folders).
fn install() -> std::sync::MutexGuard<'static, Install> {
    static INSTALL: OnceLock<Mutex<Install>> = OnceLock::new();
    INSTALL
        .get_or_init(|| Mutex::new(prepare()))
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

fn prepare() -> Install {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let root = tmp.join("autograder-root");
    // rustup's toolchain is in root's home, closed to the student user:
    // a copy of it (hard links) the student user can reach.
    let sysroot = String::from_utf8(
        Command::new("rustc")
            .args(["--print", "sysroot"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let toolchain = tmp.join("autograder-toolchain");
    if !toolchain.join("bin/cargo").exists() {
        let _ = fs::remove_dir_all(&toolchain);
        let linked = Command::new("cp")
            .arg("-al")
            .arg(sysroot.trim())
            .arg(&toolchain)
            .status()
            .unwrap();
        assert!(linked.success());
    }
    let path = format!("{}/bin:/usr/local/bin:/usr/bin:/bin", toolchain.display());
    // The package as Gradescope unpacks it, its course the checkout itself,
    // so that the trusted build is the other tests' (`grader-deps`).
    let source = root.join("autograder/source");
    let _ = fs::remove_dir_all(&source);
    fs::create_dir_all(&source).unwrap();
    let zip = tmp.join("autograder-test.zip");
    let packaged = Command::new(grader())
        .args(["autograder", "gradescope"])
        .arg(&zip)
        .args([
            "--exercise",
            EXERCISE,
            "--visibility",
            "after_due_date",
            "--course",
        ])
        .arg(repo())
        .output()
        .unwrap();
    assert!(
        packaged.status.success(),
        "{}",
        String::from_utf8_lossy(&packaged.stderr)
    );
    // Unpacked as Gradescope's harness does, all but the course.
    let mut archive = zip::ZipArchive::new(fs::File::open(&zip).unwrap()).unwrap();
    for index in 0..archive.len() {
        let mut entry = archive.by_index(index).unwrap();
        let name = entry.enclosed_name().unwrap();
        if name.starts_with("course") {
            continue;
        }
        let mut file = fs::File::create(source.join(&name)).unwrap();
        std::io::copy(&mut entry, &mut file).unwrap();
        let mode = entry.unix_mode().unwrap_or(0o644);
        fs::set_permissions(
            source.join(&name),
            std::os::unix::fs::PermissionsExt::from_mode(mode),
        )
        .unwrap();
    }
    std::os::unix::fs::symlink(repo(), source.join("course")).unwrap();
    // Cargo's downloads, copied from this machine's rather than fetched.
    let cargo_home = root.join("opt/cuda-course-autograder/work/cargo-home");
    let registry = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/root/.cargo"))
        .join("registry");
    if !cargo_home.join("registry").exists() && registry.is_dir() {
        fs::create_dir_all(&cargo_home).unwrap();
        assert!(
            Command::new("cp")
                .arg("-r")
                .arg(&registry)
                .arg(&cargo_home)
                .status()
                .unwrap()
                .success()
        );
    }
    let prepared = Command::new(grader())
        .args(["autograder", "prepare"])
        .arg(&source)
        .env_clear()
        .env("PATH", &path)
        .env("HOME", "/root")
        .env("LANG", "C.UTF-8")
        .env("CUDA_COURSE_AUTOGRADER_ROOT", &root)
        .env(
            "CUDA_COURSE_AUTOGRADER_TRUSTED_TARGET",
            tmp.join("grader-deps"),
        )
        .output()
        .unwrap();
    assert!(
        prepared.status.success(),
        "{}",
        String::from_utf8_lossy(&prepared.stderr)
    );
    Install { root, path }
}

fn grader() -> PathBuf {
    assert_cmd::cargo::cargo_bin("grader")
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Platform {
    Gradescope,
    PrairieLearn,
}

/// One grading of `upload` (files, or a zip of them), as the platform runs
/// it: the results, validated against the platform's schema, and what the
/// entry point printed.
fn grade(
    install: &Install,
    platform: Platform,
    upload: &Upload,
    env: &[(&str, &str)],
) -> (Value, String) {
    let (upload_dir, results, script, schema) = match platform {
        Platform::Gradescope => (
            "autograder/submission",
            "autograder/results/results.json",
            install.root.join("autograder/source/run_autograder"),
            GRADESCOPE_SCHEMA,
        ),
        Platform::PrairieLearn => (
            "grade/student",
            "grade/results/results.json",
            repo().join("scripts/autograder/prairielearn-entrypoint"),
            PRAIRIELEARN_SCHEMA,
        ),
    };
    let dir = install.root.join(upload_dir);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let _ = fs::remove_file(install.root.join(results));
    upload.write(&dir);
    let output = Command::new(script)
        .env_clear()
        .env("PATH", &install.path)
        .env("CUDA_COURSE_AUTOGRADER_ROOT", &install.root)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success(),
        "the entry point must exit 0: {said}"
    );
    let text = fs::read_to_string(install.root.join(results)).unwrap();
    let errors = schema_errors(schema, &text);
    assert!(errors.is_empty(), "{errors:?}\n{text}");
    if platform == Platform::PrairieLearn {
        assert!(text.len() < 1 << 20);
    }
    // Nothing of the student's outlives the grading.
    assert_eq!(processes_of(STUDENT_UID), 0, "{said}");
    (serde_json::from_str(&text).unwrap(), said)
}

fn schema_errors(schema: &str, results: &str) -> Vec<String> {
    let schema: Value = serde_json::from_str(schema).unwrap();
    let results: Value = serde_json::from_str(results).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    validator
        .iter_errors(&results)
        .map(|e| e.to_string())
        .collect()
}

/// Processes of `uid` still alive.
fn processes_of(uid: u32) -> usize {
    fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            let status = fs::read_to_string(e.path().join("status")).unwrap_or_default();
            let alive = !status
                .lines()
                .any(|l| l.starts_with("State:") && l.contains('Z'));
            alive
                && status
                    .lines()
                    .find_map(|l| l.strip_prefix("Uid:"))
                    .is_some_and(|ids| ids.split_whitespace().any(|id| id == uid.to_string()))
        })
        .count()
}

/// An upload: files by name, or those files zipped into one (a name
/// ending in `@` is a link there).
enum Upload {
    Files(Vec<(String, String)>),
    Zip(String, Vec<(String, String)>),
}

impl Upload {
    fn write(&self, dir: &Path) {
        match self {
            Upload::Files(files) => {
                for (name, text) in files {
                    let path = dir.join(name);
                    fs::create_dir_all(path.parent().unwrap()).unwrap();
                    fs::write(path, text).unwrap();
                }
            }
            Upload::Zip(name, files) => {
                let mut zip = zip::ZipWriter::new(fs::File::create(dir.join(name)).unwrap());
                let options = zip::write::SimpleFileOptions::default();
                for (name, text) in files {
                    // A name ending in `@`: a link to `text`.
                    if let Some(link) = name.strip_suffix('@') {
                        zip.add_symlink(link, text.as_str(), options).unwrap();
                    } else {
                        zip.start_file(name.as_str(), options).unwrap();
                        zip.write_all(text.as_bytes()).unwrap();
                    }
                }
                zip.finish().unwrap();
            }
        }
    }
}

/// An exercise's sources from the checkout: `exercises` or `solutions`.
fn sources(kind: &str) -> (String, String) {
    let dir = repo().join(kind).join(EXERCISE).join("src");
    (
        fs::read_to_string(dir.join("kernel.cu")).unwrap(),
        fs::read_to_string(dir.join("main.rs")).unwrap(),
    )
}

/// The tests of a Gradescope result, by name: (score, max_score).
fn scores(results: &Value) -> Vec<(String, u64, u64)> {
    results["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_owned(),
                t["score"].as_u64().unwrap_or(0),
                t["max_score"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

#[test]
fn a_solution_zipped_as_a_workspace_earns_every_point_and_a_compile_error_none() {
    if !is_root() {
        eprintln!("skipped: the autograder's student user needs root");
        return;
    }
    let install = install();
    let (kernel, main) = sources("solutions");
    let workspace = |kernel: &str, main: &str| {
        vec![
            (
                "cuda-course/Cargo.toml".to_owned(),
                "[workspace]\n".to_owned(),
            ),
            (
                format!("cuda-course/exercises/{EXERCISE}/src/kernel.cu"),
                kernel.to_owned(),
            ),
            (
                format!("cuda-course/exercises/{EXERCISE}/src/main.rs"),
                main.to_owned(),
            ),
        ]
    };
    let upload = Upload::Zip("cuda-course.zip".into(), workspace(&kernel, &main));
    let (results, said) = grade(&install, Platform::Gradescope, &upload, &[]);
    let tests = scores(&results);
    let (got, max): (u64, u64) = tests.iter().fold((0, 0), |(g, m), t| (g + t.1, m + t.2));
    assert!(max > 10, "{tests:?}");
    assert_eq!(results["score"], got);
    assert_eq!(got, max, "{tests:?}\n{said}");
    assert_eq!(results["visibility"], "after_due_date");
    assert_eq!(results["tests"][0]["name"], "Your upload");
    assert_eq!(results["tests"][0]["visibility"], "visible");
    let output = results["output"].as_str().unwrap();
    assert!(
        output.contains("Your code ran confined: built in bubblewrap"),
        "{output}"
    );
    assert!(output.contains("CPU emulator"), "{output}");
    assert!(results["execution_time"].as_u64().is_some());

    let broken = main.replacen(
        "fn main()",
        "fn main() { let x: u32 = \"not a number\"; }\nfn unused()",
        1,
    );
    let upload = Upload::Files(vec![
        (format!("{EXERCISE}/src/kernel.cu"), kernel),
        (format!("{EXERCISE}/src/main.rs"), broken),
    ]);
    let (results, _) = grade(&install, Platform::Gradescope, &upload, &[]);
    assert_eq!(results["score"], 0);
    let tests = scores(&results);
    assert_eq!(tests[1].0, format!("{EXERCISE}: builds and runs"));
    assert_eq!(tests[1].2, max);
    let output = results["tests"][1]["output"].as_str().unwrap();
    assert!(
        output.contains("It did not build") && output.contains("mismatched types"),
        "{output}"
    );
}

#[test]
fn loose_stub_files_on_prairielearn_earn_nothing_and_say_why() {
    if !is_root() {
        eprintln!("skipped: the autograder's student user needs root");
        return;
    }
    let install = install();
    let (kernel, main) = sources("exercises");
    let upload = Upload::Files(vec![("kernel.cu".into(), kernel), ("main.rs".into(), main)]);
    let (results, _) = grade(&install, Platform::PrairieLearn, &upload, &[]);
    assert_eq!(results["gradable"], true);
    assert_eq!(results["score"], 0.0);
    let tests = results["tests"].as_array().unwrap();
    assert!(
        tests[0]["output"]
            .as_str()
            .unwrap()
            .contains("your files were taken as dot-sm's src/: kernel.cu, main.rs")
    );
    assert!(tests.len() > 5);
    assert!(
        results["output"]
            .as_str()
            .unwrap()
            .contains("not written yet")
    );
}

#[test]
fn an_empty_upload_or_the_wrong_exercise_is_not_gradable_on_either_platform() {
    if !is_root() {
        eprintln!("skipped: the autograder's student user needs root");
        return;
    }
    let install = install();
    let (kernel, main) = sources("solutions");
    let wrong = Upload::Files(vec![
        ("dot-gm/src/kernel.cu".into(), kernel),
        ("dot-gm/src/main.rs".into(), main),
    ]);
    let empty = Upload::Files(vec![]);
    for platform in [Platform::Gradescope, Platform::PrairieLearn] {
        let (results, _) = grade(&install, platform, &empty, &[]);
        assert_eq!(results["score"].as_f64(), Some(0.0));
        let said = results.to_string();
        assert!(said.contains("Your upload holds no file."), "{said}");
        let (results, _) = grade(&install, platform, &wrong, &[]);
        let said = results.to_string();
        assert!(
            said.contains("This assignment grades dot-sm, and your upload holds dot-gm"),
            "{said}"
        );
        if platform == Platform::PrairieLearn {
            assert_eq!(results["gradable"], false);
        }
    }
}

/// The solution's kernel.cu, from the package's course as the image holds
/// it (closed to the student user, and outside bubblewrap's view).
fn packaged_solution(root: &Path) -> PathBuf {
    root.join(format!(
        "autograder/source/course/solutions/{EXERCISE}/src/kernel.cu"
    ))
}

/// A dot-sm solution whose program, as it runs, tries to read what it must
/// not and to write the results: any success fails its runs.
fn hostile_run(root: &Path) -> Upload {
    let (kernel, main) = sources("solutions");
    let home = root.join("opt/cuda-course-autograder");
    let secrets = [
        packaged_solution(root),
        root.join("autograder/source/autograder.json"),
        home.join("private/autograder.json"),
        home.join(format!("private/trusted/reference/{EXERCISE}")),
        home.join(format!("run/reference/{EXERCISE}")),
        home.join("run/bundle.json"),
    ];
    let list: Vec<String> = secrets
        .iter()
        .map(|p| format!("{:?}", p.display().to_string()))
        .collect();
    let results = root.join("autograder/results/results.json");
    let attack = format!(
        "fn main() -> std::process::ExitCode {{\n    for path in [{}] {{\n        if std::fs::read(path).is_ok() {{\n            eprintln!(\"LEAKED at run time: {{path}}\");\n            std::process::exit(1);\n        }}\n    }}\n    if std::fs::write({:?}, \"{{\\\"score\\\": 999}}\").is_ok() {{\n        eprintln!(\"LEAKED: wrote the results\");\n        std::process::exit(1);\n    }}\n    real_main()\n}}\n",
        list.join(", "),
        results.display().to_string()
    );
    let main = main.replacen("fn main()", "fn real_main()", 1) + &attack;
    Upload::Files(vec![
        (format!("{EXERCISE}/src/kernel.cu"), kernel),
        (format!("{EXERCISE}/src/main.rs"), main),
    ])
}

/// A kernel.cu that includes the solution's, as it builds.
fn hostile_build(root: &Path) -> Upload {
    let (_, main) = sources("exercises");
    let kernel = format!("#include \"{}\"\n", packaged_solution(root).display());
    Upload::Files(vec![
        (format!("{EXERCISE}/src/kernel.cu"), kernel),
        (format!("{EXERCISE}/src/main.rs"), main),
    ])
}

#[test]
fn code_that_reads_the_solutions_reads_nothing_in_bubblewrap_or_as_the_student_user() {
    if !is_root() {
        eprintln!("skipped: the autograder's student user needs root");
        return;
    }
    let install = install();
    // The solution's lines that the stub does not have: none may reach
    // what the student reads.
    let (solution, _) = sources("solutions");
    let (stub, _) = sources("exercises");
    let answers: Vec<&str> = solution
        .lines()
        .map(str::trim)
        .filter(|l| l.len() > 12 && !stub.contains(l))
        .collect();
    assert!(answers.len() > 3, "{answers:?}");
    for (env, confined, refused) in [
        (vec![], "built in bubblewrap", "No such file or directory"),
        // No bubblewrap: as in a Docker container under its default
        // seccomp profile.
        (
            vec![("GRADER_BWRAP", "/nonexistent/bwrap")],
            "built as the unprivileged uid 61000, without bubblewrap",
            "Permission denied",
        ),
    ] {
        let (results, said) = grade(
            &install,
            Platform::Gradescope,
            &hostile_run(&install.root),
            &env,
        );
        let text = results.to_string();
        assert!(!text.contains("LEAKED"), "{text}");
        let tests = scores(&results);
        let (got, max) = tests.iter().fold((0, 0), |(g, m), t| (g + t.1, m + t.2));
        assert_eq!(got, max, "{tests:?}\n{said}");
        assert!(said.contains(&format!("confinement: {confined}")), "{said}");
        assert!(results["output"].as_str().unwrap().contains(confined));

        let (results, said) = grade(
            &install,
            Platform::Gradescope,
            &hostile_build(&install.root),
            &env,
        );
        let output = results["tests"][1]["output"].as_str().unwrap();
        assert!(
            output.contains("It did not build") && output.contains(refused),
            "{output}\n{said}"
        );
        let text = results.to_string();
        for answer in &answers {
            assert!(
                !text.contains(answer),
                "the solution's {answer:?} reached the student"
            );
        }
    }
}

#[test]
fn a_zip_that_links_or_climbs_out_is_taken_without_those_entries_each_named() {
    if !is_root() {
        eprintln!("skipped: the autograder's student user needs root");
        return;
    }
    let install = install();
    let (kernel, main) = sources("solutions");
    let escape = format!("/tmp/cuda-course-escape-{}.rs", std::process::id());
    let climbing = format!("../../../../../../../../../..{escape}");
    let solution = packaged_solution(&install.root).display().to_string();
    let upload = Upload::Zip(
        "mine.zip".into(),
        vec![
            (format!("{EXERCISE}/src/kernel.cu"), kernel),
            (format!("{EXERCISE}/src/main.rs"), main),
            (format!("{EXERCISE}/src/answer.rs@"), solution),
            (climbing.clone(), "fn main() {}".into()),
            (format!("{EXERCISE}/old.zip"), "PK".into()),
        ],
    );
    let (results, said) = grade(&install, Platform::PrairieLearn, &upload, &[]);
    assert!(!Path::new(&escape).exists(), "{escape} was written");
    let check = results["tests"][0]["output"].as_str().unwrap();
    for line in [
        format!("not taken: mine.zip/{EXERCISE}/src/answer.rs is a link"),
        format!("not taken: mine.zip/{climbing} names a place outside the zip"),
        format!("not unpacked: mine.zip/{EXERCISE}/old.zip, a zip inside a zip"),
    ] {
        assert!(check.contains(&line), "{line:?} not in {check}");
    }
    // What was left is the solution, graded in full.
    assert_eq!(results["gradable"], true);
    assert_eq!(results["score"].as_f64(), Some(1.0), "{results}\n{said}");
}
