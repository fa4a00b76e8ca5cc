//! A run of a student's own binary with the course's tracer preloaded and
//! its driver-call trace on a pipe the grader owns (see `trace`): what the
//! run's command needs, and the trace once the run ended. What the trace
//! must show is `judge::evidence`'s.

use std::os::fd::OwnedFd;
use std::path::Path;
use std::time::Duration;

use kernels::trace_record::{FD_VARIABLE, is_header, split_batch};

use crate::record::outcome::TraceFailure;
use crate::run::trace::{Collected, MAX_TRACE_BYTES, MAX_TRACE_RECORDS, Pipe, Reading, Trace};

/// How long the trace may stay open after the program ended.
const GRACE: Duration = Duration::from_secs(5);

/// A trace being collected: what the run needs, and the reading end.
pub struct Tracing {
    reading: Reading,
}

/// What a run's command needs to be traced: the files to pass (the tracer
/// as `LD_PRELOAD`) and the descriptor to inherit, named by
/// `kernels::trace_record::FD_VARIABLE`.
pub struct Attach<'a> {
    pub files: [(&'static str, &'a Path); 1],
    pub descriptor: (&'static str, OwnedFd),
}

/// Starts collecting a trace for one run of a binary, with `library` the
/// tracer on this machine.
pub fn start(library: &Path) -> Result<(Tracing, Attach<'_>), TraceFailure> {
    let pipe = Pipe::new().map_err(|err| TraceFailure::Pipe {
        error: err.to_string(),
    })?;
    let (reading, write) = pipe.split();
    Ok((
        Tracing { reading },
        Attach {
            files: [("LD_PRELOAD", library)],
            descriptor: (FD_VARIABLE, write),
        },
    ))
}

impl Tracing {
    /// The trace, once the run's command (which held the write end) is
    /// dropped and the program has ended.
    pub fn finish(self) -> Result<Trace, TraceFailure> {
        let (text, truncated) = self.loaded()?;
        let trace = Trace::parse_first(&text)?;
        whole(truncated)?;
        Ok(trace)
    }

    /// The traces of a batch's runs under `nonce` (`kernels::batch`), each
    /// run's calls up to its mark, in order: one for each run marked.
    pub fn finish_batch(self, nonce: &str) -> Result<Vec<Trace>, TraceFailure> {
        let (text, truncated) = self.loaded()?;
        let traces = match Trace::first_pid(&text)? {
            Some(pid) => split_batch(&text, nonce)
                .into_iter()
                .map(|run| Trace::parse(run, pid))
                .collect::<Result<_, _>>()?,
            None => vec![],
        };
        whole(truncated)?;
        Ok(traces)
    }

    /// The trace's text and whether it was cut, once the tracer is known
    /// to have loaded.
    fn loaded(self) -> Result<(String, bool), TraceFailure> {
        let Collected { text, truncated } = self.reading.finish(GRACE)?;
        // The tracer writes it as it loads, before any call.
        if !text.lines().any(is_header) {
            return Err(TraceFailure::NotLoaded);
        }
        Ok((text, truncated))
    }
}

/// A trace that was cut is refused: the end is gone, and a copy back after
/// the last launch may be too.
fn whole(truncated: bool) -> Result<(), TraceFailure> {
    if truncated {
        return Err(TraceFailure::Truncated {
            mib: MAX_TRACE_BYTES >> 20,
            records: MAX_TRACE_RECORDS,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a script that writes one record to the descriptor the
    /// variable names, and reads the trace.
    fn trace_through(isolation: &crate::confine::sandbox::Isolation) -> Trace {
        let dir = tempfile::tempdir().unwrap();
        let library = dir.path().join("libcuda_course_trace.so");
        std::fs::write(&library, "").unwrap();
        let script = dir.path().join("writes-a-record");
        std::fs::write(
            &script,
            // bash: dash's redirections take one-digit descriptors only, and
            // with tests running in parallel the pipe's may be 10 or more.
            "#!/bin/bash\nprintf '# cuda-course-trace 1\\n0 9 cuInit 100\\n' >&$CUDA_COURSE_TRACE_FD\n\
             echo \"$LD_PRELOAD\"\n",
        )
        .unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let (tracing, attach) = start(&library).unwrap();
        assert_eq!(attach.files[0], ("LD_PRELOAD", library.as_path()));
        let command = isolation.run_command_with(
            &script,
            &[],
            &[],
            crate::confine::sandbox::Extras {
                files: &attach.files,
                descriptors: vec![attach.descriptor],
                ..crate::confine::sandbox::Extras::default()
            },
        );
        let limits = crate::confine::runner::Limits {
            timeout: Duration::from_secs(10),
            max_output: 1 << 10,
        };
        let outcome = crate::confine::runner::run_command(command, limits);
        assert_eq!(
            outcome.ended,
            crate::confine::runner::Ended::Exited(0),
            "{}",
            outcome.stderr
        );
        assert!(outcome.stdout.trim().ends_with("libcuda_course_trace.so"));
        tracing.finish().unwrap()
    }

    #[test]
    fn the_pipe_carries_the_records_through_the_named_descriptor() {
        let trace = trace_through(&crate::confine::sandbox::Isolation::Unsandboxed);
        assert_eq!(trace.calls.len(), 1);
        assert_eq!(trace.calls[0].name, "cuInit");
    }

    #[test]
    fn a_trace_without_the_tracer_s_header_is_refused() {
        let library = Path::new("/nonexistent/libcuda_course_trace.so");
        let (tracing, attach) = start(library).unwrap();
        let command = crate::confine::sandbox::Isolation::Unsandboxed.run_command_with(
            Path::new("/bin/true"),
            &[],
            &[],
            crate::confine::sandbox::Extras {
                descriptors: vec![attach.descriptor],
                ..crate::confine::sandbox::Extras::default()
            },
        );
        let limits = crate::confine::runner::Limits {
            timeout: Duration::from_secs(10),
            max_output: 1 << 10,
        };
        crate::confine::runner::run_command(command, limits);
        assert_eq!(tracing.finish().unwrap_err(), TraceFailure::NotLoaded);
    }

    #[test]
    fn the_pipe_reaches_into_the_sandbox() {
        let isolation =
            crate::confine::sandbox::Isolation::choose(false).expect("bubblewrap is installed");
        let trace = trace_through(&isolation);
        assert_eq!(trace.calls.len(), 1);
    }
}
