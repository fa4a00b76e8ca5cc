//! The driver-call trace of one run: the pipe it arrives through
//! ([`Pipe`]) from the tracer library (`tracer/`, `libcuda_course_trace.so`,
//! preloaded into the student's binary), and its records ([`Trace`]), in
//! the format `kernels::trace_record` defines for both ends. What the
//! grader asks of them is `judge::evidence`'s.
//!
//! What this evidence proves, and what not. The tracer runs inside the
//! student's process, so a program written to deceive can write records of
//! calls it never made, or reach the driver around the tracer. The trace
//! therefore cannot prove that a kernel computed the answer; it proves
//! the absence of the common shortcuts: a program that never launches the
//! kernel, computes the answer on the CPU, never copies the result back
//! after its last launch, or copies from pageable memory leaves exactly
//! that in its trace. Kernel points must come from the grader's runs of
//! the kernel under host code it trusts.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use kernels::trace_record::{Call, FD_VARIABLE, parse_line};

use crate::record::outcome::TraceFailure;

/// The descriptor the traced program writes its trace to.
pub const TRACE_FD: i32 = 3;

/// The most trace kept; the rest is read and dropped, so a program that
/// launches without end cannot fill the grader's memory.
pub const MAX_TRACE_BYTES: usize = 64 << 20;

/// The environment a traced run needs: `library` (the tracer) preloaded and
/// the trace on [`TRACE_FD`]. Set with `Command::env`, or, inside a
/// bubblewrap sandbox, with `--setenv` after `--clearenv` (and the library
/// bound read-only at the path given here).
pub fn variables(library: &Path) -> [(&'static str, OsString); 2] {
    [
        ("LD_PRELOAD", library.as_os_str().to_owned()),
        (FD_VARIABLE, TRACE_FD.to_string().into()),
    ]
}

/// The pipe a run's trace arrives through: the grader keeps the read end;
/// the traced program gets the write end as [`TRACE_FD`] and nothing else
/// inherits either (both close on exec until then).
pub struct Pipe {
    read: OwnedFd,
    write: OwnedFd,
}

/// What came through the pipe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collected {
    pub text: String,
    /// More than [`MAX_TRACE_BYTES`] came; the rest was dropped, and `text`
    /// ends at the last whole record.
    pub truncated: bool,
}

/// The trace being read, on a thread of its own so that a long trace never
/// blocks the program writing it.
pub struct Reading {
    done: mpsc::Receiver<io::Result<Collected>>,
}

impl Pipe {
    pub fn new() -> io::Result<Pipe> {
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two descriptors into the array it is given.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: both descriptors are new and owned by nothing else.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        Ok(Pipe { read, write })
    }

    /// Gives the program `command` starts the write end as [`TRACE_FD`].
    pub fn attach(&self, command: &mut Command) {
        let write = self.write.as_raw_fd();
        // SAFETY: between fork and exec the closure calls only dup2, which
        // is async-signal-safe; the copy it makes does not close on exec.
        unsafe {
            command.pre_exec(move || {
                if libc::dup2(write, TRACE_FD) == TRACE_FD {
                    Ok(())
                } else {
                    Err(io::Error::last_os_error())
                }
            });
        }
    }

    /// After the program started: closes the grader's copy of the write
    /// end and reads the trace until every copy of it is closed.
    pub fn read(self) -> Reading {
        let (reading, write) = self.split();
        drop(write);
        reading
    }

    /// Starts reading now and hands out the write end, for a program to
    /// inherit at its own number (a sandbox passes descriptors through
    /// as they are); the trace ends once the caller drops it after the
    /// program started, and the program and its children exit.
    pub fn split(self) -> (Reading, OwnedFd) {
        let Pipe { read, write } = self;
        let (sender, done) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = sender.send(read_capped(File::from(read)));
        });
        (Reading { done }, write)
    }
}

impl Reading {
    /// The trace, once the program and whatever inherited its descriptor
    /// have exited; waits at most `grace` for that after the caller saw the
    /// program end.
    pub fn finish(self, grace: Duration) -> Result<Collected, TraceFailure> {
        match self.done.recv_timeout(grace) {
            Ok(Ok(collected)) => Ok(collected),
            Ok(Err(err)) => Err(TraceFailure::Unreadable {
                error: err.to_string(),
            }),
            Err(_) => Err(TraceFailure::HeldOpen),
        }
    }
}

fn read_capped(mut from: File) -> io::Result<Collected> {
    let mut kept = Vec::new();
    let mut buffer = [0; 1 << 16];
    let mut truncated = false;
    loop {
        let n = match from.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        let room = MAX_TRACE_BYTES - kept.len();
        truncated |= n > room;
        kept.extend_from_slice(&buffer[..n.min(room)]);
    }
    if truncated {
        // Whole records only.
        let end = kept
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |at| at + 1);
        kept.truncate(end);
    }
    Ok(Collected {
        text: String::from_utf8_lossy(&kept).into_owned(),
        truncated,
    })
}

