//! The exit codes of everything the course runs, named once and documented
//! in the book's error reference (docs/src/reference/errors.md): every
//! exercise binary's ([`Exit`], which the grader reads alongside the JSON)
//! and the course's own commands', `grader` and `cargo course`
//! ([`ToolExit`]).

/// How an exercise run ended, as its process exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// The GPU's answer passed the check.
    Passed = 0,
    /// The GPU's answer failed the check, or a step is not written yet.
    Failed = 1,
    /// An argument was out of range or not a number; nothing ran.
    BadArguments = 2,
    /// CUDA reported an error: no GPU or driver, PTX rejected, launch failure.
    CudaError = 3,
}

impl Exit {
    /// The numeric code, for comparing with a child's exit status.
    pub fn code(self) -> i32 {
        self as i32
    }

    /// Whether `code` is a run's that reached the course's check, passed or
    /// failed: any other ended before the check had its say.
    pub fn reached_the_check(code: i32) -> bool {
        code == Exit::Passed.code() || code == Exit::Failed.code()
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        std::process::ExitCode::from(exit as u8)
    }
}

/// How the course's own commands end: `grader` and `cargo course`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ToolExit {
    /// Done: the grading is written, the exercise is done, the expectations
    /// held.
    Done = 0,
    /// It ran and found work short: `cargo course check` not done,
    /// `grader check` short of full marks, `grader mutants verify` with an
    /// expectation broken; `cargo course reset` not confirmed.
    Short = 1,
    /// Bad arguments or input, or an error that stopped the command (clap's
    /// own code for bad arguments); the one line on stderr says what is
    /// wrong and what would do. Nothing a submission does ends a command
    /// this way: a student's failure is a verdict.
    Stopped = 2,
}

impl From<ToolExit> for std::process::ExitCode {
    fn from(exit: ToolExit) -> Self {
        std::process::ExitCode::from(exit as u8)
    }
}
