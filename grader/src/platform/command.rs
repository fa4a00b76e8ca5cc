//! `grader autograder ...`: a package written for its platform, an
//! autograder installed from one (setup.sh's step), an upload graded
//! (run_autograder's and the entrypoint's step).

use std::path::Path;

use kernels::catalogue::ExerciseId;

use crate::error::{Error, Result};
use crate::platform::grading;
use crate::platform::layout::Layout;
use crate::platform::package;
use crate::platform::prepare;
use crate::platform::settings::{Platform, Settings};

/// Writes `settings`' package of `course` to `out`, and says what to do
/// with it.
pub fn package(course: &Path, settings: &Settings, out: &Path) -> Result<()> {
    settings.check().map_err(Error::Usage)?;
    let files = match settings.platform {
        Platform::Gradescope => package::gradescope(course, settings, out)?,
        Platform::Prairielearn => package::prairielearn(course, settings, out)?,
    };
    let exercises: Vec<&str> = settings.exercises.iter().map(|e| e.name()).collect();
    eprintln!(
        "grader: wrote {} ({files} files) grading {}",
        out.display(),
        exercises.join(", ")
    );
    match settings.platform {
        Platform::Gradescope => eprintln!(
            "grader: upload it as the assignment's autograder (Configure Autograder, Ubuntu 22.04 \
             base); set its timeout to {} s or more",
            settings.time_limit
        ),
        Platform::Prairielearn => eprintln!(
            "grader: build and push its image (docker build -t IMAGE {}), and name IMAGE and \
             /opt/cuda-course-autograder/package/entrypoint in each question's info.json, with a \
             timeout of {} s",
            out.display(),
            settings.time_limit
        ),
    }
    Ok(())
}

/// Installs the autograder packaged in `dir` (as root).
pub fn prepare(dir: &Path) -> Result<()> {
    refuse_unless_root("install an autograder")?;
    prepare::prepare(&Layout::from_env(), dir)
}

/// Grades the platform's upload (as root) on `only` of the package's
/// exercises (all when empty) and writes its results.json.
pub fn grade(platform: Platform, only: &[ExerciseId]) -> Result<()> {
    refuse_unless_root("grade an upload")?;
    grading::grade(&Layout::from_env(), platform, only).map(|_| ())
}

fn refuse_unless_root(what: &str) -> Result<()> {
    // SAFETY: geteuid only reads the process's credentials.
    if unsafe { libc::geteuid() } == 0 {
        return Ok(());
    }
    Err(Error::Usage(format!(
        "only root can {what}: the student's code runs as another user, which only root can \
         become"
    )))
}
