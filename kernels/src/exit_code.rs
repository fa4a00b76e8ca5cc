//! The exit codes every exercise binary uses, documented once (the book's
//! design page, docs/src/design.md, "Exit codes"). The grader reads them
//! alongside the JSON.

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
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        std::process::ExitCode::from(exit as u8)
    }
}
