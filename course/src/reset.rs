//! `reset`: put an exercise's files back to the stub, after confirming.
//! The stubs come from git: the course as handed out is the tag
//! `course-start` (scripts/student-copy.sh makes it), else `HEAD`.

use std::io::BufRead;
use std::process::{Command, ExitCode};

use kernels::exit_code::ToolExit;

use crate::text::wrap;
use crate::workspace::{self, Problem, Workspace};

/// The git revision that holds the stubs as handed out.
const HANDED_OUT: &str = "course-start";

pub fn reset(workspace: &Workspace, name: &str, yes: bool) -> Result<ExitCode, Problem> {
    let exercise = workspace::exercise(name)?;
    let src = format!("exercises/{}/src", exercise.name);
    let revision = if git(workspace, &["rev-parse", "--verify", "--quiet", HANDED_OUT]).is_ok() {
        HANDED_OUT
    } else {
        "HEAD"
    };
    git(workspace, &["rev-parse", "--verify", "--quiet", revision]).map_err(|_| {
        Problem::Failed(format!(
            "reset needs the course's git history, and {} has none: \
             restore {src} from the copy you were given",
            workspace.root.display()
        ))
    })?;
    if !yes {
        let text =
            format!("This puts {src} back to the stub as handed out; your work there is lost.");
        print!("{}", wrap("", &text));
        println!("Type yes to go on:");
        let mut answer = String::new();
        let _ = std::io::stdin().lock().read_line(&mut answer);
        if !matches!(answer.trim(), "yes" | "y") {
            println!("Nothing changed.");
            return Ok(ToolExit::Short.into());
        }
    }
    git(workspace, &["checkout", revision, "--", &src])?;
    println!("{src} is the stub again. `cargo course next` says where to start.");
    Ok(ToolExit::Done.into())
}

fn git(workspace: &Workspace, args: &[&str]) -> Result<(), Problem> {
    let output = Command::new("git")
        .current_dir(&workspace.root)
        .args(args)
        .output()
        .map_err(|err| Problem::Failed(format!("could not run git: {err}")))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(Problem::Failed(format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        )))
    }
}
