//! Runs one exercise binary the way the grader must: a wall-clock timeout,
//! a cap on what it may print (it keeps being drained, so it cannot block),
//! only the descriptors it is given, and its own process group (and cell,
//! where it has one), terminated at the end with everything it started.
//! Reports what happened, and what its cell saw; judging it is `verdict`'s
//! job.

use std::io::Read;
use std::os::fd::RawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use crate::confine::cell::{Cell, Slot};
use crate::confine::descriptors;

/// Set to 1 to have every run's peak memory and cap logged (to measure
/// what the caps must allow, on a GPU node say).
pub const LOG_MEMORY_ENV: &str = "GRADER_LOG_MEMORY";

/// How long and how loud a run may be.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub timeout: Duration,
    /// Bytes kept of stdout and of stderr each; the rest is read and dropped.
    pub max_output: usize,
}

/// Time between a polite SIGTERM to the group and a SIGKILL.
const GRACE: Duration = Duration::from_millis(500);
/// How often a running child is checked on.
const POLL: Duration = Duration::from_millis(5);

/// A child to start: its command, what it is given, and what confines it
/// for as long as it runs.
#[derive(Debug)]
pub struct Job {
    pub command: Command,
    /// Descriptors it is given on purpose, at their own numbers; every
    /// other one (but stdin, stdout and stderr) is closed when it execs.
    pub keep: Vec<RawFd>,
    /// Its cell: read when it ends, then emptied and removed.
    pub cell: Option<Cell>,
    /// The run slot (uid) it holds, released when it ends.
    pub slot: Option<Slot>,
}

impl From<Command> for Job {
    fn from(command: Command) -> Job {
        Job {
            command,
            keep: Vec::new(),
            cell: None,
            slot: None,
        }
    }
}

/// How the process ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    Exited(i32),
    Signalled(i32),
    TimedOut,
    DidNotStart(String),
}

/// What a run did.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub ended: Ended,
    pub stdout: String,
    pub stderr: String,
    /// Either stream printed more than `max_output` bytes.
    pub flooded: bool,
    pub duration: Duration,
    /// The most memory its cell held at once, where it had one.
    pub peak_memory: Option<u64>,
    /// Its cell's memory cap, when the cap killed one of its processes.
    pub out_of_memory: Option<u64>,
}

/// Runs `program` with `args` and `env` added to the environment.
pub fn run(program: &Path, args: &[&str], env: &[(&str, &str)], limits: Limits) -> Outcome {
    let mut command = Command::new(program);
    command.args(args).envs(env.iter().copied());
    run_command(command, limits)
}

/// Time a run spends waiting on the grader (for the GPU alone, at the
/// timing gate), which its timeout does not count: a run waiting for its
/// neighbours to end must not run out of time for it.
#[derive(Debug, Default)]
pub struct Waited {
    /// Time waited so far, and since when it is waiting now.
    state: Mutex<(Duration, Option<Instant>)>,
}

impl Waited {
    /// The run starts waiting.
    pub fn begin(&self) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.1.get_or_insert_with(Instant::now);
    }

    /// The run stops waiting.
    pub fn end(&self) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(since) = state.1.take() {
            state.0 += since.elapsed();
        }
    }

    /// Time waited, up to now.
    pub fn so_far(&self) -> Duration {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.0 + state.1.map_or(Duration::ZERO, |since| since.elapsed())
    }
}

/// Runs `job` (a sandbox's, or a plain command) within `limits`.
pub fn run_command(job: impl Into<Job>, limits: Limits) -> Outcome {
    run_command_waiting(job, limits, &Waited::default())
}

