//! Several runs of one exercise in one process of its binary (the
//! course's, or a student's own under the tracer), for the grader: the
//! driver makes and tears down contexts one at a time across every process
//! on a machine, so a process per run is what held a GPU's grading back (`bench/runs/2026-11-27-h100-run-cost`, "Where a GPU run's time
//! goes"). One definition for both ends: the wire format (standard library
//! only, the grader's side) and, with the `runtime` feature, the loop each
//! exercise's `main` runs its command line in ([`each`]).
//!
//! The grader names a file in [`VARIABLE`]: a first line with a nonce, then
//! one run a line, its arguments as a JSON array of strings (the program's
//! name not among them). The process makes the runs in order, each parsed
//! and run as its own command line would be, all in one CUDA context that
//! [`crate::Gpu`] keeps for the process; each run loads its module and
//! allocates its buffers afresh, as a process of its own does. After each
//! run it writes one line to stdout, [`frame`]'s: the nonce, the run's
//! index, its exit code, its wall time and its report; and the nonce and
//! the index alone to stderr, after anything the run wrote there. It stops
//! after the first run that neither passes nor fails the check (a CUDA
//! error can leave the context unusable); the grader makes every run
//! whose frame it does not take in a process of its own.
//!
//! Where the process is traced (a student's own binary, with the tracer
//! preloaded), each run's calls are followed by its mark in the trace
//! ([`crate::trace_record::batch_mark`]), so the grader judges each run by
//! its own calls.
//!
//! Threat model. The course's binary (`Role::KernelInCourseHost`): the
//! student's kernel runs on the GPU (or the CPU emulator) and reaches no
//! file, variable or host memory the process did not give it, so it
//! cannot read the nonce; its `printf` reaches stdout, where a line
//! without the nonce makes the grader read none of the batch's frames
//! ([`read`]), since where a kernel's text lands among the reports is the
//! driver's choice. A student's own binary (`Role::StudentHost`) reads the
//! file and can write any frame and any mark: its frames are its word, as
//! its report and exit code are in a process of its own, and its marks
//! are its word, as every record of its trace is (`grader::run::trace`).
//! What it could not forge alone it cannot forge here: its answer must
//! still match the grader's canary, run by run. The grader takes a run
//! from a batch only where it passed with nothing on stderr (and, traced,
//! where its share of the trace then shows the work); anything else is
//! made again alone, so every failing verdict is a process of its own's,
//! as before. Each run's inputs are drawn from its own seed, and its
//! module and buffers are its own, so what one run leaves behind (device
//! memory the next may be given unwritten, a host allocation reused) holds
//! another run's values: code that reads what it did not write gets a
//! wrong answer from it, never the right one, and that run is made again
//! alone. The grader's side is `grader::run::batch`.

use std::time::Duration;

/// The environment variable naming the batch file.
pub const VARIABLE: &str = "CUDA_COURSE_BATCH";
/// [`VARIABLE`], NUL-terminated, for `getenv` (the tracer's).
pub const VARIABLE_C: &std::ffi::CStr = c"CUDA_COURSE_BATCH";

/// One run's frame on stdout: `nonce index exit micros report`, the report
/// on one line as `--json` prints it.
pub fn frame(nonce: &str, index: usize, exit: i32, took: Duration, report: &str) -> String {
    format!(
        "\n{nonce} {index} {exit} {} {}\n",
        took.as_micros(),
        report.trim_end()
    )
}

/// The line that ends a run's share of stderr.
pub fn stderr_mark(nonce: &str, index: usize) -> String {
    format!("\n{nonce} {index}\n")
}

/// The batch file for `runs` under `nonce`.
#[cfg(feature = "protocol")]
pub fn file(nonce: &str, runs: &[Vec<String>]) -> String {
    let mut text = format!("{nonce}\n");
    for args in runs {
        // A list of strings always serialises.
        text += &serde_json::to_string(args).unwrap_or_default();
        text += "\n";
    }
    text
}

