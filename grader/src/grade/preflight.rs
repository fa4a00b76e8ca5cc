//! Before any student is graded on a GPU: the broker serves the course's
//! own binary on this node wherever the binary runs without it. Every run
//! of a student's binary goes through the broker (`run::brokered`), so a
//! broker that cannot reach a GPU the course's binary reaches (a driver it
//! cannot load, a sandbox it cannot start in) would fail every student's
//! host runs alike. The grading stops instead, with the broker's words,
//! and no grade is written from it. A node where the course's binary
//! fails without the broker too is graded as before: its runs' verdicts
//! say what the node did.

use std::path::Path;
use std::time::Duration;

use kernels::catalogue::ExerciseId;

use crate::build::bundle::Bundle;
use crate::confine::runner::{Ended, Limits};
use crate::confine::sandbox::Isolation;
use crate::error::{Error, Result};
use crate::judge::evidence;
use crate::plan::runs::Role;
use crate::run::brokered::Broker;
use crate::run::job::{self, Job};

/// How long the course's own run may take through the broker: a small
/// run, and the driver's context made once.
const TIMEOUT: Duration = Duration::from_secs(120);

/// The course's binary of the bundle's first exercise, at its plan's first
/// run, through the broker on this node's GPU: Ok where it passes and the
/// broker's record shows its kernel launched, or where it fails without
/// the broker too; otherwise why not. A bundle
/// without a broker, or without the course's binaries, has nothing to try
/// (its runs say what is missing).
pub fn broker_serves(bundle: &Bundle, bundle_dir: &Path, isolation: &Isolation) -> Result<()> {
    let Some(files) = &bundle.broker else {
        return Ok(());
    };
    let Some((name, reference)) = bundle.reference.iter().next() else {
        return Ok(());
    };
    let Some(id) = ExerciseId::from_name(name) else {
        return Ok(());
    };
    let refused = |what: &str, changed| {
        Error::Tool(format!(
            "the bundle's {what} is not the one built: {changed}"
        ))
    };
    let broker = Broker {
        binary: files
            .broker
            .check(bundle_dir)
            .map_err(|c| refused("broker", c))?,
        client: files
            .client
            .check(bundle_dir)
            .map_err(|c| refused("broker's client", c))?,
        canary: None,
    };
    let binary = (reference.binary.check(bundle_dir))
        .map_err(|c| refused(&format!("course binary of {id}"), c))?;
    let plan = crate::plan::emulated::plan(id, bundle.seed, false).runs;
    let Some(run) = plan.first() else {
        return Ok(());
    };
    let job = |broker| Job {
        run,
        role: Role::StudentHost,
        binary: &binary,
        ptx: None,
        broker,
    };
    let limits = Limits {
        timeout: TIMEOUT,
        max_output: 1 << 20,
    };
    let made = job::make(&job(Some(&broker)), isolation, limits, None, None, false);
    let served = made.outcome.ended == Ended::Exited(0) && matches!(made.trace, Some(Ok(_)));
    // Not served: was it the broker, or the node?
    if !served
        && job::make(&job(None), isolation, limits, None, None, false)
            .outcome
            .ended
            != Ended::Exited(0)
    {
        return Ok(());
    }
    let record = match &made.trace {
        Some(Ok(trace)) => evidence::launched(trace, id).map_err(|e| e.to_string()),
        Some(Err(why)) => Err(why.to_string()),
        None => Err("no record".to_owned()),
    };
    match (&made.outcome.ended, record) {
        (Ended::Exited(0), Ok(())) => Ok(()),
        (ended, record) => Err(Error::Tool(format!(
            "the GPU broker could not serve the course's own {id} binary on this node, so no \
             student was graded (every host run would fail alike): it ended {ended:?}, said \
             {:?}, and its record: {}",
            made.outcome.stderr.lines().last().unwrap_or("").trim(),
            record
                .err()
                .unwrap_or_else(|| "showed the launch".to_owned())
        ))),
    }
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
    fn a_broker_that_fails_where_the_course_s_binary_runs_stops_the_grading() {
        let dir = tempfile::tempdir().unwrap();
        let bundle = bundle_where(dir.path(), 0);
        let why = broker_serves(&bundle, dir.path(), &Isolation::Unsandboxed).unwrap_err();
        let said = why.to_string();
        assert!(
            said.contains("could not serve the course's own dot-sm binary"),
            "{said}"
        );
        assert!(said.contains("broker failed"), "{said}");
        // Where the course's binary fails without the broker too, the node
        // is at fault, and its runs' verdicts will say so.
        let dir = tempfile::tempdir().unwrap();
        let bundle = bundle_where(dir.path(), 3);
        assert!(broker_serves(&bundle, dir.path(), &Isolation::Unsandboxed).is_ok());
    }
}
