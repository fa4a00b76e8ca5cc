//! The driver-call trace of one run (issue 11): the pipe it arrives through
//! ([`Pipe`]) from the tracer library (`tracer/`, `libcuda_course_trace.so`,
//! preloaded into the student's binary), its records ([`Trace`]), and the
//! questions the grader asks of them. Each answer is Ok or a reason a
//! student can act on.
//!
//! A record is `SEQ PID CALL RESULT key=value ...` (tracer/src/record.rs);
//! lines starting with `#` are headers.
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

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use kernels::catalogue::ExerciseId;

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
        ("CUDA_COURSE_TRACE_FD", TRACE_FD.to_string().into()),
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
    pub fn finish(self, grace: Duration) -> Result<Collected, String> {
        match self.done.recv_timeout(grace) {
            Ok(Ok(collected)) => Ok(collected),
            Ok(Err(err)) => Err(format!("the trace could not be read: {err}")),
            Err(_) => Err(
                "the trace stayed open after the program ended: a process it started still \
                 holds it"
                    .into(),
            ),
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

/// Which way a copy went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
}

/// One recorded driver call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The order the calls returned in, within the process.
    pub seq: u64,
    pub pid: u32,
    /// The driver entry point, e.g. `cuMemcpyDtoHAsync_v2`.
    pub name: String,
    /// Its CUresult: 0 is success.
    pub result: u32,
    pub stream: Option<u64>,
    pub bytes: Option<u64>,
    pub direction: Option<Direction>,
    /// Whether the host side of a copy lies in page-locked memory.
    pub pinned: Option<bool>,
    /// The kernel of a launch or of `cuModuleGetFunction` (`?` when the
    /// tracer never saw the function's name).
    pub kernel: Option<String>,
}

impl Call {
    fn is_launch(&self) -> bool {
        self.name == "cuLaunchKernel"
    }

    fn is_async(&self) -> bool {
        self.name.contains("Async")
    }
}

/// A run's trace: the calls of the process the grader started, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    pub calls: Vec<Call>,
}