/// A run as the batch made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub exit: i32,
    pub took: Duration,
    /// The report, as the run would have printed it alone.
    pub report: String,
    /// What the run wrote to stderr.
    pub stderr: String,
}

/// The frames of a batch of `runs` runs under `nonce`, from its stdout and
/// stderr: one for each run it finished, in order. None at all where
/// stdout holds a line that is not a frame of the batch (a kernel's
/// `printf`, whose place among the frames cannot be told), or frames out
/// of order; a run's frame without its stderr mark is left out, and so is
/// every later one.
pub fn read(nonce: &str, runs: usize, stdout: &str, stderr: &str) -> Vec<Frame> {
    let mut frames = Vec::new();
    for line in stdout.lines().filter(|l| !l.is_empty()) {
        let Some(rest) = line.strip_prefix(nonce).and_then(|r| r.strip_prefix(' ')) else {
            return vec![];
        };
        let mut fields = rest.splitn(4, ' ');
        let (Some(index), Some(exit), Some(micros), Some(report)) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return vec![];
        };
        let (Ok(index), Ok(exit), Ok(micros)) =
            (index.parse::<usize>(), exit.parse(), micros.parse())
        else {
            return vec![];
        };
        if index != frames.len() || index >= runs {
            return vec![];
        }
        frames.push(Frame {
            exit,
            took: Duration::from_micros(micros),
            report: format!("{report}\n"),
            stderr: String::new(),
        });
    }
    // Each run's share of stderr: what came before its mark.
    let mut share = String::new();
    let mut marked = 0;
    for line in stderr.lines().filter(|l| !l.is_empty()) {
        if marked < frames.len() && line == format!("{nonce} {marked}") {
            frames[marked].stderr = std::mem::take(&mut share);
            marked += 1;
        } else {
            share += line;
            share += "\n";
        }
    }
    frames.truncate(marked);
    frames
}

#[cfg(feature = "runtime")]
pub(crate) use runner::args;
#[cfg(feature = "runtime")]
pub use runner::{active, each, write_report};

#[cfg(feature = "runtime")]
mod runner {
    use std::ffi::OsString;
    use std::io::Write;
    use std::process::ExitCode;
    use std::sync::{Mutex, PoisonError};
    use std::time::Instant;

    use super::{VARIABLE, frame, stderr_mark};
    use crate::exit_code::Exit;

    /// The run being made: its arguments, and what it reported.
    struct Current {
        args: Vec<OsString>,
        reported: Option<(String, Exit)>,
    }

    static CURRENT: Mutex<Option<Current>> = Mutex::new(None);

    /// Whether this process makes a batch of runs.
    pub fn active() -> bool {
        std::env::var_os(VARIABLE).is_some()
    }

    /// The command line the run being made parses: the batch's line, or
    /// the process's own.
    pub(crate) fn args() -> Vec<OsString> {
        let slot = CURRENT.lock().unwrap_or_else(PoisonError::into_inner);
        match &*slot {
            Some(current) => current.args.clone(),
            None => std::env::args_os().collect(),
        }
    }

    /// Writes a run's report: to stdout, or kept for its frame in a batch.
    pub fn write_report(text: &str, exit: Exit) {
        let mut slot = CURRENT.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(current) = &mut *slot {
            current.reported = Some((text.to_owned(), exit));
            return;
        }
        drop(slot);
        // A closed pipe (`| head`) is not the exercise's failure.
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
    }

