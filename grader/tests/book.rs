//! Every number the course book (docs/src) states about the grader comes
//! from the grading code: each chapter's points sentence and the size of its
//! table of runs, the instructors' table of points, every "N of M points"
//! and mutant score's maximum, the class's total, and the speed point's
//! fraction. The grader is read through one hook, the catalogue's
//! `Exercise::full_marks` (and `points::SPEED_FRACTION`), the data the
//! grader's plans are drawn to (checked here against the plans of many
//! seeds); on a failure the message gives the text to write.

use std::fs;
use std::path::{Path, PathBuf};

use kernels::catalogue::points::SPEED_FRACTION;
use kernels::catalogue::{EXERCISES, ExerciseId, FullMarks};
use kernels::units::{counted, listed};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn page(name: &str) -> String {
    let path = root().join("docs/src").join(name);
    fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// A page's lines outside fenced code blocks: what the book says, not the
/// sample output it quotes (a run's output is that run's, not the rules').
fn prose_lines(markdown: &str) -> Vec<&str> {
    // The open fence's length: a fence of four backticks may quote three.
    let mut fence: Option<usize> = None;
    markdown
        .lines()
        .filter(|line| {
            let trimmed = line.trim();
            let ticks = trimmed.len() - trimmed.trim_start_matches('`').len();
            match fence {
                None if ticks >= 3 => {
                    fence = Some(ticks);
                    false
                }
                None => true,
                Some(open) => {
                    if ticks >= open && ticks == trimmed.len() {
                        fence = None;
                    }
                    false
                }
            }
        })
        .collect()
}

/// Prose with its line breaks and runs of spaces as single spaces, so a
/// sentence is found however the page wraps it.
fn flowing(markdown: &str) -> String {
    prose_lines(markdown)
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The exercise's marks, and the same in the plan the grader draws from
/// every seed (the book cannot give numbers that depend on one).
fn marks(exercise: &str) -> FullMarks {
    let id = ExerciseId::from_name(exercise).unwrap();
    let marks = id.exercise().full_marks();
    for seed in 0..32 {
        let plan = grader::plan::exercise::plan(id, seed);
        let points: u32 = plan.iter().map(|run| run.points).sum();
        assert_eq!(
            (
                plan.len(),
                marks.ptx + points + marks.memory_safety + marks.speed + marks.lesson
            ),
            (marks.runs + marks.kernel_runs, marks.points()),
            "{exercise}: the plan of seed {seed} is not the catalogue's"
        );
    }
    marks
}

/// The sentence each exercise's chapter states, word for word.
fn points_sentence(marks: &FullMarks) -> String {
    let mut parts = vec![
        format!("{} for the PTX", marks.ptx),
        format!(
            "{} for each of its {}",
            marks.run_points,
            counted(marks.runs, "run", "runs")
        ),
    ];
    match marks.kernel_runs {
        0 => {}
        1 => parts.push(format!(
            "{} for its run of the kernel alone",
            marks.kernel_run_points
        )),
        n => parts.push(format!(
            "{} for each of its {n} runs of the kernel alone",
            marks.kernel_run_points
        )),
    }
    parts.push(format!("{} for memory safety", marks.memory_safety));
    if marks.speed > 0 {
        parts.push(format!("{} for speed", marks.speed));
    }
    if marks.lesson > 0 {
        parts.push(format!("{} for the lesson", marks.lesson));
    }
    format!(
        "The grader gives up to {}: {}.",
        counted(marks.points() as usize, "point", "points"),
        listed(&parts)
    )
}

/// The instructors' table of points, line for line.
fn points_table() -> String {
    let mut table = String::from(
        "| exercise | runs | runs of the kernel alone | points: PTX + runs + kernel alone + memory safety + speed + lesson |\n\
         | --- | --- | --- | --- |\n",
    );
    for exercise in EXERCISES {
        let m = marks(exercise.name);
        table.push_str(&format!(
            "| {} | {} | {} | {} + {} + {} + {} + {} + {} = {} |\n",
            exercise.name,
            m.runs,
            m.kernel_runs,
            m.ptx,
            m.runs as u32 * m.run_points,
            m.kernel_runs as u32 * m.kernel_run_points,
            m.memory_safety,
            m.speed,
            m.lesson,
            m.points()
        ));
    }
    table
}

/// Whether `text` holds `sentence`, which may end in a parenthesis (a link
/// to more) before its full stop.
fn states(text: &str, sentence: &str) -> bool {
    let stem = sentence.trim_end_matches('.');
    text.match_indices(stem).any(|(at, _)| {
        let rest = &text[at + stem.len()..];
        rest.starts_with('.') || rest.starts_with(" (")
    })
}

/// Every "N of M points" in a page's prose, as (N, M).
fn points_stated(markdown: &str) -> Vec<(u32, u32)> {
    let words: Vec<String> = flowing(markdown)
        .split(' ')
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_owned())
        .collect();
    words
        .windows(4)
        .filter(|w| w[1] == "of" && w[3] == "points")
        .filter_map(|w| Some((w[0].parse().ok()?, w[2].parse().ok()?)))
        .collect()
}

/// Every "N/M" in `text`, as (N, M).
fn scores(text: &str) -> Vec<(u32, u32)> {
    text.split(|c: char| !c.is_ascii_digit() && c != '/')
        .filter_map(|w| {
            let (n, m) = w.split_once('/')?;
            Some((n.parse().ok()?, m.parse().ok()?))
        })
        .collect()
}

#[test]
fn the_full_marks_are_the_sum_of_the_plans_points() {
    // The hook against the plan it reads: every run of a kind earns alike.
    for exercise in EXERCISES {
        let m = marks(exercise.name);
        let plan = grader::plan::exercise::plan(exercise.id, 2026);
        let runs: u32 = plan.iter().map(|run| run.points).sum();
        assert_eq!(
            m.points(),
            m.ptx + runs + m.memory_safety + m.speed + m.lesson,
            "{}",
            exercise.name
        );
        assert_eq!(m.runs + m.kernel_runs, plan.len(), "{}", exercise.name);
        assert!(m.runs > 0 && m.ptx > 0, "{}", exercise.name);
    }
}

#[test]
fn each_chapter_states_its_points_and_lists_its_runs() {
    let mut problems = Vec::new();
    for exercise in EXERCISES {
        let m = marks(exercise.name);
        let chapter = exercise.chapter();
        let text = page(chapter.trim_start_matches("docs/src/"));
        let sentence = points_sentence(&m);
        if !states(&flowing(&text), &sentence) {
            problems.push(format!(
                "{chapter} must say, under \"How it is checked\":\n    {sentence}"
            ));
        }
        // Its table of runs, where it has one: a row per planned run.
        let lines = prose_lines(&text);
        if let Some(header) = lines.iter().position(|l| l.starts_with("| run | why |")) {
            let rows = lines[header + 2..]
                .iter()
                .take_while(|l| l.starts_with('|'))
                .count();
            let planned = m.runs + m.kernel_runs;
            if rows != planned {
                problems.push(format!(
                    "{chapter}: its table of runs has {rows} rows; the grader plans {planned} runs"
                ));
            }
        }
        for (got, max) in points_stated(&text) {
            if max != m.points() || got > max {
                problems.push(format!(
                    "{chapter}: \"{got} of {max} points\": {} can earn {} points",
                    exercise.name,
                    m.points()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn each_chapter_lists_the_launch_shapes_every_grading_covers() {
    let mut problems = Vec::new();
    for exercise in EXERCISES {
        let chapter = exercise.chapter();
        let mut text = flowing(&page(chapter.trim_start_matches("docs/src/")));
        // dot-atomic's chapter says its shapes are dot-sm's.
        if exercise.id == kernels::catalogue::ExerciseId::DotAtomic {
            assert!(text.contains("and so are the launch shapes every grading covers"));
            text = flowing(&page("dot-sm.md"));
        }
        for shape in exercise.shapes {
            if !text.contains(&format!("- {}", shape.words())) {
                problems.push(format!("{chapter} does not list \"- {}\"", shape.words()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_instructors_page_states_the_points_the_grader_gives() {
    let text = page("instructors.md");
    let table = points_table();
    assert!(
        text.contains(&table),
        "docs/src/instructors.md, under \"Points\", must hold this table:\n{table}"
    );

    // The grader's own class: "every solution 73/73, every stub 0/73".
    let total: u32 = EXERCISES.iter().map(|e| marks(e.name).points()).sum();
    let class = flowing(&text);
    let at = class
        .find("every solution ")
        .expect("instructors.md: the class's totals, \"every solution N/N\"");
    for (got, max) in scores(&class[at..at + 60]) {
        assert_eq!(
            max, total,
            "instructors.md: the class's total is {total}, the page says {got}/{max}"
        );
    }

    // The mutant table: each row's maximum is its exercise's.
    let mut rows = 0;
    for line in prose_lines(&text) {
        let Some(exercise) = EXERCISES
            .iter()
            .find(|e| line.starts_with(&format!("| {}: ", e.name)))
        else {
            continue;
        };
        rows += 1;
        let m = marks(exercise.name).points();
        let found = scores(line);
        assert!(!found.is_empty(), "instructors.md: no score in {line}");
        for (got, max) in found {
            assert!(
                max == m && got <= max,
                "instructors.md: {got}/{max} in \"{line}\": {} can earn {m} points",
                exercise.name
            );
        }
    }
    assert!(rows > 0, "instructors.md: no mutant table rows found");
    let unnamed = points_stated(&text);
    assert!(
        unnamed.is_empty(),
        "instructors.md: \"N of M points\" ({unnamed:?}) names no exercise; say which, or use a table"
    );
}

#[test]
fn the_speed_point_asks_for_the_fraction_the_grader_does() {
    let words = if SPEED_FRACTION == 0.5 {
        "half the course's"
    } else {
        panic!("SPEED_FRACTION is {SPEED_FRACTION}: say it in words here and in the book")
    };
    let instructors = flowing(&page("instructors.md"));
    assert!(
        instructors.contains(&format!("The point asks for {words} speed or better")),
        "instructors.md must say: The point asks for {words} speed or better"
    );
    let tiled = kernels::catalogue::ExerciseId::MatmulTiled.exercise();
    assert_eq!(
        tiled.speed_fraction(),
        0.75,
        "say it in words here and in the book"
    );
    for page_name in ["instructors.md", "matmul-tiled.md"] {
        let text = flowing(&page(page_name));
        assert!(
            text.contains("three quarters of the course's"),
            "{page_name} must say matmul-tiled's speed point asks three quarters of the course's speed"
        );
    }
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        flowing(&readme).contains(&format!("a speed point ({words} own kernel's speed")),
        "README.md must say: a speed point ({words} own kernel's speed"
    );
}

// The checks themselves must be able to fail.

#[test]
fn the_readers_find_what_they_look_for_and_nothing_in_code() {
    let text = "Say 3 of 9\npoints here.\n```text\n0 of 11 points\n```\n| dot-gm: x | 2/10 (3/10 once) |\n\
                ````text\n  ```text\n  1 of 2 points\n  ```\n````\n";
    assert_eq!(points_stated(text), [(3, 9)]);
    assert_eq!(prose_lines(text).len(), 3, "{:?}", prose_lines(text));
    assert_eq!(scores(prose_lines(text)[2]), [(2, 10), (3, 10)]);
    let m = FullMarks {
        ptx: 1,
        runs: 4,
        run_points: 2,
        kernel_runs: 1,
        kernel_run_points: 1,
        memory_safety: 1,
        speed: 1,
        lesson: 0,
    };
    assert!(states(
        "So. The grader gives 1 point: a (see).",
        "The grader gives 1 point: a."
    ));
    assert!(states(
        "The grader gives 1 point: a.",
        "The grader gives 1 point: a."
    ));
    assert!(!states(
        "The grader gives 1 point: a, b.",
        "The grader gives 1 point: a."
    ));
    assert_eq!(
        points_sentence(&m),
        "The grader gives up to 12 points: 1 for the PTX, 2 for each of its 4 runs, \
         1 for its run of the kernel alone, 1 for memory safety and 1 for speed."
    );
}