impl Trace {
    /// Parses a trace, keeping the calls of process `pid` (the one the
    /// grader started; a child it spawned writes its own records).
    pub fn parse(text: &str, pid: u32) -> Result<Trace, String> {
        let mut calls = Vec::new();
        for (number, line) in text.lines().enumerate() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let call = parse_line(line)
                .map_err(|why| format!("line {} of the trace, {line:?}: {why}", number + 1))?;
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
    pub fn parse_first(text: &str) -> Result<Trace, String> {
        let first = text
            .lines()
            .find(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(parse_line)
            .transpose()
            .map_err(|why| format!("the first record of the trace: {why}"))?;
        match first {
            Some(call) => Trace::parse(text, call.pid),
            None => Ok(Trace { calls: vec![] }),
        }
    }

    /// Every kernel `exercise` needs was launched, successfully.
    pub fn launched(&self, exercise: ExerciseId) -> Result<(), String> {
        for names in exercise.exercise().launches {
            let launches: Vec<&Call> = self
                .calls
                .iter()
                .filter(|c| {
                    c.is_launch() && c.kernel.as_deref().is_some_and(|k| names.contains(&k))
                })
                .collect();
            let shown = names.join("` or `");
            if launches.is_empty() {
                return Err(format!(
                    "your program printed a result but never launched `{shown}`: the result \
                     must come from the kernel, launched with cuLaunchKernel (cust's launch!)"
                ));
            }
            if launches.iter().all(|c| c.result != 0) {
                return Err(format!(
                    "every launch of `{shown}` failed (the first with CUDA error {}): check \
                     the grid, the block and the kernel's arguments",
                    launches[0].result
                ));
            }
        }
        Ok(())
    }

    /// A copy from the GPU to the host succeeded after the last successful
    /// launch of the exercise's kernels: the result shown came back from
    /// the GPU after the kernel ran.
    pub fn copied_back(&self, exercise: ExerciseId) -> Result<(), String> {
        let names: Vec<&str> = exercise
            .exercise()
            .launches
            .iter()
            .flat_map(|k| k.iter().copied())
            .collect();
        let last_launch = self
            .calls
            .iter()
            .filter(|c| c.is_launch() && c.result == 0)
            .filter(|c| c.kernel.as_deref().is_some_and(|k| names.contains(&k)))
            .map(|c| c.seq)
            .max();
        let Some(last_launch) = last_launch else {
            return Err(format!(
                "no launch of `{}` succeeded, so no result can have come from it",
                names.join("`, `")
            ));
        };
        let back = self.calls.iter().any(|c| {
            c.seq > last_launch && c.result == 0 && c.direction == Some(Direction::DeviceToHost)
        });
        if back {
            Ok(())
        } else {
            Err(format!(
                "nothing was copied from the GPU to the host after the last launch of the \
                 kernel (driver call {last_launch}): the result your program reports did not \
                 come back from the GPU"
            ))
        }
    }

    /// streams-overlap's evidence: asynchronous copies to and from
    /// page-locked memory, each direction on at least two streams.
    pub fn overlapped_copies(&self) -> Result<(), String> {
        for (direction, what) in [
            (Direction::HostToDevice, "to the GPU"),
            (Direction::DeviceToHost, "back to the host"),
        ] {
            let copies: Vec<&Call> = self
                .calls
                .iter()
                .filter(|c| c.result == 0 && c.direction == Some(direction))
                .collect();
            let async_pinned: BTreeSet<u64> = copies
                .iter()
                .filter(|c| c.is_async() && c.pinned == Some(true))
                .filter_map(|c| c.stream)
                .filter(|&stream| stream != 0)
                .collect();
            if async_pinned.len() >= 2 {
                continue;
            }
            let pageable = copies.iter().filter(|c| c.pinned == Some(false)).count();
            let synchronous = copies.iter().filter(|c| !c.is_async()).count();
            return Err(if pageable > 0 {
                format!(
                    "{pageable} of the copies {what} used pageable host memory, which the GPU \
                     cannot copy while it computes: allocate the host buffers page-locked \
                     (cust's LockedBuffer, cuMemAllocHost)"
                )
            } else if synchronous > 0 && async_pinned.is_empty() {
                format!(
                    "the copies {what} were synchronous: queue them with the asynchronous \
                     copies (async_copy_from / async_copy_to) on each chunk's stream"
                )
            } else {
                format!(
                    "asynchronous copies {what} from page-locked memory ran on {} stream(s), \
                     not at least two: queue each chunk's copies on the chunk's own stream",
                    async_pinned.len()
                )
            });
        }
        Ok(())
    }
}

/// One record.
fn parse_line(line: &str) -> Result<Call, String> {
    let mut words = line.split_whitespace();
    let mut next = |what: &str| words.next().ok_or_else(|| format!("no {what}"));
    let seq = number(next("sequence number")?, "sequence number")?;
    let pid = number(next("process id")?, "process id")?;
    let name = next("call")?.to_owned();
    let result = number(next("result")?, "result")?;
    let mut call = Call {
        seq,
        pid: u32::try_from(pid).map_err(|_| format!("process id {pid} is too large"))?,
        name,
        result: u32::try_from(result).map_err(|_| format!("result {result} is too large"))?,
        stream: None,
        bytes: None,
        direction: None,
        pinned: None,
        kernel: None,
    };
    for field in words {
        let (key, value) = field
            .split_once('=')
            .ok_or_else(|| format!("{field:?} is not key=value"))?;
        match key {
            "stream" => call.stream = Some(hex(value)?),
            "bytes" => call.bytes = Some(number(value, "bytes")?),
            "dir" => {
                call.direction = Some(match value {
                    "htod" => Direction::HostToDevice,
                    "dtoh" => Direction::DeviceToHost,
                    "dtod" => Direction::DeviceToDevice,
                    other => return Err(format!("dir={other} is not htod, dtoh or dtod")),
                })
            }
            "pinned" => {
                call.pinned = Some(match value {
                    "1" => true,
                    "0" => false,
                    other => return Err(format!("pinned={other} is not 0 or 1")),
                })
            }
            "kernel" => call.kernel = Some(value.to_owned()),
            // grid, block, host, event: details for a person reading it.
            _ => {}
        }
    }
    Ok(call)
}

fn number(text: &str, what: &str) -> Result<u64, String> {
    text.parse()
        .map_err(|_| format!("{what} {text:?} is not a number"))
}

fn hex(text: &str) -> Result<u64, String> {
    text.strip_prefix("0x")
        .and_then(|digits| u64::from_str_radix(digits, 16).ok())
        .ok_or_else(|| format!("{text:?} is not a 0x handle"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trace of process 7 from `body`, one record per line with the
    /// sequence numbers and pid filled in.
    fn trace(body: &[&str]) -> Trace {
        let text: String = body
            .iter()
            .enumerate()
            .map(|(seq, line)| format!("{seq} 7 {line}\n"))
            .collect();
        Trace::parse(&format!("# cuda-course-trace 1\n{text}"), 7).unwrap()
    }

    const DOT_RUN: &[&str] = &[
        "cuModuleGetFunction 0 kernel=dot",
        "cuMemcpyHtoD_v2 0 stream=0x0 bytes=4000 dir=htod pinned=0",
        "cuLaunchKernel 0 stream=0x5a kernel=dot grid=4,1,1 block=256,1,1",
        "cuMemcpyDtoH_v2 0 stream=0x0 bytes=16 dir=dtoh pinned=0",
    ];

    #[test]
    fn a_run_that_launched_and_copied_back_passes() {
        let t = trace(DOT_RUN);
        assert_eq!(t.calls.len(), 4);
        assert_eq!(t.calls[3].direction, Some(Direction::DeviceToHost));
        assert_eq!(t.calls[2].stream, Some(0x5a));
        assert_eq!(t.launched(ExerciseId::DotSm), Ok(()));
        assert_eq!(t.copied_back(ExerciseId::DotSm), Ok(()));
    }

    #[test]
    fn a_result_without_a_launch_says_which_kernel_is_missing() {
        let t = trace(&[DOT_RUN[0], DOT_RUN[1], DOT_RUN[3]]);
        let err = t.launched(ExerciseId::DotGm).unwrap_err();
        assert!(err.contains("never launched `dot`"), "{err}");
        assert!(
            t.copied_back(ExerciseId::DotGm)
                .unwrap_err()
                .contains("no launch")
        );
        // Another exercise's kernel is not this one's.
        let err = trace(DOT_RUN).launched(ExerciseId::VecaddAnyN).unwrap_err();
        assert!(err.contains("`vecadd`"), "{err}");
    }

    #[test]
    fn failed_launches_do_not_count() {
        let t = trace(&[
            "cuLaunchKernel 1 stream=0x0 kernel=dot grid=0,1,1 block=256,1,1",
            "cuMemcpyDtoH_v2 0 stream=0x0 bytes=16 dir=dtoh pinned=0",
        ]);
        let err = t.launched(ExerciseId::DotAtomic).unwrap_err();
        assert!(err.contains("CUDA error 1"), "{err}");
        assert!(t.copied_back(ExerciseId::DotAtomic).is_err());
    }

    #[test]
    fn a_copy_back_before_the_last_launch_is_not_the_result() {
        let t = trace(&[DOT_RUN[0], DOT_RUN[3], DOT_RUN[2]]);
        let err = t.copied_back(ExerciseId::DotSm).unwrap_err();
        assert!(err.contains("after the last launch"), "{err}");
        // A failed copy back does not count either.
        let failed = trace(&[
            DOT_RUN[2],
            "cuMemcpyDtoH_v2 700 stream=0x0 bytes=16 dir=dtoh pinned=0",
        ]);
        assert!(failed.copied_back(ExerciseId::DotSm).is_err());
    }

    #[test]
    fn every_exercise_s_kernels_are_the_solution_s_kernels() {
        let course = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for exercise in kernels::catalogue::EXERCISES {
            let needs = exercise.launches;
            assert!(!needs.is_empty(), "{}", exercise.name);
            let cu = course
                .join("solutions")
                .join(exercise.name)
                .join("src/kernel.cu");
            let source = std::fs::read_to_string(&cu).unwrap();
            for name in needs.iter().flat_map(|k| k.iter()) {
                assert!(
                    source.contains(&format!("__global__ void {name}(")),
                    "{}: no kernel {name}",
                    cu.display()
                );
            }
        }
    }

    #[test]
    fn memspace_needs_all_four_kernels_and_matmul_tiled_either_tile() {
        let three: Vec<String> = ["sum_global", "sum_constant", "sum_register"]
            .iter()
            .map(|k| format!("cuLaunchKernel 0 stream=0x0 kernel={k}"))
            .collect();
        let three: Vec<&str> = three.iter().map(String::as_str).collect();
        let err = trace(&three)
            .launched(ExerciseId::MemspaceTiming)
            .unwrap_err();
        assert!(err.contains("`sum_shared`"), "{err}");
        let tiled = trace(&["cuLaunchKernel 0 stream=0x0 kernel=matmul_tiled_32"]);
        assert_eq!(tiled.launched(ExerciseId::MatmulTiled), Ok(()));
    }

    /// streams-overlap's copies: `pinned` and `async` for every copy, on
    /// streams 0xa and 0xb.
    fn streams_run(pinned: u8, copy: &str) -> Trace {
        let lines: Vec<String> = [0xa, 0xb, 0xa, 0xb]
            .iter()
            .flat_map(|stream| {
                [
                    format!(
                        "cuMemcpyHtoD{copy} 0 stream={stream:#x} bytes=64 dir=htod pinned={pinned}"
                    ),
                    format!("cuLaunchKernel 0 stream={stream:#x} kernel=transform"),
                    format!(
                        "cuMemcpyDtoH{copy} 0 stream={stream:#x} bytes=64 dir=dtoh pinned={pinned}"
                    ),
                ]
            })
            .collect();
        trace(&lines.iter().map(String::as_str).collect::<Vec<_>>())
    }

    #[test]
    fn streams_overlap_needs_pinned_async_copies_on_two_streams() {
        let good = streams_run(1, "Async_v2");
        assert_eq!(good.overlapped_copies(), Ok(()));
        assert_eq!(good.launched(ExerciseId::StreamsOverlap), Ok(()));
        assert_eq!(good.copied_back(ExerciseId::StreamsOverlap), Ok(()));

        let err = streams_run(0, "Async_v2").overlapped_copies().unwrap_err();
        assert!(err.contains("pageable"), "{err}");
        let err = streams_run(1, "_v2").overlapped_copies().unwrap_err();
        assert!(err.contains("synchronous"), "{err}");

        // Everything on one stream.
        let one = trace(&[
            "cuMemcpyHtoDAsync_v2 0 stream=0xa bytes=64 dir=htod pinned=1",
            "cuMemcpyDtoHAsync_v2 0 stream=0xa bytes=64 dir=dtoh pinned=1",
        ]);
        let err = one.overlapped_copies().unwrap_err();
        assert!(err.contains("1 stream(s)"), "{err}");
    }

    #[test]
    fn other_processes_are_left_out_and_order_is_by_sequence() {
        let text = "# cuda-course-trace 1\n\
                    5 7 cuMemcpyDtoH_v2 0 stream=0x0 bytes=4 dir=dtoh pinned=0\n\
                    1 7 cuLaunchKernel 0 stream=0x0 kernel=dot grid=1,1,1 block=1,1,1\n\
                    2 99 cuLaunchKernel 0 stream=0x0 kernel=vecadd\n";
        let t = Trace::parse(text, 7).unwrap();
        assert_eq!(t.calls.iter().map(|c| c.seq).collect::<Vec<_>>(), [1, 5]);
        assert_eq!(t.copied_back(ExerciseId::DotGm), Ok(()));
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
        assert!(err.contains("still holds it"), "{err}");
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
                err.contains("line 1") && err.contains(says),
                "{text}: {err}"
            );
        }
    }
}