/// A run's trace: the calls of the process the grader started, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    pub calls: Vec<Call>,
}

impl Trace {
    /// Parses a trace, keeping the calls of process `pid` (the one the
    /// grader started; a child it spawned writes its own records).
    pub fn parse(text: &str, pid: u32) -> Result<Trace, TraceFailure> {
        let mut calls = Vec::new();
        for (number, line) in text.lines().enumerate() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let call = parse_line(line).map_err(|error| TraceFailure::Garbled {
                line: number + 1,
                text: line.to_owned(),
                error,
            })?;
            if call.pid == pid {
                calls.push(call);
            }
        }
        calls.sort_by_key(|call| call.seq);
        Ok(Trace { calls })
    }

    /// Parses a trace, keeping the calls of the process that wrote the
    /// first record: the program the grader started, whose process id it
    /// cannot know inside a sandbox's own PID namespace.
    pub fn parse_first(text: &str) -> Result<Trace, TraceFailure> {
        match Trace::first_pid(text)? {
            Some(pid) => Trace::parse(text, pid),
            None => Ok(Trace { calls: vec![] }),
        }
    }

    /// The process id of the first record: the program the grader
    /// started. None where there is no record.
    pub fn first_pid(text: &str) -> Result<Option<u32>, TraceFailure> {
        let first = text
            .lines()
            .find(|l| !l.trim().is_empty() && !l.starts_with('#'));
        first
            .map(|line| {
                parse_line(line)
                    .map(|call| call.pid)
                    .map_err(|error| TraceFailure::Garbled {
                        line: 0,
                        text: line.to_owned(),
                        error,
                    })
            })
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_processes_are_left_out_and_order_is_by_sequence() {
        let text = "# cuda-course-trace 1\n\
                    5 7 cuMemcpyDtoH_v2 0 stream=0x0 bytes=4 dir=dtoh pinned=0\n\
                    1 7 cuLaunchKernel 0 stream=0x0 kernel=dot grid=1,1,1 block=1,1,1\n\
                    2 99 cuLaunchKernel 0 stream=0x0 kernel=vecadd\n";
        let t = Trace::parse(text, 7).unwrap();
        assert_eq!(t.calls.iter().map(|c| c.seq).collect::<Vec<_>>(), [1, 5]);
    }

    #[test]
    fn the_pipe_brings_what_the_program_wrote_on_descriptor_3() {
        let pipe = Pipe::new().unwrap();
        let mut command = Command::new("sh");
        command.args(["-c", "echo '0 1 cuCtxSynchronize 0' >&3"]);
        pipe.attach(&mut command);
        let mut child = command.spawn().unwrap();
        let reading = pipe.read();
        assert!(child.wait().unwrap().success());
        let collected = reading.finish(Duration::from_secs(10)).unwrap();
        assert_eq!(collected.text, "0 1 cuCtxSynchronize 0\n");
        assert!(!collected.truncated);
    }

    #[test]
    fn a_trace_held_open_by_a_leftover_process_is_reported() {
        let pipe = Pipe::new().unwrap();
        let mut command = Command::new("sh");
        // The background sleep inherits descriptor 3 and outlives sh.
        command.args(["-c", "sleep 2 & exit 0"]);
        pipe.attach(&mut command);
        let mut child = command.spawn().unwrap();
        let reading = pipe.read();
        assert!(child.wait().unwrap().success());
        let err = reading.finish(Duration::from_millis(200)).unwrap_err();
        assert_eq!(err, TraceFailure::HeldOpen);
    }

    #[test]
    fn variables_name_the_library_and_the_descriptor() {
        let [(preload, library), (fd, three)] =
            variables(Path::new("/trace/libcuda_course_trace.so"));
        assert_eq!(
            (preload, library.to_str()),
            ("LD_PRELOAD", Some("/trace/libcuda_course_trace.so"))
        );
        assert_eq!((fd, three.to_str()), ("CUDA_COURSE_TRACE_FD", Some("3")));
    }

    #[test]
    fn a_garbled_line_is_named() {
        for (text, says) in [
            ("1 7 cuLaunchKernel\n", "no result"),
            ("x 7 cuCtxSynchronize 0\n", "sequence number"),
            ("1 7 cuMemcpyHtoD_v2 0 dir=up\n", "dir=up"),
            ("1 7 cuMemcpyHtoD_v2 0 stream=12\n", "0x handle"),
            ("1 7 cuMemcpyHtoD_v2 0 pinned\n", "key=value"),
        ] {
            let err = Trace::parse(text, 7).unwrap_err();
            assert!(
                matches!(err, TraceFailure::Garbled { line: 1, .. }),
                "{err:?}"
            );
            let err = err.to_string();
            assert!(
                err.contains("line 1") && err.contains(says),
                "{text}: {err}"
            );
        }
    }
}