    /// Runs `run`, the exercise's command line to its exit: once, or for
    /// each run of the batch [`VARIABLE`] names. A batch file that cannot
    /// be read is a `bad-arguments` error.
    pub fn each(mut run: impl FnMut() -> ExitCode) -> ExitCode {
        let Some(path) = std::env::var_os(VARIABLE) else {
            return run();
        };
        let (nonce, runs) = match read_file(&path) {
            Ok(batch) => batch,
            Err(why) => {
                eprintln!(
                    "{VARIABLE} names {}, which {why}; unset it to make one run",
                    std::path::Path::new(&path).display()
                );
                return Exit::BadArguments.into();
            }
        };
        let program = std::env::args_os().next().unwrap_or_default();
        for (index, args) in runs.into_iter().enumerate() {
            let args = std::iter::once(program.clone()).chain(args).collect();
            *CURRENT.lock().unwrap_or_else(PoisonError::into_inner) = Some(Current {
                args,
                reported: None,
            });
            let started = Instant::now();
            let _ = run();
            let took = started.elapsed();
            let reported = CURRENT
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take()
                .and_then(|c| c.reported);
            let Some((report, exit)) = reported else {
                break;
            };
            // The trace first (where the process is traced): the run's
            // calls have all returned, so the mark follows every record
            // of theirs; then stdout, since the grader reads a run's
            // stderr only once it has its frame.
            mark_trace(&nonce, index);
            let line = frame(&nonce, index, exit.code(), took, &report);
            let _ = std::io::stdout().lock().write_all(line.as_bytes());
            let _ = std::io::stdout().flush();
            let _ = std::io::stderr().write_all(stderr_mark(&nonce, index).as_bytes());
            // A wrong answer leaves the context as it was; any other error
            // may not.
            if !matches!(exit, Exit::Passed | Exit::Failed) {
                break;
            }
        }
        ExitCode::SUCCESS
    }

    /// Ends run `index`'s share of the driver-call trace with its mark
    /// (`trace_record::batch_mark`), where the process is traced: the
    /// tracer's variable names an open pipe. Otherwise, nothing: a trace
    /// without marks has the grader take none of the batch's runs.
    fn mark_trace(nonce: &str, index: usize) {
        if std::env::var_os(crate::broker_wire::FD_VARIABLE).is_some() {
            mark_broker_record(nonce, index);
            return;
        }
        use std::os::fd::FromRawFd;
        use std::os::unix::fs::FileTypeExt;
        let Some(fd) = std::env::var(crate::trace_record::FD_VARIABLE)
            .ok()
            .and_then(|v| v.parse::<i32>().ok())
        else {
            return;
        };
        let is_pipe =
            std::fs::metadata(format!("/proc/self/fd/{fd}")).is_ok_and(|m| m.file_type().is_fifo());
        if !is_pipe {
            return;
        }
        // SAFETY: the descriptor is an open pipe (above), the one the
        // tracer writes its records to, each with one write as here; it
        // is borrowed, never closed.
        let pipe = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
        let _ = (&*pipe).write_all(crate::trace_record::batch_mark(nonce, index).as_bytes());
    }

    /// Ends run `index`'s share of the broker's record, where the driver
    /// this process loaded is the broker's client (it exports
    /// `cuda_course_broker_mark`, found with `dlsym`); with any other
    /// driver, nothing.
    fn mark_broker_record(nonce: &str, index: usize) {
        use std::ffi::{CString, c_char, c_void};
        type Mark = unsafe extern "C" fn(*const c_char, u64) -> u32;
        unsafe extern "C" {
            fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
        }
        let Ok(nonce) = CString::new(nonce) else {
            return;
        };
        // SAFETY: dlsym with RTLD_DEFAULT (null on glibc) and a
        // NUL-terminated name only looks the symbol up.
        let found = unsafe { dlsym(std::ptr::null_mut(), c"cuda_course_broker_mark".as_ptr()) };
        if found.is_null() {
            return;
        }
        // SAFETY: the client defines the symbol with this signature
        // (broker-client/src/entry/mark.rs); the nonce outlives the call.
        let mark: Mark = unsafe { std::mem::transmute::<*mut c_void, Mark>(found) };
        // SAFETY: as above.
        let _ = unsafe { mark(nonce.as_ptr(), index as u64) };
    }

