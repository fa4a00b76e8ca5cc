//! The course's exercises as data: order, title, summary, every step with its
//! hint, the PTX each exercise must show (the `ptx` crate checks it), its
//! book chapter, and its grading facts ([`ExerciseId`], [`RunSpec`],
//! [`points`], [`Exercise::full_marks`]). The grader,
//! the `course` command, the stub drift test and the book read this one
//! table; tests check it against the exercises/ and solutions/ folders and
//! the stubs' `TODO(step N)` texts.
//!
//! Standard library only, like [`crate::nvcc`]: every crate of the course,
//! and the student's copy of it, can depend on it without a GPU.

mod exercises;
mod grading;
mod id;

pub use exercises::EXERCISES;
pub use grading::{Behaviour, Emulated, FullMarks, Lesson, RunSpec, RunTag, Shape, points};
pub use id::{ALL_IDS, ExerciseId, Family};

use ptx::features::{Lack, Meaning};

/// One exercise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exercise {
    pub id: ExerciseId,
    /// The folder under exercises/ and the stub's package and binary name;
    /// the solution's is `<name>-solution`: `id.name()`.
    pub name: &'static str,
    /// A few words, for lists: at most 27 characters, so a list of
    /// name, state and title fits in 80 columns.
    pub title: &'static str,
    /// One sentence on what the exercise teaches.
    pub summary: &'static str,
    /// The steps in order: step N is `steps[N - 1]`.
    pub steps: &'static [Step],
    /// What the PTX must show for the exercise to count as solved the
    /// intended way.
    pub ptx: &'static [PtxNeed],
    /// The kernels a run must launch: each entry one kernel, any one of
    /// whose names will do (matmul-tiled builds one per tile size).
    pub launches: &'static [&'static [&'static str]],
    /// The runs the grader plans, in order (see [`RunSpec`]).
    pub runs: &'static [RunSpec],
    /// The launch-shape classes every grading covers (see [`Shape`]); the
    /// exercise's chapter lists them.
    pub shapes: &'static [Shape],
    /// What the kernel must be seen doing on the CPU emulator, beyond its
    /// answer (see [`Lesson`]); the chapter says what is counted.
    pub lesson: Option<Lesson>,
}

/// One `TODO(step N)` of a stub.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub file: StepFile,
    /// The stub's `TODO(step N):` sentence, word for word (the stubs wrap it
    /// at 80 columns).
    pub task: &'static str,
    /// A nudge towards the answer, never the answer itself.
    pub hint: &'static str,
}

/// Where a step is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepFile {
    /// src/kernel.cu, in CUDA C.
    Kernel,
    /// src/main.rs, in Rust on cust.
    Host,
}

impl StepFile {
    /// The file's path inside the exercise's folder.
    pub fn path(self) -> &'static str {
        match self {
            StepFile::Kernel => "src/kernel.cu",
            StepFile::Host => "src/main.rs",
        }
    }
}

/// Something a student's PTX must show for the exercise to count as solved
/// the intended way: a meaning (`ptx::features::Meaning`: a block barrier
/// in any form, an atomic of any width and scope, where the data is read
/// from), inside `kernel` if given, judged by the `ptx` crate's one checker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtxNeed {
    pub kernel: Option<&'static str>,
    pub shows: Meaning,
    /// What it is, for a student ("a barrier, __syncthreads()").
    pub feature: &'static str,
    /// What its absence means, for the feedback.
    pub why: &'static str,
}

impl PtxNeed {
    /// What `module` lacks of this need, in the feedback's words; None
    /// when it shows it. `cargo course check`, the exercises' tests and the
    /// grader all say it this way.
    pub fn missing_in(&self, module: &ptx::ast::Module) -> Option<String> {
        Some(
            match ptx::features::lack(module, self.kernel, self.shows)? {
                Lack::NoKernel => format!(
                    "no kernel named {} in the PTX: keep the name and extern \"C\"",
                    self.kernel.unwrap_or_default()
                ),
                Lack::NoInstruction => {
                    format!("{} (no {} among its instructions)", self.why, self.shows)
                }
                Lack::OtherSpace {
                    space,
                    opcode,
                    source_line,
                } => format!(
                    "{}: it computes with values it loads from {} ({opcode}{}), where the \
                 exercise reads from {} only",
                    self.feature,
                    space.words(),
                    source_line.map_or(String::new(), |line| format!(", kernel.cu line {line}")),
                    self.shows_space_words()
                ),
            },
        )
    }

    fn shows_space_words(&self) -> &'static str {
        match self.shows {
            Meaning::DataFrom(space)
            | Meaning::Loads(space)
            | Meaning::Stores(space)
            | Meaning::Atomic(space) => space.words(),
            Meaning::SpecialRegister(_) | Meaning::BlockBarrier => "its own space",
        }
    }
}

impl Exercise {
    pub fn solution_package(&self) -> String {
        format!("{}-solution", self.name)
    }

    /// The exercise's chapter of the course book, from the workspace root.
    pub fn chapter(&self) -> String {
        format!("docs/src/{}.md", self.name)
    }

