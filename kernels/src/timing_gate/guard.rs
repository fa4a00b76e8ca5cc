//! The guard a course binary holds while it times: the GPU alone, where
//! the grader gave a gate (runtime only: it synchronises the context).

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::fd::FromRawFd;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::UnixStream;
use std::sync::{Mutex, PoisonError};

use cust::context::CurrentContext;

use super::{DONE, FD_VARIABLE, GO, REQUEST, parse};
use crate::error::CourseError;

/// The GPU held alone, where the grader gave a gate, until dropped.
#[must_use = "the GPU is held alone only while the guard lives"]
pub struct Alone {
    gated: bool,
}

/// The process's gate: opened at the first [`enter`], and how many
/// guards live.
static GATE: Mutex<Option<Gate<UnixStream>>> = Mutex::new(None);

/// Holds the GPU alone until the guard is dropped, where the grader
/// named a gate in [`FD_VARIABLE`] (it returns once the grader answers
/// go); does nothing otherwise. A malformed variable, or a gate that
/// does not answer go, is an error: the run stops rather than time
/// beside another process.
pub fn enter() -> Result<Alone, CourseError> {
    let Some(value) = std::env::var_os(FD_VARIABLE) else {
        return Ok(Alone { gated: false });
    };
    // Nothing of this process's left running on the GPU while it
    // waits, beside another process's timed launches.
    CurrentContext::synchronize()
        .map_err(|err| CourseError::from(err).during("finishing the GPU's work before timing"))?;
    let mut slot = GATE.lock().unwrap_or_else(PoisonError::into_inner);
    let mut gate = match slot.take() {
        Some(gate) => gate,
        None => Gate::new(open(&value)?),
    };
    let entered = gate.enter();
    *slot = Some(gate);
    entered.map_err(|why| {
        CourseError::BadArguments(format!(
            "the grader's timing gate ({FD_VARIABLE}={}) {why}; unset {FD_VARIABLE} to \
             run the exercise yourself",
            value.to_string_lossy()
        ))
    })?;
    Ok(Alone { gated: true })
}

impl Drop for Alone {
    fn drop(&mut self) {
        if self.gated {
            let mut gate = GATE.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(gate) = gate.as_mut() {
                if gate.depth == 1 {
                    // Nothing of this process's left running on the GPU
                    // once it says done: another process may time next.
                    // (An error here is the context's, and its next
                    // call says it.)
                    let _ = CurrentContext::synchronize();
                }
                gate.leave();
            }
        }
    }
}

/// The descriptor the variable names, once it is known to be an open
/// socket (a wrong number would have the guard write into a file or a
/// terminal and wait on it).
fn open(value: &OsStr) -> Result<UnixStream, CourseError> {
    let refused = |why: String| {
        CourseError::BadArguments(format!(
            "{FD_VARIABLE}={}: {why}; the grader sets it to a socket it passes on: unset \
             it to run the exercise yourself",
            value.to_string_lossy()
        ))
    };
    let fd = parse(value.to_str().unwrap_or_default()).map_err(refused)?;
    let open = std::fs::metadata(format!("/proc/self/fd/{fd}"))
        .map_err(|_| refused(format!("descriptor {fd} is not open")))?;
    if !open.file_type().is_socket() {
        return Err(refused(format!("descriptor {fd} is not a socket")));
    }
    // SAFETY: the descriptor is open (above), and nothing else in the
    // process uses it: the grader passed it for the gate alone.
    Ok(unsafe { UnixStream::from_raw_fd(fd) })
}

/// One end of the gate and the guards that hold it.
pub(super) struct Gate<S> {
    end: S,
    depth: usize,
}

impl<S: Read + Write> Gate<S> {
    pub(super) fn new(end: S) -> Gate<S> {
        Gate { end, depth: 0 }
    }

    /// Asks for the GPU alone and waits for go, at the outermost
    /// guard; else why the gate failed, in words.
    pub(super) fn enter(&mut self) -> Result<(), String> {
        if self.depth == 0 {
            self.end
                .write_all(&[REQUEST])
                .map_err(|err| format!("could not be asked: {err}"))?;
            let mut answer = [0u8];
            match self.end.read(&mut answer) {
                Ok(1) if answer[0] == GO => {}
                Ok(1) => return Err(format!("answered {:?}, not go", answer[0] as char)),
                Ok(_) => return Err("closed without answering".to_owned()),
                Err(err) => return Err(format!("could not be read: {err}")),
            }
        }
        self.depth += 1;
        Ok(())
    }

