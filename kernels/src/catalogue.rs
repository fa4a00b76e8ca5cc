//! The course's exercises as data: order, title, summary, every step with its
//! hint, the PTX each exercise must show (the `ptx` crate checks it), its
//! book chapter, and its grading facts ([`ExerciseId`], [`RunSpec`],
//! [`points`]). The grader,
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
pub use grading::{Emulated, RunSpec, RunTag, points};
pub use id::{ALL_IDS, ExerciseId, Family};

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

/// Something a student's PTX must contain for the exercise to count as
/// solved the intended way: any one of `any_of`, inside `kernel` if given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtxNeed {
    pub kernel: Option<&'static str>,
    pub any_of: &'static [&'static str],
    /// What the instruction is, for a student ("a barrier, __syncthreads()").
    pub feature: &'static str,
    /// What its absence means, for the feedback.
    pub why: &'static str,
}

impl Exercise {
    pub fn solution_package(&self) -> String {
        format!("{}-solution", self.name)
    }

    /// The exercise's chapter of the course book, from the workspace root.
    pub fn chapter(&self) -> String {
        format!("docs/src/{}.md", self.name)
    }

    /// The steps not written yet, in order, given the text of each step's
    /// file: those whose `TODO(step N)` or placeholder `unfinished(N)` is
    /// still there.
    pub fn steps_left(&self, text_of: impl Fn(StepFile) -> String) -> Vec<u32> {
        let kernel = text_of(StepFile::Kernel);
        let host = text_of(StepFile::Host);
        (1..=self.steps.len() as u32)
            .filter(|&number| {
                let text = match self.steps[number as usize - 1].file {
                    StepFile::Kernel => &kernel,
                    StepFile::Host => &host,
                };
                step_is_left(text, number)
            })
            .collect()
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

/// Whether `text` still holds step `number`'s marker or placeholder.
pub fn step_is_left(text: &str, number: u32) -> bool {
    let marker = format!("TODO(step {number})");
    let placeholders = [
        format!("unfinished({number})"),
        format!("unfinished::<()>({number})"),
    ];
    text.contains(&marker) || placeholders.iter().any(|p| text.contains(p.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_is_left_while_its_marker_or_placeholder_is() {
        assert!(step_is_left("// TODO(step 3): do it", 3));
        assert!(step_is_left("let x = kernels::unfinished(3)?;", 3));
        assert!(step_is_left("kernels::unfinished::<()>(3)?;", 3));
        assert!(!step_is_left("// TODO(step 13): later", 3));
        assert!(!step_is_left("d_a.copy_from(&a)?;", 3));
    }

    #[test]
    fn steps_left_reads_each_step_in_its_own_file() {
        let vecadd = find("vecadd-anyN").unwrap();
        let left = vecadd.steps_left(|file| match file {
            StepFile::Kernel => "// TODO(step 1): add".to_owned(),
            StepFile::Host => "unfinished(4)  // TODO(step 1) only counts in the kernel".to_owned(),
        });
        assert_eq!(left, [1, 4]);
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
