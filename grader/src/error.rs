//! The grader's own failures: what stops a command, by what the person
//! running it must do, each saying so in one line (`grader: error: ...`,
//! exit [`ToolExit::Stopped`]). A submission's failure is never one of these:
//! it is a verdict, kept in results.json, and the class goes on.

use std::io;
use std::path::{Path, PathBuf};

use kernels::exit_code::ToolExit;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or folder could not be read or written.
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    /// A file the grader reads is not what it should be.
    #[error("{}: {why}", path.display())]
    Malformed { path: PathBuf, why: String },
    /// results.json or bundle.json of a schema this grader does not read.
    #[error(
        "{} has schema_version {}; this grader reads {want} ({what})",
        path.display(),
        found.map_or("none".to_owned(), |v| v.to_string())
    )]
    Schema {
        path: PathBuf,
        found: Option<u64>,
        want: u32,
        /// What to do with the file instead.
        what: &'static str,
    },
    /// The arguments or inputs do not fit together or with what is on
    /// disk; the message says what is wrong and what would do.
    #[error("{0}")]
    Usage(String),
    /// Student code cannot be confined here (no working bubblewrap).
    #[error("{0}")]
    NoSandbox(String),
    /// No device the grading asked for (`--no-emulate` without a GPU,
    /// `--gpus` with a GPU that is not there).
    #[error("{0}")]
    NoDevice(String),
    /// The course's own code did not build, or a tool (cargo, sbatch)
    /// could not run.
    #[error("{0}")]
    Tool(String),
    /// A bundle that cannot be graded as it is: a file that is not the one
    /// built, or a part missing; build it again.
    #[error("{0}")]
    Bundle(String),
}

impl Error {
    /// An I/O failure on `path`.
    pub fn io(path: &Path) -> impl FnOnce(io::Error) -> Error + '_ {
        move |source| Error::Io {
            path: path.to_owned(),
            source,
        }
    }

    /// How the grader exits after it.
    pub fn exit(&self) -> ToolExit {
        ToolExit::Stopped
    }
}

/// The grader's results, or why it stopped.
pub type Result<T> = std::result::Result<T, Error>;
