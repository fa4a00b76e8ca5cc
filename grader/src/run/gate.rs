//! The timing gate, the grader's side (`kernels::timing_gate` is the
//! process's): a run of the course's binary whose time a verdict reads
//! shares the GPU, and has it alone only from the moment it asks (just
//! before its timed launches) until it says done, exits or breaks the
//! protocol. The run is given one end of a Unix socket pair; a thread of
//! the grader serves the other: on a request it lets go of the run's share,
//! waits for the GPU alone (for every run in flight to end; new ones wait)
//! and answers go; on done it shares the GPU again. Whatever ends the
//! serving (the process's end, its closing the socket, a byte out of turn)
//! takes the run back to a share, which it keeps until its process has
//! ended: a run holds the GPU at least as a share for its whole life, as a
//! shared run does (but while it waits, doing nothing, for go or for its
//! share back after done), and alone never past its own end. The time
//! spent waiting at the gate is not counted against the run's timeout.
//!
//! After done the process waits for [`SHARED`] before it uses the GPU
//! again (it has synchronized first), so the grader lets go of the GPU at
//! done and takes the run's share back in turn, after every run then
//! waiting to be alone: the next timed run does not wait for the rest of
//! this one's process. From its start to its end a gated run holds off new
//! long shares (`Turns::timing`): it will ask to be alone.
//!
//! Threat model: the gate is given only to the course's own binary
//! (`Role::KernelInCourseHost`), host code the course wrote; the student's
//! kernel runs on the GPU and reaches no descriptor, and the student's own
//! binary never gets one. The holder of the other end can ask for the GPU
//! alone and keep it until it says done or exits: what a run alone for
//! its whole process could already do, bounded by the same timeout (the
//! waits at the gate aside, which other runs' timeouts bound). It holds no
//! share while it waits for go or for its share back, which is safe only
//! because the course's binary synchronizes before it asks and before it
//! says done, and does nothing between done and the answer: a student's
//! binary could leave work on the GPU meanwhile, beside another run's
//! time alone, which is why it never gets a gate (`bench/runs/2026-11-29-h200-jobs-and-gate`,
//! "Tried and left out: the student's streams binary through the gate").
//! Asking twice, or done without asking, or any other byte ends the
//! serving: the run keeps its share until it exits, its socket is closed
//! (a process waiting for go stops with an error that names the gate), and
//! it cannot hold the GPU alone again.

use std::io::{ErrorKind, Read, Write};
use std::net::Shutdown;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kernels::timing_gate::{DONE, FD_VARIABLE, GO, REQUEST, SHARED};

use crate::confine::runner::Waited;
use crate::run::turns::{Alone, Shared, Turns};

/// What a gated run is given: its end of the gate, and the clock of its
/// waits at the gate, which its timeout does not count.
pub struct GateEnd {
    pub descriptor: OwnedFd,
    pub waited: Arc<Waited>,
}

impl GateEnd {
    /// What a run's command is given of `gate`: its descriptor, named by
    /// the variable `kernels::timing_gate` reads, and the clock of the
    /// run's wait for go (a clock that never runs without a gate).
    pub fn attach(gate: Option<GateEnd>) -> (Vec<(&'static str, OwnedFd)>, Arc<Waited>) {
        match gate {
            Some(GateEnd { descriptor, waited }) => (vec![(FD_VARIABLE, descriptor)], waited),
            None => (vec![], Arc::default()),
        }
    }
}

/// How a gated run used the gate.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Served {
    /// A byte it wrote out of turn, which ended the serving.
    pub out_of_turn: Option<u8>,
    /// Each time it had the GPU alone: when it asked, had it, let go.
    pub windows: Vec<Window>,
}

/// One time a gated run had the GPU alone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    pub asked: Instant,
    pub from: Instant,
    pub to: Instant,
}