/// [`run_command`], with the time the run spends `waited` on the grader
/// added to its timeout.
pub fn run_command_waiting(job: impl Into<Job>, limits: Limits, waited: &Waited) -> Outcome {
    let Job {
        mut command,
        keep,
        cell,
        slot,
    } = job.into();
    // SAFETY: the sweep only makes system calls on descriptor numbers,
    // safe between fork and exec; `keep` is moved in, nothing allocates.
    unsafe { command.pre_exec(move || descriptors::close_others_at_exec(&keep)) };
    let started = Instant::now();
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so that it and anything it starts can be
        // signalled together.
        .process_group(0);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(err) => {
            return Outcome {
                ended: Ended::DidNotStart(err.to_string()),
                stdout: String::new(),
                stderr: String::new(),
                flooded: false,
                duration: started.elapsed(),
                peak_memory: None,
                out_of_memory: None,
            };
        }
    };
    let stdout = drain(child.stdout.take(), limits.max_output);
    let stderr = drain(child.stderr.take(), limits.max_output);
    let ended = wait(&mut child, started + limits.timeout, waited);
    // Whatever it left running goes too, in its group and in its cell;
    // then the pipes close and the readers finish.
    end_group(&child);
    let usage = cell.as_ref().map(|c| (c.usage(), c.quota));
    drop(command);
    drop(cell);
    drop(slot);
    let (stdout, flooded_out) = stdout.join().unwrap_or_default();
    let (stderr, flooded_err) = stderr.join().unwrap_or_default();
    if std::env::var_os(LOG_MEMORY_ENV).is_some_and(|v| v == "1") {
        if let Some((usage, quota)) = usage {
            eprintln!(
                "grader: memory: peak {} MiB of {} MiB{}",
                usage
                    .peak_memory
                    .map_or("?".to_owned(), |p| (p >> 20).to_string()),
                quota.memory >> 20,
                if usage.memory_killed {
                    ", killed at the cap"
                } else {
                    ""
                }
            );
        }
    }
    Outcome {
        ended,
        stdout,
        stderr,
        flooded: flooded_out || flooded_err,
        duration: started.elapsed(),
        peak_memory: usage.and_then(|(u, _)| u.peak_memory),
        out_of_memory: usage
            .filter(|(u, _)| u.memory_killed)
            .map(|(_, q)| q.memory),
    }
}

/// Reads a pipe to its end on a thread, keeping the first `cap` bytes.
fn drain(
    pipe: Option<impl Read + Send + 'static>,
    cap: usize,
) -> thread::JoinHandle<(String, bool)> {
    thread::spawn(move || {
        let Some(mut pipe) = pipe else {
            return (String::new(), false);
        };
        let mut kept = Vec::new();
        let mut flooded = false;
        let mut buffer = [0u8; 64 * 1024];
        loop {
            match pipe.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(read) => {
                    let room = cap.saturating_sub(kept.len());
                    kept.extend_from_slice(&buffer[..read.min(room)]);
                    flooded |= read > room;
                }
            }
        }
        (String::from_utf8_lossy(&kept).into_owned(), flooded)
    })
}

/// Waits for the child until `deadline`, moved on by the time it `waited`
/// on the grader; past it, ends the group.
fn wait(child: &mut Child, deadline: Instant, waited: &Waited) -> Ended {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                return match (status.code(), status.signal()) {
                    (Some(code), _) => Ended::Exited(code),
                    (None, Some(signal)) => Ended::Signalled(signal),
                    (None, None) => Ended::Signalled(0),
                };
            }
            Ok(None) if Instant::now() >= deadline + waited.so_far() => {
                end_group(child);
                let _ = child.wait();
                return Ended::TimedOut;
            }
            Ok(None) => thread::sleep(POLL),
            Err(err) => return Ended::DidNotStart(err.to_string()),
        }
    }
}

