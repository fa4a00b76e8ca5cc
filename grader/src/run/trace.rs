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

/// The most trace kept of one process, in bytes and in lines (records,
/// and a batch's marks); the rest is read and dropped, and a trace cut so
/// is refused (`run::traced`), so a program that launches or writes
/// records without end cannot fill the grader's memory: what is kept, and
/// the calls parsed from it, hold a few MiB whatever the program wrote
/// (62 MiB of records once took the grader to 587 MB). An honest run's
/// trace is a few hundred records (streams-overlap's 233 to 261 in the
/// grader's class, on the CPU emulator and an H200), a batch's a few
/// thousand; the limits are over ten times that. They bound the reading
/// side, so they hold for whatever writes the trace.
pub const MAX_TRACE_BYTES: usize = 4 << 20;
pub const MAX_TRACE_RECORDS: usize = 32 << 10;

/// The most of a garbled line kept in its record.
const GARBLED_KEPT: usize = 120;

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
    /// More than [`MAX_TRACE_BYTES`] or [`MAX_TRACE_RECORDS`] lines came;
    /// the rest was dropped, and `text` ends at the last whole record.
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

fn read_capped(from: File) -> io::Result<Collected> {
    read_within(from, MAX_TRACE_BYTES, MAX_TRACE_RECORDS)
}

/// What `from` gives, keeping at most `bytes` and `lines` of it, whole
/// lines only where it was cut; the rest read and dropped, so the writer
/// never blocks.
fn read_within(mut from: impl Read, bytes: usize, lines: usize) -> io::Result<Collected> {
    let mut kept = Vec::new();
    let mut buffer = [0; 1 << 16];
    let mut newlines = 0;
    let mut truncated = false;
    loop {
        let n = match from.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        if truncated {
            continue;
        }
        let room = bytes - kept.len();
        let taken = &buffer[..n.min(room)];
        newlines += taken.iter().filter(|&&b| b == b'\n').count();
        kept.extend_from_slice(taken);
        truncated = n > room || newlines > lines;
    }
    if truncated {
        // Whole records only, and no more of them than the limit.
        let whole = newlines.min(lines);
        let end = (kept.iter().enumerate())
            .filter(|&(_, &b)| b == b'\n')
            .nth(whole.wrapping_sub(1))
            .map_or(0, |(at, _)| at + 1);
        kept.truncate(end);
    }
    // Text as it came, copied only where it is not UTF-8.
    let text = String::from_utf8(kept)
        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned());
    Ok(Collected { text, truncated })
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
                text: garbled(line),
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
                        text: garbled(line),
                        error,
                    })
            })
            .transpose()
    }
}

/// A garbled line as its record keeps it: its first [`GARBLED_KEPT`]
/// characters, and how much more there was.
fn garbled(line: &str) -> String {
    match line.char_indices().nth(GARBLED_KEPT) {
        Some((at, _)) => format!("{}... ({} more bytes)", &line[..at], line.len() - at),
        None => line.to_owned(),
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
    fn a_trace_is_kept_within_its_bytes_and_lines_and_cut_at_a_whole_record() {
        let records: String = (0..10).map(|k| format!("{k} 7 cuInit 0\n")).collect();
        let read = |bytes, lines| read_within(records.as_bytes(), bytes, lines).unwrap();
        // Within both: whole.
        let whole = read(1 << 10, 10);
        assert_eq!(
            (whole.text.as_str(), whole.truncated),
            (records.as_str(), false)
        );
        // Ten lines where four are kept: the first four, cut.
        let by_lines = read(1 << 10, 4);
        assert!(by_lines.truncated);
        assert_eq!(
            by_lines.text,
            records
                .lines()
                .take(4)
                .map(|l| format!("{l}\n"))
                .collect::<String>()
        );
        // Bytes for two records and a half: two.
        let by_bytes = read(35, 100);
        assert!(by_bytes.truncated);
        assert_eq!(by_bytes.text, "0 7 cuInit 0\n1 7 cuInit 0\n");
        // One line without end: nothing kept.
        let endless = "9".repeat(1 << 12);
        let flood = read_within(endless.as_bytes(), 1 << 10, 100).unwrap();
        assert_eq!((flood.text.as_str(), flood.truncated), ("", true));
    }

    #[test]
    fn a_flood_of_records_is_read_to_its_end_and_refused_in_bounded_memory() {
        // Ten times the records the grader keeps, through the pipe: read to
        // the end (the writer never blocks), the kept part within the limit.
        let pipe = Pipe::new().unwrap();
        let mut command = Command::new("sh");
        let lines = 10 * MAX_TRACE_RECORDS;
        command.args([
            "-c",
            &format!("yes '1 7 cuLaunchKernel 0 kernel=dot' | head -n {lines} >&3"),
        ]);
        pipe.attach(&mut command);
        let mut child = command.spawn().unwrap();
        let reading = pipe.read();
        assert!(
            child.wait().unwrap().success(),
            "the writer was not blocked"
        );
        let collected = reading.finish(Duration::from_secs(30)).unwrap();
        assert!(collected.truncated);
        assert_eq!(collected.text.lines().count(), MAX_TRACE_RECORDS);
        assert!(collected.text.len() <= MAX_TRACE_BYTES);
    }

    #[test]
    fn a_garbled_line_is_kept_short() {
        let long = format!("1 7 {}\n", "x".repeat(1 << 20));
        let err = Trace::parse(&long, 7).unwrap_err();
        let TraceFailure::Garbled { text, .. } = &err else {
            panic!("{err:?}");
        };
        assert!(text.len() < 200 && text.ends_with("more bytes)"), "{text}");
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