/// Makes a run through `make`, given a gate on `turns`; the run holds a
/// share of the GPU for as long as `make` runs, and the GPU alone only
/// while the process has asked for it: `taken`, a share already taken, or
/// one taken now. Where no socket can be made, `make` gets no gate and the
/// run has the GPU alone throughout, as a timed run without a gate does.
pub fn hold<'t, T>(
    turns: &'t Turns,
    taken: Option<Shared<'t>>,
    make: impl FnOnce(Option<GateEnd>) -> T,
) -> (T, Served) {
    // From its start: it will ask, and a long share started now would
    // keep it waiting.
    let _timing = turns.timing();
    let pair = UnixStream::pair().and_then(|(ours, theirs)| {
        let shut = ours.try_clone()?;
        Ok((ours, shut, theirs))
    });
    let Ok((ours, shut, theirs)) = pair else {
        drop(taken);
        let _alone = turns.alone();
        return (make(None), Served::default());
    };
    let waited = Arc::new(Waited::default());
    let share = taken.unwrap_or_else(|| turns.shared());
    std::thread::scope(|scope| {
        let server = scope.spawn(|| serve(ours, share, &waited));
        // Once the process has ended (or `make` panicked), a server still
        // reading sees the end.
        let shut = ShutOnDrop(shut);
        let made = make(Some(GateEnd {
            descriptor: theirs.into(),
            waited: Arc::clone(&waited),
        }));
        drop(shut);
        let served = match server.join() {
            // The share is let go of here, after the process.
            Ok((_share, served)) => served,
            // Its holds were let go of as it unwound.
            Err(_) => Served::default(),
        };
        (made, served)
    })
}

/// The grader's end of a gate, shut down when dropped.
struct ShutOnDrop(UnixStream);

impl Drop for ShutOnDrop {
    fn drop(&mut self) {
        let _ = self.0.shutdown(Shutdown::Both);
    }
}

impl Served {
    /// Times it had the GPU alone, and for how long in all.
    pub fn alone(&self) -> (u32, Duration) {
        let times = u32::try_from(self.windows.len()).unwrap_or(u32::MAX);
        (times, self.windows.iter().map(|w| w.to - w.from).sum())
    }

    /// How long it waited for go, in all.
    pub fn waited(&self) -> Duration {
        self.windows.iter().map(|w| w.from - w.asked).sum()
    }

    /// The run lets go of the GPU alone, asked for at `asked`, had since
    /// `since`.
    fn let_go(&mut self, asked: Instant, since: Instant) {
        self.windows.push(Window {
            asked,
            from: since,
            to: Instant::now(),
        });
    }
}