/// SIGTERM to the child's process group, a grace period, then SIGKILL.
fn end_group(child: &Child) {
    let group = -(child.id() as libc::pid_t);
    // SAFETY: kill takes a pid and a signal number and touches no memory;
    // a negative pid names the process group the child leads.
    if unsafe { libc::kill(group, libc::SIGTERM) } != 0 {
        return; // The group is already gone.
    }
    let until = Instant::now() + GRACE;
    // SAFETY: as above; signal 0 only asks whether the group still exists.
    while Instant::now() < until && unsafe { libc::kill(group, 0) } == 0 {
        thread::sleep(POLL);
    }
    // SAFETY: as above.
    unsafe { libc::kill(group, libc::SIGKILL) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A fake exercise binary: a shell script.
    fn script(dir: &Path, name: &str, body: &str) -> std::path::PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    const LIMITS: Limits = Limits {
        timeout: Duration::from_secs(2),
        max_output: 1000,
    };

    #[test]
    fn a_normal_run_keeps_its_output_and_exit_code() {
        let dir = tempfile::tempdir().unwrap();
        let bin = script(
            dir.path(),
            "ok",
            "echo \"$1 $GREETING\"; echo oops >&2; exit 1",
        );
        let out = run(&bin, &["--json"], &[("GREETING", "hi")], LIMITS);
        assert_eq!(out.ended, Ended::Exited(1));
        assert_eq!(out.stdout, "--json hi\n");
        assert_eq!(out.stderr, "oops\n");
        assert!(!out.flooded);
    }

    #[test]
    fn a_hang_times_out_and_is_ended() {
        let dir = tempfile::tempdir().unwrap();
        let bin = script(dir.path(), "hang", "sleep 60");
        let out = run(
            &bin,
            &[],
            &[],
            Limits {
                timeout: Duration::from_millis(300),
                ..LIMITS
            },
        );
        assert_eq!(out.ended, Ended::TimedOut);
        assert!(out.duration < Duration::from_secs(5), "{:?}", out.duration);
    }

    #[test]
    fn time_waited_on_the_grader_is_not_counted_against_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let bin = script(dir.path(), "slow", "sleep 1; echo done");
        let limits = Limits {
            timeout: Duration::from_millis(500),
            ..LIMITS
        };
        // Waiting on the grader for most of its run: not out of time.
        let waited = Waited::default();
        waited.begin();
        let out = thread::scope(|scope| {
            let waiting = scope.spawn(|| run_command_waiting(Command::new(&bin), limits, &waited));
            thread::sleep(Duration::from_millis(1500));
            waited.end();
            waiting.join().unwrap()
        });
        assert_eq!(out.ended, Ended::Exited(0), "{out:?}");
        assert!(waited.so_far() >= Duration::from_millis(1500));
        // Without the wait, the same run is out of time.
        let out = run_command_waiting(Command::new(&bin), limits, &Waited::default());
        assert_eq!(out.ended, Ended::TimedOut);
    }

    #[test]
    fn a_flood_is_capped_and_cannot_block() {
        let dir = tempfile::tempdir().unwrap();
        let bin = script(
            dir.path(),
            "flood",
            "head -c 5000000 /dev/zero | tr '\\0' x; exit 0",
        );
        let out = run(&bin, &[], &[], LIMITS);
        assert_eq!(out.ended, Ended::Exited(0));
        assert!(out.flooded);
        assert_eq!(out.stdout.len(), 1000);
    }

    #[test]
    fn a_crash_reports_its_signal() {
        let dir = tempfile::tempdir().unwrap();
        let bin = script(dir.path(), "crash", "kill -SEGV $$");
        let out = run(&bin, &[], &[], LIMITS);
        assert_eq!(out.ended, Ended::Signalled(libc::SIGSEGV));
    }

    #[test]
    fn what_it_leaves_running_is_ended_and_does_not_hold_the_grader() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        // A background child keeps stdout open after the script exits.
        let body = format!("sleep 60 & echo $! > {}; echo started", pid_file.display());
        let bin = script(dir.path(), "orphan", &body);
        let out = run(&bin, &[], &[], LIMITS);
        assert_eq!(out.ended, Ended::Exited(0));
        assert_eq!(out.stdout, "started\n");
        assert!(out.duration < Duration::from_secs(5));
        let pid: i32 = std::fs::read_to_string(pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        thread::sleep(Duration::from_millis(100));
        // Gone, or a zombie waiting for init to reap it: either way not running.
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let running = state
            .rsplit(") ")
            .next()
            .is_some_and(|s| !s.starts_with('Z'));
        assert!(
            !running,
            "the background sleep {pid} outlived the run: {state}"
        );
    }

    #[test]
    fn a_missing_binary_did_not_start() {
        let out = run(Path::new("/no/such/binary"), &[], &[], LIMITS);
        assert!(matches!(out.ended, Ended::DidNotStart(_)));
    }
}