    /// The nonce and the runs' arguments in the file at `path`.
    fn read_file(path: &std::ffi::OsStr) -> Result<(String, Vec<Vec<OsString>>), String> {
        let text =
            std::fs::read_to_string(path).map_err(|err| format!("could not be read ({err})"))?;
        let mut lines = text.lines();
        let nonce = lines
            .next()
            .filter(|n| n.len() >= 16 && n.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or("does not start with a nonce of 16 or more hex digits")?
            .to_owned();
        let runs = lines
            .map(|line| {
                serde_json::from_str::<Vec<String>>(line)
                    .map(|args| args.into_iter().map(OsString::from).collect())
                    .map_err(|err| {
                        format!("has a line that is not a JSON array of strings ({err})")
                    })
            })
            .collect::<Result<_, _>>()?;
        Ok((nonce, runs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_s_two_spellings_agree() {
        assert_eq!(VARIABLE_C.to_str(), Ok(VARIABLE));
    }

    const NONCE: &str = "0123456789abcdef";

    fn made(index: usize, exit: i32, report: &str, stderr: &str) -> (String, String) {
        let took = Duration::from_micros(1500 + index as u64);
        (
            frame(NONCE, index, exit, took, report),
            stderr.to_owned() + &stderr_mark(NONCE, index),
        )
    }

    #[test]
    fn frames_read_back_as_written_with_each_run_s_stderr() {
        let (o0, e0) = made(0, 0, "{\"a\":1}\n", "");
        let (o1, e1) = made(1, 1, "{\"b\":2}\n", "emulator: finding\n");
        let frames = read(NONCE, 2, &(o0 + &o1), &(e0 + &e1));
        assert_eq!(frames.len(), 2);
        assert_eq!(frames[0].report, "{\"a\":1}\n");
        assert_eq!(frames[0].exit, 0);
        assert_eq!(frames[0].took, Duration::from_micros(1500));
        assert_eq!(frames[0].stderr, "");
        assert_eq!(frames[1].exit, 1);
        assert_eq!(frames[1].stderr, "emulator: finding\n");
    }

    #[test]
    fn a_line_that_is_not_a_frame_voids_the_batch() {
        let (o0, e0) = made(0, 0, "{}", "");
        let (o1, e1) = made(1, 0, "{}", "");
        let stdout = format!("{o0}hello from the kernel\n{o1}");
        assert!(read(NONCE, 2, &stdout, &(e0.clone() + &e1)).is_empty());
        // Text glued before a frame, without a newline, is caught too.
        let glued = format!("{o0}hi{}", o1.trim_start());
        assert!(read(NONCE, 2, &glued, &(e0.clone() + &e1)).is_empty());
        // A frame under another nonce is not one of the batch's.
        let forged = frame("fedcba9876543210", 1, 0, Duration::ZERO, "{}");
        assert!(read(NONCE, 2, &(o0 + &forged), &e0).is_empty());
    }

    #[test]
    fn frames_out_of_order_or_past_the_runs_void_the_batch() {
        let (o0, e0) = made(0, 0, "{}", "");
        let (o1, e1) = made(1, 0, "{}", "");
        let stderr = e0 + &e1;
        assert!(read(NONCE, 2, &(o1.clone() + &o0), &stderr).is_empty());
        assert!(read(NONCE, 1, &(o0 + &o1), &stderr).is_empty());
    }

    #[test]
    fn a_frame_without_its_stderr_mark_is_left_out_with_the_later_ones() {
        let (o0, e0) = made(0, 0, "{}", "");
        let (o1, _) = made(1, 0, "{}", "");
        let frames = read(NONCE, 2, &(o0 + &o1), &(e0 + "killed mid-run\n"));
        assert_eq!(frames.len(), 1);
    }

    #[test]
    fn the_file_is_the_nonce_then_a_json_array_a_run() {
        let runs = vec![
            vec!["--n".to_owned(), "7".to_owned()],
            vec!["--a".to_owned(), "-5+\"i\\".to_owned()],
        ];
        assert_eq!(
            file(NONCE, &runs),
            format!("{NONCE}\n[\"--n\",\"7\"]\n[\"--a\",\"-5+\\\"i\\\\\"]\n")
        );
    }
}