    /// What the sources show of each step, given the text of each step's
    /// file. A step is written when its placeholder is gone: a host step's
    /// `kernels::unfinished(N)` call, where the program stops until the step
    /// is written. A kernel step has no placeholder (its stub is an empty
    /// body or loop), so reading cannot tell; it counts as left while its
    /// `TODO(step N)` comment is there and no step after it is written yet
    /// (a student who went on has written it), and only a passing run shows
    /// it right. A `TODO(step N)` comment above a written step never counts:
    /// most people leave comments.
    pub fn progress(&self, text_of: impl Fn(StepFile) -> String) -> Progress {
        let kernel = text_of(StepFile::Kernel);
        let host = text_of(StepFile::Host);
        let mut progress = Progress::default();
        let mut later_written = false;
        for (index, step) in self.steps.iter().enumerate().rev() {
            let number = index as u32 + 1;
            let text = match step.file {
                StepFile::Kernel => &kernel,
                StepFile::Host => &host,
            };
            let commented = has_todo_comment(text, number);
            let placeholder = step.file == StepFile::Host && calls_placeholder(text, number);
            let left = match step.file {
                StepFile::Host => placeholder,
                StepFile::Kernel => commented && !later_written,
            };
            later_written |= !left;
            if left {
                progress.left.insert(0, number);
            }
            if placeholder {
                progress.placeholders.insert(0, number);
            }
            if commented {
                progress.todo_comments.insert(0, number);
            }
        }
        progress
    }

    /// Step `number` (from 1), if the exercise has it.
    pub fn step(&self, number: u32) -> Option<&'static Step> {
        let index = usize::try_from(number).ok()?.checked_sub(1)?;
        self.steps.get(index)
    }
}

/// The exercise of this name.
pub fn find(name: &str) -> Option<&'static Exercise> {
    ExerciseId::from_name(name).map(ExerciseId::exercise)
}

/// Every exercise's name in course order, comma-separated, for messages that
/// list what is allowed.
pub fn names() -> String {
    EXERCISES.map(|e| e.name).join(", ")
}

/// What an exercise's sources show of its steps ([`Exercise::progress`]),
/// each list in step order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Progress {
    /// The steps not written yet, as far as reading the sources can tell:
    /// what `cargo course` lists as left, and the next step is the first.
    pub left: Vec<u32>,
    /// The steps whose placeholder the program still calls: it cannot get
    /// past them, so the exercise is not done while any is there. Part of
    /// `left`.
    pub placeholders: Vec<u32>,
    /// The steps whose `TODO(step N)` comment is still in its file, written
    /// or not.
    pub todo_comments: Vec<u32>,
}

/// Whether `text` still holds step `number`'s `TODO(step N)` comment.
pub fn has_todo_comment(text: &str, number: u32) -> bool {
    text.contains(&format!("TODO(step {number})"))
}

/// Whether the code in `text` still calls step `number`'s placeholder,
/// `unfinished(N)` (also `unfinished::<T>(N)`, any spacing); a call in a
/// `//` comment does not count, since the program never reaches it.
pub fn calls_placeholder(text: &str, number: u32) -> bool {
    const NAME: &str = "unfinished";
    text.lines()
        .map(|line| line.split_once("//").map_or(line, |(code, _)| code))
        .any(|code| {
            code.match_indices(NAME).any(|(at, _)| {
                let before = code[..at].chars().next_back();
                let whole_name = !before.is_some_and(|c| c.is_alphanumeric() || c == '_');
                whole_name && placeholder_argument(&code[at + NAME.len()..]) == Some(number)
            })
        })
}