    /// Says done at the outermost guard, and waits until the grader
    /// answers that the GPU is shared again. A gate already gone (or
    /// any other answer, after which the grader closes it) needs no
    /// word: the grader then holds the run as shared until it ends.
    pub(super) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
        if self.depth == 0 && self.end.write_all(&[DONE]).is_ok() {
            let mut answer = [0u8];
            let _ = self.end.read(&mut answer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::SHARED;
    use super::*;
    use std::os::fd::AsRawFd;

    /// The grader's side for one request: reads it, answers `answer`,
    /// answers [`SHARED`] to a done, and returns what else the process
    /// wrote before closing, done included.
    fn grader(mut end: UnixStream, answer: &'static [u8]) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut asked = [0u8];
            end.read_exact(&mut asked).unwrap();
            assert_eq!(asked[0], REQUEST);
            end.write_all(answer).unwrap();
            let mut rest = Vec::new();
            let mut byte = [0u8];
            while end.read(&mut byte).is_ok_and(|n| n == 1) {
                rest.push(byte[0]);
                if byte[0] == DONE {
                    end.write_all(&[SHARED]).unwrap();
                }
            }
            rest
        })
    }

    #[test]
    fn without_the_variable_nothing_is_asked() {
        // Tests run without the grader, so without the variable.
        assert!(std::env::var_os(FD_VARIABLE).is_none());
        let alone = enter().unwrap();
        assert!(!alone.gated);
        drop(alone);
        assert!(GATE.lock().unwrap().is_none());
    }

    #[test]
    fn a_request_waits_for_go_and_nested_guards_ask_once() {
        let (ours, theirs) = UnixStream::pair().unwrap();
        let grader = grader(theirs, &[GO]);
        let mut gate = Gate::new(ours);
        gate.enter().unwrap();
        gate.enter().unwrap();
        gate.leave();
        gate.leave();
        drop(gate);
        // One request (read above), then one done, then the end.
        assert_eq!(grader.join().unwrap(), vec![DONE]);
    }

    #[test]
    fn done_waits_for_the_grader_to_share_the_gpu_again() {
        let (ours, mut theirs) = UnixStream::pair().unwrap();
        let left = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let process = {
            let left = std::sync::Arc::clone(&left);
            std::thread::spawn(move || {
                let mut gate = Gate::new(ours);
                gate.enter().unwrap();
                gate.leave();
                left.store(true, std::sync::atomic::Ordering::SeqCst);
            })
        };
        let mut byte = [0u8];
        theirs.read_exact(&mut byte).unwrap();
        theirs.write_all(&[GO]).unwrap();
        theirs.read_exact(&mut byte).unwrap();
        assert_eq!(byte[0], DONE);
        // Not answered yet: the process still waits.
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!left.load(std::sync::atomic::Ordering::SeqCst));
        theirs.write_all(&[SHARED]).unwrap();
        process.join().unwrap();
        assert!(left.load(std::sync::atomic::Ordering::SeqCst));
    }

    #[test]
    fn a_gate_that_answers_anything_but_go_is_an_error() {
        let (ours, theirs) = UnixStream::pair().unwrap();
        let grader = grader(theirs, b"x");
        let mut gate = Gate::new(ours);
        let why = gate.enter().unwrap_err();
        assert!(why.contains("'x', not go"), "{why}");
        drop(gate);
        assert_eq!(grader.join().unwrap(), Vec::<u8>::new());

        // A grader's end that closes once it has read the request.
        let (ours, mut theirs) = UnixStream::pair().unwrap();
        let closing = std::thread::spawn(move || theirs.read_exact(&mut [0u8]).unwrap());
        let mut gate = Gate::new(ours);
        let why = gate.enter().unwrap_err();
        closing.join().unwrap();
        assert!(why.contains("closed without answering"), "{why}");
    }

    #[test]
    fn the_variable_must_name_an_open_socket() {
        let refusal = |value: &str| open(OsStr::new(value)).unwrap_err().to_string();
        let why = refusal("banana");
        assert!(
            why.contains("CUDA_COURSE_TIMING_GATE=banana: not a descriptor"),
            "{why}"
        );
        assert!(why.contains("unset it"), "{why}");
        assert!(refusal("1").contains("stdout"));
        // A number no descriptor of this process has.
        assert!(refusal("999999").contains("not open"));
        let file = std::fs::File::open(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).unwrap();
        let why = refusal(&file.as_raw_fd().to_string());
        assert!(why.contains("not a socket"), "{why}");
    }
}