/// What the run holds while the gate is served.
enum Hold<'t> {
    Shared(Shared<'t>),
    /// Alone, asked for at the first instant and had since the second.
    Alone(Alone<'t>, Instant, Instant),
}

/// Serves the gate on `end` for a run holding `share`, until the run's
/// end, its closing the socket or a byte out of turn; returns the share it
/// then holds, and how it used the gate.
fn serve<'t>(mut end: UnixStream, share: Shared<'t>, waited: &Waited) -> (Shared<'t>, Served) {
    let mut served = Served::default();
    let mut hold = Hold::Shared(share);
    let last = loop {
        let mut byte = [0u8];
        match end.read(&mut byte) {
            Ok(1) => {}
            Err(err) if err.kind() == ErrorKind::Interrupted => continue,
            // Its end, or the socket's shut down once the process ended.
            _ => break hold,
        }
        hold = match (hold, byte[0]) {
            (Hold::Shared(share), REQUEST) => {
                let asked = Instant::now();
                waited.begin();
                let alone = share.into_alone();
                waited.end();
                let hold = Hold::Alone(alone, asked, Instant::now());
                if end.write_all(&[GO]).is_err() {
                    break hold;
                }
                hold
            }
            (Hold::Alone(alone, asked, since), DONE) => {
                served.let_go(asked, since);
                // It waits for the answer: the runs waiting to be alone go
                // first, and its wait is not counted against it.
                waited.begin();
                let share = alone.into_shared_in_turn();
                waited.end();
                if end.write_all(&[SHARED]).is_err() {
                    break Hold::Shared(share);
                }
                Hold::Shared(share)
            }
            (hold, byte) => {
                served.out_of_turn = Some(byte);
                break hold;
            }
        };
    };
    let share = match last {
        Hold::Shared(share) => share,
        Hold::Alone(alone, asked, since) => {
            served.let_go(asked, since);
            alone.into_shared()
        }
    };
    // Closed for the process too (the grader's side has a second handle
    // to it), once it no longer holds the GPU alone: a process waiting for
    // go stops waiting.
    let _ = end.shutdown(Shutdown::Both);
    (share, served)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake process's end of the gate.
    fn process(gate: Option<GateEnd>) -> UnixStream {
        UnixStream::from(gate.expect("a gate").descriptor)
    }

    fn ask(end: &mut UnixStream) -> Option<u8> {
        end.write_all(&[REQUEST]).unwrap();
        let mut answer = [0u8];
        match end.read(&mut answer) {
            Ok(1) => Some(answer[0]),
            _ => None,
        }
    }

    /// Says done and reads the answer.
    fn done(end: &mut UnixStream) -> Option<u8> {
        end.write_all(&[DONE]).unwrap();
        let mut answer = [0u8];
        match end.read(&mut answer) {
            Ok(1) => Some(answer[0]),
            _ => None,
        }
    }

    #[test]
    fn a_run_is_alone_from_its_request_to_its_done_and_shared_around() {
        let turns = Turns::default();
        let ((), served) = hold(&turns, None, |gate| {
            let mut end = process(gate);
            assert_eq!(turns.holds(), (1, false, 0));
            assert_eq!(ask(&mut end), Some(GO));
            assert_eq!(turns.holds(), (0, true, 0));
            // Shared again once answered.
            assert_eq!(done(&mut end), Some(SHARED));
            assert_eq!(turns.holds(), (1, false, 0));
            // Twice in one run.
            assert_eq!(ask(&mut end), Some(GO));
            assert_eq!(done(&mut end), Some(SHARED));
        });
        assert_eq!(served.alone().0, 2);
        assert_eq!(served.out_of_turn, None);
        assert_eq!(turns.holds(), (0, false, 0));
    }

    #[test]
    fn the_course_s_run_shares_again_after_the_runs_waiting_to_be_alone() {
        let turns = Turns::default();
        let order = std::sync::Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            hold(&turns, None, |gate| {
                let mut end = process(gate);
                assert_eq!(ask(&mut end), Some(GO));
                scope.spawn(|| {
                    let _alone = turns.alone();
                    order.lock().unwrap().push("the other alone");
                    std::thread::sleep(Duration::from_millis(20));
                });
                while turns.holds().2 == 0 {
                    std::thread::yield_now();
                }
                assert_eq!(done(&mut end), Some(SHARED));
                order.lock().unwrap().push("shared again");
            });
        });
        assert_eq!(
            order.into_inner().unwrap(),
            ["the other alone", "shared again"]
        );
        assert_eq!(turns.holds(), (0, false, 0));
    }

    #[test]
    fn a_gated_run_holds_off_long_shares_from_its_start() {
        let turns = Turns::default();
        let started = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            hold(&turns, None, |gate| {
                let _end = process(gate);
                scope.spawn(|| {
                    let _long = turns.shared_long();
                    started.store(true, std::sync::atomic::Ordering::SeqCst);
                });
                std::thread::sleep(Duration::from_millis(50));
                // It has not asked yet, but will.
                assert!(!started.load(std::sync::atomic::Ordering::SeqCst));
            });
        });
        assert!(started.into_inner());
    }

    #[test]
    fn a_run_that_never_asks_shares_the_gpu_to_its_end() {
        let turns = Turns::default();
        let ((), served) = hold(&turns, None, |gate| {
            let _end = process(gate);
            std::thread::sleep(Duration::from_millis(20));
            assert_eq!(turns.holds(), (1, false, 0));
        });
        assert_eq!(served, Served::default());
        assert_eq!(turns.holds(), (0, false, 0));
    }

    /// Waits until the server has closed the gate: the process reads its end.
    fn closed(end: &mut UnixStream) {
        let mut rest = Vec::new();
        end.read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty(), "{rest:?}");
    }

    #[test]
    fn a_byte_out_of_turn_ends_the_gate_but_not_the_share() {
        for (wrong, asked) in [(REQUEST, true), (b'x', true), (DONE, false), (b'x', false)] {
            let turns = Turns::default();
            let ((), served) = hold(&turns, None, |gate| {
                let mut end = process(gate);
                if asked {
                    assert_eq!(ask(&mut end), Some(GO));
                }
                end.write_all(&[wrong]).unwrap();
                closed(&mut end);
                // No longer alone, still sharing: the process runs on.
                assert_eq!(turns.holds(), (1, false, 0));
                // And never alone again.
                let _ = end.write_all(&[REQUEST]);
                std::thread::sleep(Duration::from_millis(20));
                assert_eq!(turns.holds(), (1, false, 0));
            });
            assert_eq!(
                served.out_of_turn,
                Some(wrong),
                "{wrong} after asking: {asked}"
            );
            assert_eq!(served.alone().0, u32::from(asked));
            assert_eq!(turns.holds(), (0, false, 0));
        }
    }

    #[test]
    fn a_run_that_ends_alone_lets_go_of_the_gpu_alone_at_its_end() {
        let turns = Turns::default();
        let ((), served) = hold(&turns, None, |gate| {
            let mut end = process(gate);
            assert_eq!(ask(&mut end), Some(GO));
            // The process dies while it times: its end closes.
            drop(end);
            while turns.holds().1 {
                std::thread::yield_now();
            }
            // Shared until the run is over.
            assert_eq!(turns.holds(), (1, false, 0));
        });
        assert_eq!(served.alone().0, 1);
        assert_eq!(turns.holds(), (0, false, 0));
    }

    #[test]
    fn a_run_whose_process_outlives_its_command_holds_nothing_after_it() {
        // The process's end kept open past `make` (by something it left
        // running): the shut-down socket ends the serving all the same.
        let turns = Turns::default();
        let mut kept = None;
        let ((), served) = hold(&turns, None, |gate| {
            let mut end = process(gate);
            assert_eq!(ask(&mut end), Some(GO));
            kept = Some(end);
        });
        assert_eq!(served.alone().0, 1);
        assert_eq!(turns.holds(), (0, false, 0));
        drop(kept);
    }

    #[test]
    fn the_wait_for_go_is_on_the_run_s_waiting_clock() {
        let turns = Turns::default();
        let other = turns.shared();
        std::thread::scope(|scope| {
            let gated = scope.spawn(|| {
                hold(&turns, None, |gate| {
                    let gate = gate.expect("a gate");
                    let waited = Arc::clone(&gate.waited);
                    let mut end = UnixStream::from(gate.descriptor);
                    assert_eq!(ask(&mut end), Some(GO));
                    assert_eq!(done(&mut end), Some(SHARED));
                    waited.so_far()
                })
            });
            // The gated run waits for the other share to end.
            while turns.holds().2 == 0 {
                std::thread::yield_now();
            }
            std::thread::sleep(Duration::from_millis(100));
            drop(other);
            let (waited, served) = gated.join().unwrap();
            assert!(waited >= Duration::from_millis(100), "{waited:?}");
            assert!(served.waited() >= Duration::from_millis(100));
        });
    }
}