/// The step number of `::<T>(N)` or `(N)` after the placeholder's name.
fn placeholder_argument(rest: &str) -> Option<u32> {
    let mut rest = rest.trim_start();
    if let Some(generic) = rest.strip_prefix("::") {
        // The type argument, up to its matching `>`.
        let generic = generic.trim_start().strip_prefix('<')?;
        let mut depth = 1;
        let end = generic.char_indices().find_map(|(at, c)| {
            match c {
                '<' => depth += 1,
                '>' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(at)
        })?;
        rest = generic[end + 1..].trim_start();
    }
    let (argument, _) = rest.strip_prefix('(')?.split_once(')')?;
    argument.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placeholder_is_a_call_in_code_of_that_step() {
        assert!(calls_placeholder("let x = kernels::unfinished(3)?;", 3));
        assert!(calls_placeholder("kernels::unfinished::<()>(3)?;", 3));
        assert!(calls_placeholder(
            "unfinished :: < DeviceBuffer<f32> > ( 3 )",
            3
        ));
        assert!(calls_placeholder("a()?;\n    kernels::unfinished(3)\n", 3));
        assert!(!calls_placeholder("kernels::unfinished(13)?;", 3));
        assert!(!calls_placeholder("kernels::unfinished(3)?;", 1));
        assert!(!calls_placeholder("// kernels::unfinished(3)?;", 3));
        assert!(!calls_placeholder(
            "d_a.copy_from(&a)?; // was unfinished(3)",
            3
        ));
        assert!(!calls_placeholder("not_unfinished(3)", 3));
        assert!(!calls_placeholder("// TODO(step 3): copy a", 3));
    }

    #[test]
    fn a_todo_comment_names_its_own_step() {
        assert!(has_todo_comment("// TODO(step 3): do it", 3));
        assert!(!has_todo_comment("// TODO(step 13): later", 3));
        assert!(!has_todo_comment("d_a.copy_from(&a)?;", 3));
    }

    /// vecadd-anyN's sources with step 1 (the kernel) and the host steps
    /// `written` written, each keeping or dropping its TODO comment.
    fn vecadd_progress(kernel_written: bool, written: &[u32], comments: bool) -> Progress {
        let vecadd = find("vecadd-anyN").unwrap();
        let comment = |n: u32| {
            if comments {
                format!("// TODO(step {n}): do it\n")
            } else {
                String::new()
            }
        };
        vecadd.progress(|file| match file {
            StepFile::Kernel => {
                let body = if kernel_written {
                    "c[i] = a[i] + b[i];"
                } else {
                    ""
                };
                format!("{{\n{}{body}\n}}", comment(1))
            }
            StepFile::Host => (2..=6)
                .map(|n| {
                    let code = if written.contains(&n) {
                        "written()?;".to_owned()
                    } else {
                        format!("kernels::unfinished::<()>({n})?;")
                    };
                    format!("{}{code}\n", comment(n))
                })
                .collect(),
        })
    }

    #[test]
    fn the_stub_has_every_step_left() {
        let stub = vecadd_progress(false, &[], true);
        assert_eq!(stub.left, [1, 2, 3, 4, 5, 6]);
        assert_eq!(stub.placeholders, [2, 3, 4, 5, 6]);
        assert_eq!(stub.todo_comments, [1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn todo_comments_never_keep_a_written_step_left() {
        let all = vecadd_progress(true, &[2, 3, 4, 5, 6], true);
        assert_eq!(all.left, Vec::<u32>::new());
        assert_eq!(all.placeholders, Vec::<u32>::new());
        assert_eq!(all.todo_comments, [1, 2, 3, 4, 5, 6]);
        let some = vecadd_progress(true, &[2, 3], true);
        assert_eq!(some.left, [4, 5, 6]);
        assert_eq!(some.placeholders, [4, 5, 6]);
    }

    #[test]
    fn a_kernel_step_counts_as_written_once_its_comment_goes_or_a_later_step_is_written() {
        // Its comment kept, nothing after it written: reading cannot tell,
        // and it is where to start.
        assert_eq!(vecadd_progress(true, &[], true).left, [1, 2, 3, 4, 5, 6]);
        // Its comment gone.
        assert_eq!(vecadd_progress(true, &[], false).left, [2, 3, 4, 5, 6]);
        // The student went on to step 2.
        assert_eq!(vecadd_progress(true, &[2], true).left, [3, 4, 5, 6]);
    }

    #[test]
    fn progress_reads_each_step_in_its_own_file() {
        let vecadd = find("vecadd-anyN").unwrap();
        // Step 1 is the kernel's, step 2 the host's: each mark in the other
        // file counts for nothing.
        let progress = vecadd.progress(|file| match file {
            StepFile::Kernel => "kernels::unfinished(2)?;".to_owned(),
            StepFile::Host => {
                "// TODO(step 1): add\n".to_owned()
                    + "unfinished(3)?; unfinished(4)?; unfinished(5)?; unfinished(6)?;"
            }
        });
        assert_eq!(progress.left, [3, 4, 5, 6]);
        assert_eq!(progress.placeholders, [3, 4, 5, 6]);
        assert_eq!(progress.todo_comments, Vec::<u32>::new());
    }

    #[test]
    fn every_exercise_ends_with_a_host_step() {
        // Kernel steps count as written once a later step is: the last step
        // must have a placeholder, so that a stub's steps are all left and a
        // program that gets past every placeholder has none left.
        for exercise in EXERCISES {
            let last = exercise.steps.last().unwrap();
            assert_eq!(last.file, StepFile::Host, "{}", exercise.name);
        }
    }

    #[test]
    fn steps_count_from_one() {
        let vecadd = find("vecadd-anyN").unwrap();
        assert_eq!(vecadd.step(1).unwrap().file, StepFile::Kernel);
        assert!(vecadd.step(0).is_none());
        assert!(vecadd.step(vecadd.steps.len() as u32 + 1).is_none());
    }

    #[test]
    fn every_exercise_has_steps_hints_and_ptx_needs() {
        for exercise in EXERCISES {
            assert!(!exercise.steps.is_empty(), "{}", exercise.name);
            assert!(!exercise.ptx.is_empty(), "{}", exercise.name);
            assert!(exercise.title.chars().count() <= 27, "{}", exercise.title);
            for step in exercise.steps {
                assert!(!step.hint.is_empty(), "{}: {}", exercise.name, step.task);
                assert_ne!(step.hint, step.task, "{}", exercise.name);
            }
        }
    }
}
