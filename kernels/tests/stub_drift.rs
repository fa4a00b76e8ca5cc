//! Every stub in exercises/ is its solution in solutions/ with each solved
//! step replaced by a TODO: outside the marked steps the files are equal,
//! line for line, build.rs is the same, and the solution compiles the
//! stub's one tests/cli.rs (docs/src/design.md, "exercises and solutions").
//!
//! A step opens with `// TODO(step N): <sentence>` in the stub and
//! `// Step N: <same sentence>` in the solution, the sentence wrapped onto
//! comment lines that hang deeper (`//     more`); the sentence is the
//! catalogue's step text (kernels::catalogue). The step runs on over the lines
//! below it that are not blank and indented at least as deep, so a step ends
//! at a blank line or at the closing brace of its block.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

#[derive(Debug, PartialEq)]
enum Segment {
    Line(String),
    Step { number: u32, sentence: String },
}

/// A file as segments: plain lines, and whole steps reduced to their marker.
fn segments(text: &str, marker: &Marker) -> Vec<(usize, Segment)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let indent = line.len() - line.trim_start().len();
        match parse_marker(line.trim_start(), marker) {
            Some((number, mut sentence)) => {
                let start = i + 1;
                i += 1;
                while let Some(more) = lines.get(i).and_then(|l| continuation(l)) {
                    sentence.push(' ');
                    sentence.push_str(more);
                    i += 1;
                }
                out.push((start, Segment::Step { number, sentence }));
                while i < lines.len()
                    && !lines[i].trim().is_empty()
                    && lines[i].len() - lines[i].trim_start().len() >= indent
                {
                    i += 1;
                }
            }
            None => {
                out.push((i + 1, Segment::Line(line.to_owned())));
                i += 1;
            }
        }
    }
    out
}

/// The text of a step sentence's continuation line, `//     more words`:
/// wrapped sentences hang by more than the one space of a plain comment.
fn continuation(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix("//  ")?;
    Some(rest.trim())
}

/// How a step's first line reads: `// <open>N<close> <sentence>`.
struct Marker {
    open: &'static str,
    close: &'static str,
}

const STUB_MARKER: Marker = Marker {
    open: "TODO(step ",
    close: "):",
};
const SOLUTION_MARKER: Marker = Marker {
    open: "Step ",
    close: ":",
};

/// `// TODO(step 3): launch ...` gives (3, "launch ...") for the stub marker.
fn parse_marker(line: &str, marker: &Marker) -> Option<(u32, String)> {
    let rest = line.strip_prefix("// ")?.strip_prefix(marker.open)?;
    let (number, sentence) = rest.split_once(marker.close)?;
    Some((number.parse().ok()?, sentence.trim().to_owned()))
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn crate_dirs(parent: &str) -> BTreeMap<String, PathBuf> {
    fs::read_dir(root().join(parent))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.join("Cargo.toml").is_file())
        .map(|path| {
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                path,
            )
        })
        .collect()
}

/// Relative paths of the files under `dir/sub`, sorted.
fn files(dir: &Path, sub: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.join(sub)];
    while let Some(next) = pending.pop() {
        let Ok(entries) = fs::read_dir(&next) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                found.push(path.strip_prefix(dir).unwrap().to_owned());
            }
        }
    }
    found.sort();
    found
}

/// The differences between a stub file and its solution, as messages.
fn drift(name: &str, stub: &str, solution: &str) -> Vec<String> {
    let stub = segments(stub, &STUB_MARKER);
    let solution = segments(solution, &SOLUTION_MARKER);
    let mut problems = Vec::new();
    for pair in stub.iter().zip(solution.iter()) {
        let ((stub_line, stub_segment), (solution_line, solution_segment)) = pair;
        if stub_segment != solution_segment {
            problems.push(format!(
                "{name}: stub line {stub_line} {stub_segment:?}\n    solution line {solution_line} {solution_segment:?}"
            ));
            break; // Everything after the first difference is shifted.
        }
    }
    if problems.is_empty() && stub.len() != solution.len() {
        problems.push(format!(
            "{name}: the stub has {} segments and the solution {}: one ends early",
            stub.len(),
            solution.len()
        ));
    }
    problems
}