#[cfg(test)]
mod through_a_process {
    use super::*;
    use crate::confine::runner::{self, Ended, Limits, Outcome};
    use crate::confine::sandbox::{Extras, Isolation};

    /// A process of its own asks, waits for go and says done, through the
    /// descriptor and variable the run is given, confined as `isolation`
    /// says.
    fn asks_through(isolation: &Isolation) -> (Outcome, Served) {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("asks");
        // bash: dash's redirections take one-digit descriptors only.
        std::fs::write(
            &script,
            "#!/bin/bash\nfd=$CUDA_COURSE_TIMING_GATE\nprintf '?' >&$fd\n\
             read -r -n1 -u $fd go\n[ \"$go\" = '!' ] || exit 3\nprintf '.' >&$fd\n\
             read -r -n1 -u $fd again\n[ \"$again\" = '=' ] || exit 4\necho timed\n",
        )
        .unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let limits = Limits {
            timeout: Duration::from_secs(10),
            max_output: 1 << 10,
        };
        let turns = Turns::default();
        let made = hold(&turns, None, |gate| {
            assert!(gate.is_some());
            let (descriptors, waited) = GateEnd::attach(gate);
            let extras = Extras {
                descriptors,
                ..Extras::default()
            };
            let command = isolation.run_command_with(&script, &[], &[], extras);
            runner::run_command_waiting(command, limits, &waited)
        });
        assert_eq!(turns.holds(), (0, false, 0));
        made
    }

    #[test]
    fn a_process_asks_and_is_answered_through_its_descriptor() {
        let (outcome, served) = asks_through(&Isolation::Unsandboxed);
        assert_eq!(outcome.ended, Ended::Exited(0), "{}", outcome.stderr);
        assert_eq!(outcome.stdout, "timed\n");
        assert_eq!(served.alone().0, 1);
        assert_eq!(served.out_of_turn, None);
    }

    #[test]
    fn the_gate_reaches_into_the_sandbox() {
        let isolation = Isolation::choose(false).expect("bubblewrap is installed");
        let (outcome, served) = asks_through(&isolation);
        assert_eq!(outcome.ended, Ended::Exited(0), "{}", outcome.stderr);
        assert_eq!(outcome.stdout, "timed\n");
        assert_eq!(served.alone().0, 1);
    }
}
