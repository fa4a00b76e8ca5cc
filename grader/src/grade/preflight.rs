//! Before any student is graded on a GPU: the broker serves each
//! exercise's course binary on this node wherever it runs without the
//! broker. Every run of a student's binary goes through the broker
//! (`run::brokered`), so a broker that cannot do on this node what the
//! course's binary does without it (load the driver, share page-locked
//! memory, start in its sandbox) would fail every student's host runs of
//! that exercise alike, correct or not. Those exercises' host runs are
//! then made without the broker, as [`Unbrokered`] says, and the grader
//! says so: their points rest on the student's report, rechecked, not on
//! the broker's record or the canary. A node where the course's binary
//! fails without the broker too is graded as usual: its runs' verdicts say
//! what the node did.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use kernels::catalogue::ExerciseId;

use crate::build::bundle::Bundle;
use crate::confine::runner::{Ended, Limits};
use crate::confine::sandbox::Isolation;
use crate::judge::evidence;
use crate::plan::runs::Role;
use crate::run::brokered::Broker;
use crate::run::job::{self, Job};

/// How long the course's own run may take through the broker: a small
/// run, and the driver's context made once.
const TIMEOUT: Duration = Duration::from_secs(120);

/// The exercises whose host runs are made without the broker on this node,
/// and why.
pub type Unbrokered = BTreeMap<ExerciseId, String>;

/// Each exercise's course binary in `bundle`, at its plan's first run,
/// through the broker and, where that fails, without it: the exercises it
/// passes without the broker and not through it, each with the broker's
/// words. A bundle without a broker has nothing to try (its runs say
/// what is missing), nor does a file changed since the build (refused
/// where its runs need it).
pub fn unbrokered(bundle: &Bundle, bundle_dir: &Path, isolation: &Isolation) -> Unbrokered {
    let mut unbrokered = Unbrokered::new();
    let Some(files) = &bundle.broker else {
        return unbrokered;
    };
    let (Ok(binary), Ok(client)) = (
        files.broker.check(bundle_dir),
        files.client.check(bundle_dir),
    ) else {
        return unbrokered;
    };
    let broker = Broker {
        binary,
        client,
        canary: None,
    };
    for (name, reference) in &bundle.reference {
        let (Some(id), Ok(binary)) = (
            ExerciseId::from_name(name),
            reference.binary.check(bundle_dir),
        ) else {
            continue;
        };
        if let Err(why) = served(id, bundle.seed, &binary, &broker, isolation) {
            unbrokered.insert(id, why);
        }
    }
    unbrokered
}

/// Whether the broker serves `binary` (the course's, of `id`) where it
/// runs without it: Err with the broker's words where it does not.
fn served(
    id: ExerciseId,
    seed: u64,
    binary: &Path,
    broker: &Broker,
    isolation: &Isolation,
) -> Result<(), String> {
    let plan = crate::plan::emulated::plan(id, seed, false).runs;
    let Some(run) = plan.first() else {
        return Ok(());
    };
    let job = |broker| Job {
        run,
        role: Role::StudentHost,
        binary,
        ptx: None,
        broker,
        canary: false,
    };
    let limits = Limits {
        timeout: TIMEOUT,
        max_output: 1 << 20,
    };
    let made = job::make(&job(Some(broker)), isolation, limits, None, None, false);
    let record = match &made.trace {
        Some(Ok(trace)) => evidence::launched(trace, id).map_err(|e| e.to_string()),
        Some(Err(why)) => Err(why.to_string()),
        None => Err("no record".to_owned()),
    };
    if made.outcome.ended == Ended::Exited(0) && record.is_ok() {
        return Ok(());
    }
    // Not served: was it the broker, or the node?
    let alone = job::make(&job(None), isolation, limits, None, None, false);
    if alone.outcome.ended != Ended::Exited(0) {
        return Ok(());
    }
    Err(format!(
        "it ended {:?}, said {:?}, and its record: {}",
        made.outcome.ended,
        made.outcome.stderr.lines().last().unwrap_or("").trim(),
        record
            .err()
            .unwrap_or_else(|| "showed the launch".to_owned())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::reference::{BrokerFiles, Kept, Reference};

    /// A bundle whose course binary exits with `course_exit` run directly,
    /// and whose broker fails to start.
    fn bundle_where(dir: &Path, course_exit: i32) -> Bundle {
        let kept = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
            Kept {
                path: name.into(),
                digest: crate::build::digest::file(&path).unwrap(),
            }
        };
        let reference = Reference {
            binary: kept("dot-sm", &format!("#!/bin/sh\nexit {course_exit}\n")),
            ptx: kept("dot-sm.ptx", ""),
        };
        Bundle {
            schema_version: crate::build::bundle::BUNDLE_SCHEMA,
            seed: 1,
            reference: [("dot-sm".to_owned(), reference)].into(),
            broker: Some(BrokerFiles {
                broker: kept(
                    "cuda-course-broker",
                    "#!/bin/sh\necho 'no driver here' >&2\nexit 2\n",
                ),
                client: kept("libcuda.so.1", ""),
            }),
            items: vec![],
            emulator: None,
        }
    }

    #[test]
    fn an_exercise_the_broker_fails_where_the_course_s_binary_runs_is_graded_without_it() {
        let dir = tempfile::tempdir().unwrap();
        let bundle = bundle_where(dir.path(), 0);
        let found = unbrokered(&bundle, dir.path(), &Isolation::Unsandboxed);
        let said = &found[&ExerciseId::DotSm];
        assert!(said.contains("broker failed"), "{said}");
        // Where the course's binary fails without the broker too, the node
        // is at fault, and its runs' verdicts will say so.
        let dir = tempfile::tempdir().unwrap();
        let bundle = bundle_where(dir.path(), 3);
        assert!(unbrokered(&bundle, dir.path(), &Isolation::Unsandboxed).is_empty());
    }
}