fn steps(text: &str) -> Vec<u32> {
    step_sentences(text).into_iter().map(|(n, _)| n).collect()
}

/// Each step of a stub file with its whole sentence.
fn step_sentences(text: &str) -> Vec<(u32, String)> {
    segments(text, &STUB_MARKER)
        .into_iter()
        .filter_map(|(_, segment)| match segment {
            Segment::Step { number, sentence } => Some((number, sentence)),
            Segment::Line(_) => None,
        })
        .collect()
}

#[test]
fn every_step_reads_as_the_catalogue_says_in_the_file_it_names() {
    let mut problems = Vec::new();
    for exercise in kernels::catalogue::EXERCISES {
        let dir = root().join("exercises").join(exercise.name);
        let mut found = Vec::new();
        for file in files(&dir, "src") {
            let text = fs::read_to_string(dir.join(&file)).unwrap();
            for (number, sentence) in step_sentences(&text) {
                found.push(number);
                match exercise.step(number) {
                    None => problems.push(format!(
                        "{}: step {number} is not in the catalogue",
                        exercise.name
                    )),
                    Some(step) if step.task != sentence => problems.push(format!(
                        "{}/{}: step {number} reads\n    {sentence}\n  the catalogue says\n    {}",
                        exercise.name,
                        file.display(),
                        step.task
                    )),
                    Some(step) if Path::new(step.file.path()) != file => problems.push(format!(
                        "{}: step {number} is in {}, the catalogue says {}",
                        exercise.name,
                        file.display(),
                        step.file.path()
                    )),
                    Some(_) => {}
                }
            }
        }
        found.sort();
        let expected: Vec<u32> = (1..=exercise.steps.len() as u32).collect();
        if found != expected {
            problems.push(format!(
                "{}: the stub has steps {found:?}, the catalogue {}",
                exercise.name,
                exercise.steps.len()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn step_lines_fit_in_80_columns() {
    for (name, dir) in crate_dirs("exercises") {
        for file in files(&dir, "src") {
            let text = fs::read_to_string(dir.join(&file)).unwrap();
            for (at, line) in text.lines().enumerate() {
                let in_step = line.contains("TODO(step") || continuation(line).is_some();
                // A link alone on its line cannot be wrapped.
                let unbreakable = continuation(line).is_some_and(|t| !t.contains(' '));
                assert!(
                    !in_step || unbreakable || line.chars().count() <= 80,
                    "{name}/{}:{}: a step line longer than 80 columns",
                    file.display(),
                    at + 1
                );
            }
        }
    }
}

#[test]
fn every_stub_matches_its_solution_outside_the_steps() {
    let stubs = crate_dirs("exercises");
    let solutions = crate_dirs("solutions");
    assert!(
        !stubs.is_empty(),
        "no exercises found under {}",
        root().display()
    );
    assert_eq!(
        stubs.keys().collect::<Vec<_>>(),
        solutions.keys().collect::<Vec<_>>(),
        "every exercise needs a solution of the same folder name, and back"
    );
    let catalogue: Vec<&str> = kernels::catalogue::EXERCISES.map(|e| e.name).to_vec();
    let mut sorted = catalogue.clone();
    sorted.sort();
    assert_eq!(
        solutions.keys().map(String::as_str).collect::<Vec<_>>(),
        sorted,
        "solutions/ must hold exactly the catalogue's exercises"
    );
    let mut problems = Vec::new();
    for (name, stub_dir) in &stubs {
        let solution_dir = &solutions[name];
        let stub_files = files(stub_dir, "src");
        let solution_files = files(solution_dir, "src");
        if stub_files != solution_files {
            problems.push(format!(
                "{name}: files differ: {stub_files:?} vs {solution_files:?}"
            ));
            continue;
        }
        // One test file for both: the solution compiles the stub's.
        problems.extend(shared_tests(name, stub_dir, solution_dir));
        for file in stub_files.iter().chain([&PathBuf::from("build.rs")]) {
            let stub = fs::read_to_string(stub_dir.join(file)).unwrap();
            let solution = fs::read_to_string(solution_dir.join(file)).unwrap();
            let label = format!("{name}/{}", file.display());
            if file.starts_with("src") {
                problems.extend(drift(&label, &stub, &solution));
            } else if stub != solution {
                problems.push(format!("{label}: must be the same in stub and solution"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "stubs drifted from solutions:\n{}",
        problems.join("\n")
    );
}

/// What is wrong with how a solution shares its stub's tests: it has no
/// tests/ of its own, and its Cargo.toml names the stub's tests/cli.rs as
/// its test `cli`.
fn shared_tests(name: &str, stub_dir: &Path, solution_dir: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    if !files(solution_dir, "tests").is_empty() {
        problems.push(format!(
            "{name}: the solution has tests/ of its own; it compiles the stub's"
        ));
    }
    if !stub_dir.join("tests/cli.rs").is_file() {
        problems.push(format!("{name}: the stub has no tests/cli.rs"));
    }
    let manifest = fs::read_to_string(solution_dir.join("Cargo.toml")).unwrap();
    let wanted =
        format!("[[test]]\nname = \"cli\"\npath = \"../../exercises/{name}/tests/cli.rs\"\n");
    if !manifest.contains(&wanted) {
        problems.push(format!(
            "{name}: solutions/{name}/Cargo.toml must name the stub's tests as its own:\n{wanted}"
        ));
    }
    problems
}

#[test]
fn every_stub_numbers_its_steps_once_each_from_1() {
    for (name, dir) in crate_dirs("exercises") {
        let mut all: Vec<u32> = files(&dir, "src")
            .iter()
            .flat_map(|file| steps(&fs::read_to_string(dir.join(file)).unwrap()))
            .collect();
        all.sort();
        let expected: Vec<u32> = (1..=all.len() as u32).collect();
        assert!(
            !all.is_empty(),
            "{name}: a stub without a single TODO(step N)"
        );
        assert_eq!(all, expected, "{name}: steps must be 1..=N, each once");
    }
}

/// An exercise's progress as `cargo course` reads it from `dir`'s sources,
/// each edited first by `edit`.
fn progress_of(
    exercise: &kernels::catalogue::Exercise,
    dir: &Path,
    edit: impl Fn(String) -> String,
) -> kernels::catalogue::Progress {
    exercise.progress(|file| edit(fs::read_to_string(dir.join(file.path())).unwrap()))
}

#[test]
fn every_stub_has_every_step_left_and_every_host_step_a_placeholder() {
    // A host step without its placeholder would read as written in the stub,
    // and the program would not stop there.
    for exercise in kernels::catalogue::EXERCISES {
        let dir = root().join("exercises").join(exercise.name);
        let progress = progress_of(&exercise, &dir, |text| text);
        let all: Vec<u32> = (1..=exercise.steps.len() as u32).collect();
        let host: Vec<u32> = all
            .iter()
            .copied()
            .filter(|&n| exercise.step(n).unwrap().file == kernels::catalogue::StepFile::Host)
            .collect();
        assert_eq!(progress.left, all, "{}", exercise.name);
        assert_eq!(progress.placeholders, host, "{}", exercise.name);
        assert_eq!(progress.todo_comments, all, "{}", exercise.name);
    }
}

#[test]
fn a_solution_with_the_stubs_todo_comments_left_in_has_no_step_left() {
    // What most students hand in: every step written, every comment kept.
    // The solution's `// Step N:` is the stub's `// TODO(step N):`.
    for exercise in kernels::catalogue::EXERCISES {
        let dir = root().join("solutions").join(exercise.name);
        let progress = progress_of(&exercise, &dir, |text| {
            text.lines()
                .map(
                    |line| match parse_marker(line.trim_start(), &SOLUTION_MARKER) {
                        Some((number, sentence)) => {
                            let indent = &line[..line.len() - line.trim_start().len()];
                            format!("{indent}// TODO(step {number}): {sentence}\n")
                        }
                        None => format!("{line}\n"),
                    },
                )
                .collect()
        });
        let all: Vec<u32> = (1..=exercise.steps.len() as u32).collect();
        assert_eq!(progress.todo_comments, all, "{}", exercise.name);
        assert_eq!(progress.left, Vec::<u32>::new(), "{}", exercise.name);
        assert_eq!(
            progress.placeholders,
            Vec::<u32>::new(),
            "{}",
            exercise.name
        );
    }
}

#[test]
fn package_names_pair_stub_and_solution() {
    let name_of = |dir: &Path| -> String {
        let manifest = fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let line = manifest.lines().find(|l| l.starts_with("name = ")).unwrap();
        line.trim_start_matches("name = ")
            .trim_matches('"')
            .to_owned()
    };
    let solutions = crate_dirs("solutions");
    for (folder, dir) in crate_dirs("exercises") {
        assert_eq!(name_of(&dir), folder);
        assert_eq!(name_of(&solutions[&folder]), format!("{folder}-solution"));
    }
}

// The checker itself must be able to fail.

const SOLVED: &str = "\
fn main() {
    let x = 1;
    // Step 1: add one.
    // Because.
    let y = x + 1;

    println!(\"{y}\");
}
";

const STUB: &str = "\
fn main() {
    let x = 1;
    // TODO(step 1): add one.
    let y = todo();

    println!(\"{y}\");
}
";

#[test]
fn a_faithful_stub_passes() {
    assert_eq!(drift("t", STUB, SOLVED), Vec::<String>::new());
    assert_eq!(steps(STUB), vec![1]);
}

#[test]
fn a_change_outside_a_step_is_caught() {
    let edited = STUB.replace("let x = 1;", "let x = 2;");
    assert_eq!(drift("t", &edited, SOLVED).len(), 1);
}

#[test]
fn a_wrapped_sentence_is_one_sentence() {
    let wrapped = STUB.replace("add one.", "add\n    //     one.");
    assert_eq!(steps(&wrapped), vec![1]);
    assert_eq!(step_sentences(&wrapped)[0].1, "add one.");
    assert_eq!(drift("t", &wrapped, SOLVED), Vec::<String>::new());
}

#[test]
fn a_changed_step_sentence_is_caught() {
    let edited = STUB.replace("add one.", "add two.");
    assert_eq!(drift("t", &edited, SOLVED).len(), 1);
}

#[test]
fn a_step_ends_at_the_closing_brace_of_its_block() {
    let solved = "{\n    // Step 1: go.\n    a();\n}\nafter();\n";
    let stub = "{\n    // TODO(step 1): go.\n}\nafter();\n";
    assert_eq!(drift("t", stub, solved), Vec::<String>::new());
    let drifted = "{\n    // TODO(step 1): go.\n}\nbefore();\n";
    assert_eq!(drift("t", drifted, solved).len(), 1);
}

#[test]
fn a_missing_tail_is_caught() {
    let cut = STUB.replace("    println!(\"{y}\");\n}\n", "");
    assert_eq!(drift("t", &cut, SOLVED).len(), 1);
}

#[test]
fn a_solution_with_its_own_tests_or_another_test_path_is_caught() {
    let dir = tempfile_dir();
    let (stub, solution) = (dir.join("exercises/x"), dir.join("solutions/x"));
    fs::create_dir_all(stub.join("tests")).unwrap();
    fs::create_dir_all(solution.join("tests")).unwrap();
    fs::write(stub.join("tests/cli.rs"), "").unwrap();
    fs::write(solution.join("tests/cli.rs"), "").unwrap();
    fs::write(
        solution.join("Cargo.toml"),
        "[[test]]\nname = \"cli\"\npath = \"tests/cli.rs\"\n",
    )
    .unwrap();
    assert_eq!(shared_tests("x", &stub, &solution).len(), 2);
    fs::remove_file(solution.join("tests/cli.rs")).unwrap();
    fs::write(
        solution.join("Cargo.toml"),
        "[[test]]\nname = \"cli\"\npath = \"../../exercises/x/tests/cli.rs\"\n",
    )
    .unwrap();
    assert_eq!(shared_tests("x", &stub, &solution), Vec::<String>::new());
    fs::remove_dir_all(&dir).unwrap();
}

/// A fresh folder of this test's own under the target folder.
fn tempfile_dir() -> PathBuf {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("stub-drift-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}
