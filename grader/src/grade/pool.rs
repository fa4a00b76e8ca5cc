//! `grader run --gpus 0,1,...`: one worker thread per GPU, each taking the
//! next student of the bundle and grading all of their runs on its GPU
//! alone (its sandbox binds only that GPU's device node), so one run at a
//! time per GPU keeps timing checks valid. One writer, this thread,
//! records each student as a worker finishes them and saves results.json
//! atomically, as `grading::run` does, so `--resume` works after a kill.

use std::path::Path;
use std::sync::Mutex;
use std::sync::mpsc;

use crate::confine::gpus::Pin;
use crate::error::{Error, Result};
use crate::grade::grading::{self, Pending, Settings};
use crate::record::results::Results;

/// Grades the bundle at `bundle_dir` into `out`/results.json over `gpus`;
/// `progress` is told each student as they are done.
pub fn run(
    bundle_dir: &Path,
    out: &Path,
    settings: &Settings,
    gpus: &[Pin],
    mut progress: impl FnMut(&str),
) -> Result<Results> {
    let workers = pinned(settings, gpus)?;
    let Pending {
        bundle,
        mut results,
        path,
        students,
        driver,
    } = grading::prepare(bundle_dir, out, settings)?;
    let queue = Mutex::new(students.into_iter());
    let (done, finished) = mpsc::channel();
    std::thread::scope(|scope| {
        for worker in &workers {
            let (queue, done, bundle, driver) = (&queue, done.clone(), &bundle, driver.as_deref());
            scope.spawn(move || {
                loop {
                    // The lock is held only to take a name, never while grading.
                    let next = queue.lock().map(|mut q| q.next()).ok().flatten();
                    let Some(student) = next else { break };
                    let graded =
                        grading::grade_student(bundle_dir, bundle, &student, worker, driver);
                    if done.send((student, graded)).is_err() {
                        break;
                    }
                }
            });
        }
        // Only the workers hold senders now: the loop ends when they do.
        drop(done);
        for (student, graded) in finished {
            results.students.insert(student.clone(), graded);
            results.save(&path)?;
            progress(&student);
        }
        Ok::<(), Error>(())
    })?;
    Ok(results)
}

/// One worker's settings per GPU: the same, with runs pinned to it.
fn pinned(settings: &Settings, gpus: &[Pin]) -> Result<Vec<Settings>> {
    gpus.iter()
        .map(|gpu| {
            let isolation = settings.isolation.on_gpu(gpu).ok_or_else(|| {
                Error::Usage(
                    "--gpus needs the sandbox, which lets each run see only its GPU; without \
                     it, start one `grader run --shard K/N` per GPU with CUDA_VISIBLE_DEVICES \
                     set, then `grader merge`"
                        .into(),
                )
            })?;
            Ok(Settings {
                isolation,
                ..settings.clone()
            })
        })
        .collect()
}
