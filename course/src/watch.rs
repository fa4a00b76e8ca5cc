//! `watch`: check an exercise again every time one of its files is saved.

use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

use kernels::exit_code::ToolExit;
use notify::{EventKind, RecursiveMode, Watcher};

use crate::check;
use crate::workspace::{self, Problem, Workspace};

/// Editors save in bursts (a temporary file, a rename, a chmod): events this
/// close together are one save.
const SETTLE: Duration = Duration::from_millis(300);

pub fn watch(workspace: &Workspace, name: Option<&str>) -> Result<ExitCode, Problem> {
    let exercise = match name {
        Some(name) => workspace::exercise(name)?,
        None => match workspace.next_exercise() {
            Some(exercise) => exercise,
            None => {
                println!("Every exercise is done on this machine: nothing to watch.");
                return Ok(ToolExit::Done.into());
            }
        },
    };
    let src = workspace.exercise_dir(exercise).join("src");
    let (sender, events) = mpsc::channel();
    let mut watcher = notify::recommended_watcher(sender)
        .map_err(|err| Problem::Failed(format!("cannot watch files here: {err}")))?;
    watcher
        .watch(&src, RecursiveMode::Recursive)
        .map_err(|err| Problem::Failed(format!("cannot watch {}: {err}", src.display())))?;

    check::check(workspace, exercise, None, false, &[])?;
    loop {
        println!();
        println!(
            "Watching exercises/{}/src: save a file to check again (Ctrl-C stops).",
            exercise.name
        );
        let changed = loop {
            let event = events
                .recv()
                .map_err(|_| Problem::Failed("the file watcher stopped".to_owned()))?;
            if let Ok(event) = event
                && is_edit(&event.kind)
                && let Some(path) = event.paths.first()
            {
                break path.clone();
            }
        };
        while events.recv_timeout(SETTLE).is_ok() {}
        let shown = changed.strip_prefix(&workspace.root).unwrap_or(&changed);
        println!();
        println!("{} changed: checking again.", shown.display());
        check::check(workspace, exercise, None, false, &[])?;
    }
}

fn is_edit(kind: &EventKind) -> bool {
    matches!(
        kind,
        EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_)
    )
}
