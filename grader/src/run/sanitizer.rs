//! The memory-safety point's tools: compute-sanitizer's memcheck
//! (out-of-bounds and misaligned accesses), racecheck (shared-memory
//! hazards), initcheck (reads of global memory nothing wrote) and synccheck
//! (barriers and warp syncs used wrongly), each over one planned run of the
//! kernel in the course's host code. A tool is clean only when it reports
//! nothing: racecheck's hazards of every severity count, its warnings (a
//! race inside a warp, say) as much as its errors. The feedback quotes the
//! first finding with its `kernel.cu` line, and each tool's wall time is
//! recorded for the throughput budget. A passing run may hide any of them:
//! an access one past the end lands in allocation padding, a missing
//! barrier races and still sums right most of the time.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use kernels::batch;
use kernels::catalogue::ExerciseId;
use kernels::exit_code::Exit;

use crate::confine::runner::{self, Ended, Limits, Outcome};
use crate::confine::sandbox::{Extras, Isolation};
use crate::plan::runs::Tag;
use crate::record::outcome::Tool;
use crate::record::results::Sanitized;
use crate::run::batch::BatchFile;
use crate::run::budget;
use crate::run::gate::GateEnd;
use crate::run::lane::{Ending, ExerciseLane, Use};

/// The tools run, in order.
pub const TOOLS: [Tool; 4] = [
    Tool::Memcheck,
    Tool::Racecheck,
    Tool::Initcheck,
    Tool::Synccheck,
];

/// Why `tool` can find nothing in `exercise`'s kernel whose PTX is `ptx`,
/// or None where it may. racecheck watches shared memory only, and
/// synccheck only barriers and warp-synchronous instructions (`bar.sync`,
/// `barrier`, `bar.warp.sync`, `shfl.sync`, `vote.sync` and the like): a
/// kernel whose PTX says neither `.shared` nor, for synccheck, `bar` or
/// `.sync` anywhere, inline assembly and names included, gives them
/// nothing to look at. On an H200, graded one at a time, the two took 12.4
/// s of the solutions' 54.2 s of tools over the four exercises whose
/// kernels are so (vecadd-anyN, dot-gm, matmul-naive, streams-overlap).
///
/// initcheck watches global memory only: reads of bytes that no copy,
/// memset or store wrote. Tried on an H200 (compute-sanitizer 2025.3.1,
/// `bench/probes/initcheck-probe.sh`), it reports a read of a buffer
/// `cudaMalloc` left unwritten and of memory a kernel's `malloc` returned,
/// and nothing for a read of shared memory no thread wrote (static or
/// dynamic) or of a `__device__` array never written (modules start
/// zeroed). The course's host code, which the tools run the kernel in,
/// writes every byte of every buffer it allocates before any launch
/// (`zeroed`, `from_slice`; the test `the_course_s_host_code_writes_every_buffer_it_allocates`
/// holds it to that), so the only global memory a kernel can read unwritten
/// is memory it allocates itself: `malloc`, `new` (which nvcc makes a
/// `malloc` call), `cudaMalloc` through the device runtime. A kernel whose
/// PTX never says `malloc`, in any case, gives initcheck nothing to find.
/// It was the costliest tool but racecheck over every kernel: 0.82 to 0.90
/// s a process over two runs alone, against memcheck's 0.45 to 0.48.
///
/// Threat model: the PTX is the student's, and a tool not run can only
/// find nothing, so the question is whether a kernel could hide a hazard
/// from this test. Every PTX instruction or declaration that reaches
/// shared memory names the state space (`.shared`, `cvta.shared`,
/// `ld.shared`, `.extern .shared`), and every barrier or warp-synchronous
/// instruction has `bar` or `.sync` in its name. What is left is a generic
/// address made up as an integer inside the shared window: where the
/// course's launch gives the kernel no shared memory any such access is
/// out of bounds, which memcheck reports; where it gives dynamic shared
/// memory ([`launch_gives_shared_memory`]: dot-sm, dot-atomic) racecheck
/// always runs. For initcheck: a kernel cannot take global memory from the
/// device heap without calling `malloc` by that name (the JIT resolves
/// only that extern to the heap's allocator, and `new` and the device
/// runtime's `cudaMalloc` say it too), and reading memory the course
/// allocated and never wrote needs the course's host code to leave a
/// buffer unwritten, which its test forbids. A read past a buffer's end,
/// into padding or another allocation, is memcheck's, which always runs.
/// The text test reads more than the instructions (comments, names, debug
/// strings), so it errs toward running a tool.
pub fn not_needed(tool: Tool, ptx: &str, exercise: ExerciseId) -> Option<&'static str> {
    match tool {
        Tool::Racecheck if !ptx.contains(".shared") && !launch_gives_shared_memory(exercise) => {
            Some("the kernel's PTX uses no shared memory, the only memory racecheck watches")
        }
        Tool::Synccheck if !ptx.contains("bar") && !ptx.contains(".sync") => Some(
            "the kernel's PTX has no barrier and no warp-synchronous instruction, all that \
             synccheck checks",
        ),
        Tool::Initcheck if !ptx.to_ascii_lowercase().contains("malloc") => Some(
            "the kernel's PTX allocates no memory (no malloc), and every buffer the course's \
             host code gives it is written before the launch, so no global memory it reads \
             is left unwritten",
        ),
        _ => None,
    }
}

/// Whether the course's host code, which the tools run the student's
/// kernel in, launches `exercise`'s kernel with dynamic shared memory (the
/// third value in `<<< >>>`): dot-sm's and dot-atomic's, whose reductions
/// take a float a thread.
pub fn launch_gives_shared_memory(exercise: ExerciseId) -> bool {
    matches!(exercise, ExerciseId::DotSm | ExerciseId::DotAtomic)
}

/// One planned run the tools go over: its tag, its arguments (made once;
/// the tools' cut of the run where they go over fewer of its elements,
/// with how many: `plan::runs::Params::sanitized`), racecheck's instead
/// where it goes over a few of the run's blocks, with how many
/// (`plan::runs::Params::racechecked`), and how long the kernel's plain run
/// of it took (None where it was not made), from which a tool's limit
/// follows ([`tool_limit`]).
pub struct ToolRun {
    pub tag: Tag,
    pub args: Vec<String>,
    pub elements: Option<u64>,
    pub racechecked: Option<(Vec<String>, u32)>,
    pub plain: Option<Duration>,
}

/// What a tool's process is given whatever its runs took plain: its start
/// and the course's host code under it, a context the driver makes one at
/// a time across the machine (memcheck 0.5 s a process alone on an H200,
/// 5.8 s beside 15 others), and racecheck over memspace-timing's few
/// blocks, 13 s a run beside 15 others (`plan::memspace`).
pub const TOOL_FLOOR: Duration = Duration::from_secs(30);

/// How many times its runs' plain time a tool's process is given besides:
/// the tools slow a kernel down many times (racecheck over one 1024-thread
/// block 1.4 s a launch, where a whole plain process takes 0.4 s).
pub const TOOL_TIMES: u32 = 20;

/// The limit of a tool's process over runs that took `plain` in all
/// without the tool (None: not known), within a grading whose timeout is
/// `timeout`: [`TOOL_FLOOR`] and [`TOOL_TIMES`] the plain time, and never
/// more than ten times the timeout (all it had before the plain time
/// counted). Threat model: a kernel that hangs only under a tool (it can
/// time itself, or look for the tool's instrumentation) holds every run
/// waiting to be alone for as long as its tool's process runs; so that is
/// what an honest kernel of the same plain speed would be given, not ten
/// timeouts, and it is never made again ([`sanitize`]). A kernel that
/// slows its plain runs down to earn a longer limit pays for it in those
/// runs, its own.
pub fn tool_limit(timeout: Duration, plain: Option<Duration>) -> Duration {
    let cap = timeout * 10;
    match plain {
        Some(plain) => (TOOL_FLOOR + plain * TOOL_TIMES).min(cap),
        None => cap,
    }
}

impl ToolRun {
    /// The arguments `tool` goes over, and how many blocks where not all.
    fn for_tool(&self, tool: Tool) -> (&[String], Option<u32>) {
        match &self.racechecked {
            Some((args, blocks)) if tool == Tool::Racecheck => (args, Some(*blocks)),
            _ => (&self.args, None),
        }
    }
}

/// Runs each tool over `binary` at each of `runs` (the grader passes the
/// course's reference binary with the student's PTX among `files`, so the
/// findings are the kernel's); the records in the runs' order, each run's
/// tools in [`TOOLS`]' order. A tool in `left_out`, which can find nothing
/// in the kernel ([`not_needed`]), is not run, and is recorded clean with
/// why. Each process's limit follows its runs' plain time ([`tool_limit`],
/// from `limits.timeout`). A tool that runs out of time stands as it is
/// and costs the memory-safety point: it is never made again alone, and
/// the tools after it are not run (recorded not clean, with why), since
/// nothing they find could give the point back.
///
/// Each tool first goes over all the runs in one process of the course's
/// binary (`kernels::batch`): what a tool process costs is mostly its
/// start, a context the driver makes one at a time across the machine
/// (on an H200, 64 memcheck runs from 16 workers took 5.8 s a process a
/// run and 3.0 s two runs a process, `bench/runs/2026-11-29-h200-tools-in-one-process`). That
/// process stands where the tool found nothing and every run of the batch
/// was made and passed or failed its check, and where it ran out of time;
/// anything else (a finding, a run the batch never made or that stopped on
/// a CUDA error, a tool that could not start, a kernel's `printf` among
/// the frames) is answered by a process a run, exactly as without
/// batches, so every finding is a process of its own's. Threat model: the frames that say every run was
/// made carry the batch's nonce, which the student's kernel cannot read
/// (`kernels::batch`); the summary is the tool's last (`judge`), printed
/// after the program ended; and each run of the batch loads its module and
/// allocates its buffers afresh, freeing them before the next, so a clean
/// process is each run's clean process: the tools track each allocation
/// and each launch, not the process. What can differ is where the second
/// run's buffers lie once the first run's are freed: an access that lands
/// inside another of the run's own live buffers is unseen in any process,
/// and which buffer a wild offset lands in depends on that layout. So a
/// batch could hide a finding only from a kernel that reaches past its
/// buffers by far (memcheck checks each allocation's exact size, so an
/// access just past an end is found wherever the next buffer lies), and
/// can never give one to a correct kernel.
///
/// A tool that goes over a cut of a run (racecheck over memspace-timing's
/// blocks, `plan::runs::Params::racechecked`) goes a process a run from
/// the start. Its cost is the kernel's time under the tool, 1.4 s a launch
/// of one block, where a whole plain process takes 0.4 s, and the processes share
/// the GPU in turns, so several of them hold it for their whole time: four
/// such processes over both runs, 26 s each at `--jobs 16`, kept the last
/// speed runs waiting to be alone up to 19 s, and every tool asked
/// meanwhile with them (an H200, 2026-11-29, `bench/runs/2026-11-29-h200-memspace-racecheck`). A
/// process a run halves that longest share.
pub fn sanitize(
    isolation: &Isolation,
    lane: ExerciseLane,
    binary: &Path,
    runs: &[ToolRun],
    files: &[(&str, &Path)],
    left_out: &[(Tool, &str)],
    limits: Limits,
) -> Vec<Sanitized> {
    // Found here, so that the sandbox can be given its absolute path.
    let program = std::env::var_os("COMPUTE_SANITIZER")
        .map(std::path::PathBuf::from)
        .or_else(|| crate::confine::sandbox::on_path("compute-sanitizer"))
        .unwrap_or_else(|| "compute-sanitizer".into());
    let tools = Tools {
        program: &program.to_string_lossy(),
        isolation,
        lane,
        binary,
        files,
        limits,
    };
    tools.over(runs, left_out)
}

/// compute-sanitizer (`program`) over the course's `binary`: what every
/// tool's runs share; `limits` the grading's, from which each process's
/// follows ([`tool_limit`]).
struct Tools<'a> {
    program: &'a str,
    isolation: &'a Isolation,
    lane: ExerciseLane<'a>,
    binary: &'a Path,
    files: &'a [(&'a str, &'a Path)],
    limits: Limits,
}

impl Tools<'_> {
    /// [`sanitize`]'s records.
    fn over(&self, runs: &[ToolRun], left_out: &[(Tool, &str)]) -> Vec<Sanitized> {
        let takes = takes_of(self.program);
        let mut by_tool: Vec<Vec<Sanitized>> = Vec::new();
        // The tool that ran out of time, after which none is run.
        let mut ran_out: Option<Tool> = None;
        for &tool in &TOOLS {
            let not_run = |why: String, clean: bool| -> Vec<Sanitized> {
                runs.iter()
                    .map(|run| Sanitized {
                        clean,
                        summary: format!("not run: {why}"),
                        run: Some(run.tag),
                        not_run: Some(why.clone()),
                        ..judge(tool, &Ended::Exited(0), "", Duration::ZERO)
                    })
                    .collect()
            };
            let records = if let Some(earlier) = ran_out {
                let why = format!(
                    "{earlier} ran out of time, which costs the point; nothing this tool \
                     found could give it back"
                );
                not_run(why, false)
            } else if let Some((_, why)) = left_out.iter().find(|(t, _)| *t == tool) {
                not_run((*why).to_owned(), true)
            } else {
                self.made(tool, runs, takes)
            };
            if records.iter().any(|r| r.out_of_time) {
                ran_out = ran_out.or(Some(tool));
            }
            by_tool.push(records);
        }
        (0..runs.len())
            .flat_map(|k| by_tool.iter().map(move |records| records[k].clone()))
            .collect()
    }

    /// `tool`'s records over `runs`: in one process where that stands, else
    /// a process a run.
    fn made(&self, tool: Tool, runs: &[ToolRun], takes: Takes) -> Vec<Sanitized> {
        let wrapper = wrapper(self.program, tool, takes);
        let wrapper: Vec<&str> = wrapper.iter().map(String::as_str).collect();
        // Over a cut of a run, a process a run ([`sanitize`]).
        let cut = runs.iter().any(|run| run.for_tool(tool).1.is_some());
        if runs.len() > 1 && !cut {
            if let Some(records) = self.in_one_process(tool, &wrapper, runs) {
                return records;
            }
        }
        runs.iter()
            .map(|run| self.alone(tool, &wrapper, run))
            .collect()
    }

    /// The limits of a process over `runs`: its time follows their plain
    /// time ([`tool_limit`]).
    fn limits_over(&self, runs: &[&ToolRun]) -> Limits {
        let plain = runs.iter().map(|run| run.plain).sum::<Option<Duration>>();
        Limits {
            timeout: tool_limit(self.limits.timeout, plain),
            ..self.limits
        }
    }

    /// One process of `wrapper` (the tool) over the binary with `args` and
    /// `files`, within `limits`, and its wall time. Never gated: the tools
    /// judge no time; one work queue, as they judge no overlap either.
    fn process(
        &self,
        args: &[&str],
        wrapper: &[&str],
        files: &[(&str, &Path)],
        limits: Limits,
    ) -> (Outcome, f64) {
        let started = Instant::now();
        let outcome = runner::run_command(
            self.isolation.run_command_with(
                self.binary,
                args,
                wrapper,
                Extras {
                    files,
                    ..Extras::default()
                },
            ),
            limits,
        );
        (outcome, started.elapsed().as_secs_f64())
    }

    /// `tool` over every run in one process, where it found nothing and
    /// every run was made and passed or failed the check (a run that
    /// stopped on a CUDA error, or before its kernel, may not have been
    /// checked at all); None where each run is to have a process. A
    /// process that ran out of time stands, for every run: a process a run
    /// after it would hold the GPU for as long again, each run, a long
    /// share every run waiting to be alone waits behind.
    fn in_one_process(
        &self,
        tool: Tool,
        wrapper: &[&str],
        runs: &[ToolRun],
    ) -> Option<Vec<Sanitized>> {
        // `--json`: each run's report on its frame's one line.
        let lines: Vec<Vec<String>> = runs
            .iter()
            .map(|run| {
                let mut line = run.for_tool(tool).0.to_vec();
                line.push("--json".into());
                line
            })
            .collect();
        let file = BatchFile::write(&lines)?;
        let mut files = self.files.to_vec();
        files.push((batch::VARIABLE, file.path.as_path()));
        // One try, shared: whatever it could not show, a process a run does.
        let limits = self.limits_over(&runs.iter().collect::<Vec<_>>());
        let (outcome, seconds) =
            self.lane
                .lane
                .run_as("compute-sanitizer", Use::SharedLong, |_| {
                    self.process(&[], wrapper, &files, limits)
                });
        let verdict = judged(tool, &outcome, limits);
        let frames = batch::read(
            &file.nonce,
            runs.len(),
            &without_tool_lines(&outcome.stdout),
            &without_tool_lines(&outcome.stderr),
        );
        let made =
            frames.len() == runs.len() && frames.iter().all(|f| Exit::reached_the_check(f.exit));
        let timed_out = outcome.ended == Ended::TimedOut;
        if !(verdict.clean && made || timed_out) {
            return None;
        }
        Some(
            runs.iter()
                .map(|run| Sanitized {
                    run: Some(run.tag),
                    blocks: run.for_tool(tool).1,
                    elements: run.elements,
                    in_one_process: true,
                    seconds: seconds / runs.len() as f64,
                    ..verdict.clone()
                })
                .collect(),
        )
    }

    /// `tool` over `run` in a process of its own.
    fn alone(&self, tool: Tool, wrapper: &[&str], run: &ToolRun) -> Sanitized {
        let (args, blocks) = run.for_tool(tool);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        // The tools share the GPU, for long (the GPU drains for a run
        // alone without waiting on them). A finding is the kernel's own
        // accesses, and so is running out of a limit that follows the
        // kernel's plain time: both stand. A tool that could not start or
        // was killed beside others runs again alone, within the exercise's
        // budget, with its whole limit.
        let limits = self.limits_over(&[run]);
        let (outcome, seconds) = self.lane.lane.run_confirmed(
            "compute-sanitizer",
            Use::SharedLong,
            self.lane.budget,
            (limits.timeout, true),
            |_: Option<GateEnd>, _| self.process(&args, wrapper, self.files, limits),
            |(outcome, _)| budget::Ended {
                ending: match outcome.ended {
                    Ended::DidNotStart(_) | Ended::Signalled(_) => Ending::Neighbours,
                    Ended::TimedOut | Ended::Exited(_) => Ending::Own,
                },
                failed_after: None,
            },
        );
        Sanitized {
            run: Some(run.tag),
            blocks,
            elements: run.elements,
            seconds,
            ..judged(tool, &outcome, limits)
        }
    }
}

/// `output` without compute-sanitizer's own lines (each starts with
/// `=========`), which it writes among the program's: what is left is the
/// batch's frames, or whatever else makes them unreadable.
fn without_tool_lines(output: &str) -> String {
    output
        .lines()
        .filter(|l| !l.starts_with("========="))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// What a compute-sanitizer's `--help` says it takes, of the options the
/// grader adds where it can: an option a tool does not know stops it, and
/// the point would be lost for every kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Takes {
    /// The option that leaves kernels out of the checks by name:
    /// `--kernel-name-exclude` in newer tools, `--kernel-regex-exclude` in
    /// 2022.3 (whose `--exclude` is deprecated), none in older ones.
    exclude: Option<&'static str>,
}

/// What `help` lists: an option is a line that starts with it.
fn takes(help: &str) -> Takes {
    let listed = |option: &str| {
        help.lines().any(|l| {
            l.trim_start()
                .strip_prefix(option)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '=']))
        })
    };
    Takes {
        exclude: ["--kernel-name-exclude", "--kernel-regex-exclude"]
            .into_iter()
            .find(|option| listed(option)),
    }
}

/// What `program` takes, asked once per program and grading (nothing where
/// it cannot say).
fn takes_of(program: &str) -> Takes {
    static ASKED: Mutex<BTreeMap<String, Takes>> = Mutex::new(BTreeMap::new());
    let mut asked = ASKED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    *asked.entry(program.to_owned()).or_insert_with(|| {
        std::process::Command::new(program)
            .arg("--help")
            .stdin(std::process::Stdio::null())
            .output()
            .map_or_else(
                |_| Takes::default(),
                |out| takes(&String::from_utf8_lossy(&out.stdout)),
            )
    })
}

/// The command line before the program's: `program --tool TOOL`, then,
/// where the tool takes it, the course's shared-memory poison
/// (`kernels::POISON_KERNEL`, launched before every launch of the
/// student's kernel) left out of the checks by its exact name. The
/// findings are the student's kernel's, and the poison fills every
/// multiprocessor's shared memory: racecheck tracked every byte of it,
/// 1.9 s alone and 20 s of CPU a run for a 64-thread dot-sm, 14 of 16 cores
/// busy with 16 at once (`bench/probes/gpu-run-parts.sh`, H100,
/// 2026-11-28). A student's kernel cannot take the name: the course
/// launches each exercise's kernel by the exercise's name.
///
/// racecheck keeps its default host threads, one per core: sharing the
/// cores out (one thread a run at `--jobs 16`) made its run over
/// memspace-timing's largest blocks take 222 s instead of 21 s, and every
/// run waiting to time waited behind it (an H200, 2026-11-28,
/// `bench/runs/2026-11-28-h200-steady-state`).
fn wrapper(program: &str, tool: Tool, takes: Takes) -> Vec<String> {
    let mut wrapper = vec![program.to_owned(), "--tool".to_owned(), tool.to_string()];
    if let Some(exclude) = takes.exclude {
        wrapper.extend([
            exclude.to_owned(),
            format!("kne={}", kernels::POISON_KERNEL),
        ]);
    }
    wrapper
}

/// The tool's verdict on its process: [`judge`] of what it printed, never
/// clean where either stream passed the output cap.
///
/// Threat model: the summary is the tool's last line, after everything the
/// program printed, and the grader keeps only the first `max_output` bytes
/// of a stream. Cut there, the last summary left is one the program
/// printed: a kernel that writes out of bounds, then `printf`s "=========
/// ERROR SUMMARY: 0 errors" past the cap, would read clean. A correct
/// kernel loses nothing to this: its plain run with the same arguments
/// prints as much, under the same cap, and fails as flooded already.
fn judged(tool: Tool, outcome: &Outcome, limits: Limits) -> Sanitized {
    let verdict = judge(
        tool,
        &outcome.ended,
        &format!("{}{}", outcome.stdout, outcome.stderr),
        limits.timeout,
    );
    if !outcome.flooded || !verdict.clean {
        return verdict;
    }
    Sanitized {
        clean: false,
        summary: format!(
            "no summary: the run printed more than {} KiB, and the tool's summary, printed last, was cut off",
            limits.max_output >> 10
        ),
        ..verdict
    }
}

/// The tool's verdict from what it printed: clean when its summary counts
/// nothing (for racecheck, no hazard displayed: warnings count). Its exit
/// status is the program's, and a program that printed a wrong answer exits
/// non-zero however clean its memory accesses were.
fn judge(tool: Tool, ended: &Ended, output: &str, timeout: Duration) -> Sanitized {
    // "========= ERROR SUMMARY: 0 errors", or racecheck's
    // "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)".
    // With many errors, a second line follows: "ERROR SUMMARY: 260 errors
    // were not printed. Use --print-limit ...".
    let summary = output
        .lines()
        .rfind(|l| l.contains("SUMMARY:") && !l.contains("not printed"))
        .map(tool_line);
    // Without a summary, the tool's own last word says why, e.g. a program
    // that ended before its first CUDA call.
    let last_said = output
        .lines()
        .rfind(|l| l.starts_with("========= ") && !tool_line(l).is_empty())
        .map(tool_line)
        // Or, where the tool itself could not start (a library it could
        // not load, a folder it could not write), the last line printed.
        .or_else(|| {
            output
                .lines()
                .rfind(|l| !l.trim().is_empty())
                .map(|l| l.trim().chars().take(240).collect::<String>())
        });
    // racecheck's "N hazards displayed (E errors, W warnings)": any hazard,
    // a warning included, is a finding.
    let no_errors = |line: &str| {
        line.contains("SUMMARY: 0 errors") || line.contains("SUMMARY: 0 hazards displayed")
    };
    let (clean, summary) = match (ended, summary) {
        (Ended::DidNotStart(why), _) => (
            false,
            format!("compute-sanitizer could not be started: {why}"),
        ),
        (Ended::TimedOut, _) => (
            false,
            format!("did not finish within {} s", timeout.as_secs()),
        ),
        (_, Some(line)) => (no_errors(&line), line),
        (_, None) => (
            false,
            match last_said {
                Some(said) => format!("no summary: the tool did not check the run ({said})"),
                None => "no summary: the tool did not check the run".to_owned(),
            },
        ),
    };
    // The tool's lines, among which a kernel's printf can put its own.
    let (summary, finding) = (
        crate::bounded::text(&summary),
        (!clean)
            .then(|| first_finding(output))
            .flatten()
            .map(|f| crate::bounded::text(&f)),
    );
    Sanitized {
        tool,
        clean,
        summary,
        finding,
        run: None,
        blocks: None,
        elements: None,
        not_run: None,
        in_one_process: false,
        out_of_time: *ended == Ended::TimedOut,
        seconds: 0.0,
    }
}

/// The tool's first report of a hazard, with the `kernel.cu` line it names
/// (nvcc's `-lineinfo` puts the source lines in the PTX), e.g. "Invalid
/// __global__ write of size 4 bytes (kernel.cu:27)".
fn first_finding(output: &str) -> Option<String> {
    let lines: Vec<String> = output
        .lines()
        .filter(|l| l.starts_with("========="))
        .map(tool_line)
        .collect();
    // memcheck's "Invalid ...", racecheck's "Error:"/"Warning:" (or the
    // hazard report's "ERROR: Potential ..."), initcheck's "Uninitialized
    // ...", synccheck's "Barrier error ...", a hardware exception's
    // "Program hit ...".
    const HEADLINES: [&str; 6] = [
        "invalid",
        "error",
        "warning",
        "program hit",
        "uninitialized",
        "barrier error",
    ];
    let at = lines.iter().position(|l| {
        let lower = l.to_ascii_lowercase();
        HEADLINES.iter().any(|h| lower.starts_with(h)) && !l.contains("SUMMARY")
    })?;
    let mut headline = lines[at].trim_end_matches(':').trim_end();
    // Without the place's address and the grader's build path.
    if let Some((head, _)) = headline
        .split_once(" at ")
        .filter(|_| headline.contains("kernel.cu:"))
    {
        headline = head;
    }
    // The source line follows within the finding's own lines ("at ... in
    // /build/.../src/kernel.cu:27"); racecheck names it in the headline.
    let place = lines[at..].iter().take(6).find_map(|l| kernel_line(l));
    Some(match place {
        Some(line) => format!("{headline} (kernel.cu:{line})"),
        None => headline.to_owned(),
    })
}

/// The line number after the first "kernel.cu:" in `text`.
fn kernel_line(text: &str) -> Option<u32> {
    let (_, rest) = text.split_once("kernel.cu:")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// A line of the tool's, without its "=========" prefix.
fn tool_line(line: &str) -> String {
    line.trim_start_matches('=').trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    const T: Duration = Duration::from_secs(1);

    /// compute-sanitizer 2022.3's `--help` (CUDA 11.8), the lines that
    /// matter, as it prints them.
    const HELP_2022_3: &str = "\
  --exclude arg                         key1=val1,key2=val2,...
  --kernel-regex arg                    key1=val1,key2=val2,...
  --kernel-regex-exclude arg            key1=val1,key2=val2,...
Racecheck-specific options:
  --racecheck-detect-level arg (=warn)  <info|warn|error> Set the minimum level of race conditions to detect.
  --racecheck-num-workers arg (=0)      Number of CPU worker threads used by the tool. Use 0 for automatic
";

    #[test]
    fn only_the_tools_that_can_find_something_in_the_kernel_are_run() {
        // The solutions' PTX as nvcc 13 writes it (brought back from the
        // GPU machine): shared memory and barriers exactly where the
        // exercise is about them.
        let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/../emulator/tests/ptx/nvcc13");
        let mut seen = 0;
        for exercise in kernels::catalogue::EXERCISES {
            let id = ExerciseId::from_name(exercise.name).unwrap();
            let ptx = std::fs::read_to_string(format!("{folder}/{}.ptx", exercise.name)).unwrap();
            let shares = matches!(
                exercise.name,
                "dot-sm" | "dot-atomic" | "matmul-tiled" | "memspace-timing"
            );
            for tool in TOOLS {
                let needed = match tool {
                    Tool::Racecheck | Tool::Synccheck => shares,
                    Tool::Memcheck => true,
                    // No solution allocates memory in its kernel.
                    Tool::Initcheck => false,
                };
                assert_eq!(
                    not_needed(tool, &ptx, id).is_none(),
                    needed,
                    "{} {tool}",
                    exercise.name
                );
            }
            seen += 1;
        }
        assert_eq!(seen, 8);
        // Each way a kernel reaches shared memory, or synchronizes, keeps
        // its tool, inline assembly included.
        let vecadd = std::fs::read_to_string(format!("{folder}/vecadd-anyN.ptx")).unwrap();
        let vecadd_id = ExerciseId::VecaddAnyN;
        let with = |line: &str| vecadd.replacen("\tret;", &format!("\t{line}\n\tret;"), 1);
        assert_ne!(with("x"), vecadd, "the PTX has a ret to insert before");
        for shared in [
            "ld.shared.f32 %f9, [%rd1];",
            "st.shared.u32 [%r1], %r2;",
            "cvta.shared.u64 %rd9, %rd1;",
            "atom.shared.add.u32 %r9, [%r1], 1;",
        ] {
            assert_eq!(
                not_needed(Tool::Racecheck, &with(shared), vecadd_id),
                None,
                "{shared}"
            );
        }
        let declared = vecadd.replacen(
            ".visible .entry",
            ".extern .shared .align 4 .b8 s[];\n.visible .entry",
            1,
        );
        assert_eq!(not_needed(Tool::Racecheck, &declared, vecadd_id), None);
        for sync in [
            "bar.sync 0;",
            "barrier.sync 0;",
            "bar.warp.sync -1;",
            "shfl.sync.idx.b32 %r9, %r1, 0, 31, -1;",
            "vote.sync.all.pred %p9, %p1, -1;",
            "match.any.sync.b32 %r9, %r1, -1;",
        ] {
            assert_eq!(
                not_needed(Tool::Synccheck, &with(sync), vecadd_id),
                None,
                "{sync}"
            );
        }
        // Each way a kernel takes memory of its own keeps initcheck: a
        // malloc call (nvcc makes `new` one), its declaration alone, the
        // aligned form and the device runtime's cudaMalloc.
        for allocates in [
            "call.uni (retval0), malloc, (param0);",
            "// .extern .func (.param .b64 func_retval0) malloc",
            "call.uni (retval0), __nv_aligned_device_malloc, (param0, param1);",
            "call.uni (retval0), cudaMalloc, (param0, param1);",
        ] {
            assert_eq!(
                not_needed(Tool::Initcheck, &with(allocates), vecadd_id),
                None,
                "{allocates}"
            );
        }
        // And without any of them, each is left out.
        let plain = with("add.s32 %r9, %r1, 1;");
        assert!(not_needed(Tool::Racecheck, &plain, vecadd_id).is_some());
        assert!(not_needed(Tool::Synccheck, &plain, vecadd_id).is_some());
        assert!(not_needed(Tool::Initcheck, &plain, vecadd_id).is_some());
        assert_eq!(not_needed(Tool::Memcheck, &plain, vecadd_id), None);
        // Where the launch gives shared memory, racecheck runs over any
        // kernel: one could reach it by an address it makes up.
        assert_eq!(not_needed(Tool::Racecheck, &plain, ExerciseId::DotSm), None);
        assert_eq!(
            not_needed(Tool::Racecheck, &plain, ExerciseId::DotAtomic),
            None
        );
    }

    #[test]
    fn the_course_s_host_code_writes_every_buffer_it_allocates() {
        // initcheck is left out of kernels that allocate nothing
        // (`not_needed`) because the course's host code, the solutions'
        // main.rs and the kernels crate, never gives a kernel memory it
        // did not write: every device allocation is cust's `zeroed` or
        // `from_slice`. Any call that allocates without writing, cust's or
        // the driver's, breaks that, except the copy probe's target, which
        // its first copy fills and which no kernel is given.
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        let unwritten = ["uninitialized", "cuda_malloc", "cuMemAlloc", "cuMemCreate"];
        let mut found = Vec::new();
        let mut files = 0;
        for folder in ["solutions", "kernels/src"] {
            for entry in walkdir::WalkDir::new(format!("{root}/{folder}")) {
                let entry = entry.unwrap();
                let path = entry.path();
                if path.extension().is_none_or(|ext| ext != "rs") {
                    continue;
                }
                files += 1;
                let text = std::fs::read_to_string(path).unwrap();
                for (number, line) in text.lines().enumerate() {
                    let code = line.split("//").next().unwrap();
                    if unwritten.iter().any(|call| code.contains(call)) {
                        let relative = path.strip_prefix(root).unwrap().display().to_string();
                        found.push(format!("{relative}:{}: {}", number + 1, line.trim()));
                    }
                }
            }
        }
        assert!(files > 30, "only {files} files read under {root}");
        let probe = "kernels/src/copy_probe.rs:";
        assert!(
            found.len() == 1 && found[0].starts_with(probe),
            "allocations left unwritten: {found:#?}"
        );
    }

    #[test]
    fn the_launches_that_give_shared_memory_are_the_course_s() {
        // The course's host code (the solutions' main.rs, which the
        // reference binary is built from): each launch's third value.
        for exercise in kernels::catalogue::EXERCISES {
            let id = ExerciseId::from_name(exercise.name).unwrap();
            let main = std::fs::read_to_string(format!(
                "{}/../solutions/{}/src/main.rs",
                env!("CARGO_MANIFEST_DIR"),
                exercise.name
            ))
            .unwrap();
            let thirds: Vec<String> = main
                .split("launch!(")
                .skip(1)
                .map(|launch| {
                    let inside =
                        &launch[launch.find("<<<").unwrap() + 3..launch.find(">>>").unwrap()];
                    // Split at top-level commas: (x, y) shapes hold commas.
                    let mut depth = 0;
                    let mut parts = vec![String::new()];
                    for ch in inside.chars() {
                        match ch {
                            '(' => depth += 1,
                            ')' => depth -= 1,
                            ',' if depth == 0 => {
                                parts.push(String::new());
                                continue;
                            }
                            _ => {}
                        }
                        parts.last_mut().unwrap().push(ch);
                    }
                    parts[2].trim().to_owned()
                })
                .collect();
            assert!(!thirds.is_empty(), "{}", exercise.name);
            let shares = thirds.iter().any(|third| third != "0");
            assert_eq!(
                shares,
                launch_gives_shared_memory(id),
                "{}: {thirds:?}",
                exercise.name
            );
        }
    }

    #[test]
    fn the_options_are_those_the_tool_lists() {
        let old = takes(HELP_2022_3);
        assert_eq!(
            old,
            Takes {
                exclude: Some("--kernel-regex-exclude")
            }
        );
        let newer = HELP_2022_3.replace("--kernel-regex-exclude arg", "--kernel-name-exclude arg");
        assert_eq!(takes(&newer).exclude, Some("--kernel-name-exclude"));
        // Neither: nothing added. A longer option, or one named in another
        // option's text, is not the option.
        let older =
            "  --kernel-regex-exclude-more arg\n  --filter arg  unlike --kernel-regex-exclude\n";
        assert_eq!(takes(older), Takes::default());
        for tool in TOOLS {
            assert_eq!(
                wrapper("/cs", tool, old),
                [
                    "/cs",
                    "--tool",
                    &tool.to_string(),
                    "--kernel-regex-exclude",
                    "kne=course_poison_shared"
                ]
            );
            assert_eq!(
                wrapper("/cs", tool, Takes::default()),
                ["/cs", "--tool", &tool.to_string()]
            );
        }
    }

    #[test]
    fn no_exercise_s_kernel_has_the_name_the_tools_leave_out() {
        // The exclusion is exact (kne=), so only a kernel of this very name
        // escapes the checks; the course launches every exercise's kernels
        // by the catalogue's names, so a student's kernel never has it.
        for id in kernels::catalogue::ALL_IDS {
            for names in id.exercise().launches {
                assert!(
                    !names.contains(&kernels::POISON_KERNEL),
                    "{id:?}: {names:?}"
                );
            }
        }
        assert!(
            wrapper("/cs", Tool::Racecheck, takes(HELP_2022_3))
                .contains(&format!("kne={}", kernels::POISON_KERNEL))
        );
    }

    #[test]
    #[cfg(unix)]
    fn the_tool_is_asked_its_help_and_one_that_cannot_say_is_given_nothing() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let script = |name: &str, help: &str| {
            let path = dir.path().join(name);
            let body = format!("#!/bin/sh\ncat <<'HELP'\n{help}HELP\n");
            std::fs::write(&path, body).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            path.to_string_lossy().into_owned()
        };
        assert_eq!(takes_of(&script("knows", HELP_2022_3)), takes(HELP_2022_3));
        assert_eq!(
            takes_of(&script("older", "  --print-limit arg\n")),
            Takes::default()
        );
        assert_eq!(takes_of("/nonexistent/compute-sanitizer"), Takes::default());
    }

    #[test]
    fn a_clean_summary_is_clean() {
        let memcheck = judge(
            Tool::Memcheck,
            &Ended::Exited(0),
            "========= ERROR SUMMARY: 0 errors\n",
            T,
        );
        assert!(memcheck.clean);
        assert_eq!(memcheck.summary, "ERROR SUMMARY: 0 errors");
        let race = "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n";
        assert!(judge(Tool::Racecheck, &Ended::Exited(0), race, T).clean);
    }

    #[test]
    fn a_failing_program_can_still_be_clean() {
        // On the H100: a racy dot-atomic exits 1 (wrong answer) under a
        // memcheck that found nothing.
        let run = judge(
            Tool::Memcheck,
            &Ended::Exited(1),
            "========= ERROR SUMMARY: 0 errors\n",
            T,
        );
        assert!(run.clean, "{}", run.summary);
    }

    #[test]
    fn findings_are_not() {
        let found = judge(
            Tool::Memcheck,
            &Ended::Exited(1),
            "========= ERROR SUMMARY: 3 errors\n",
            T,
        );
        assert!(!found.clean);
        assert!(found.summary.contains("3 errors"));
        let race = "========= RACECHECK SUMMARY: 4 hazards displayed (4 errors, 0 warnings)\n";
        assert!(!judge(Tool::Racecheck, &Ended::Exited(1), race, T).clean);
    }

    #[test]
    fn the_count_is_taken_from_the_summary_not_the_line_after_it() {
        // As memcheck ended on the H100 for matmul-tiled without zero
        // padding.
        let many = "========= ERROR SUMMARY: 360 errors\n\
                    ========= ERROR SUMMARY: 260 errors were not printed. Use --print-limit option to adjust the number of printed errors\n";
        let found = judge(Tool::Memcheck, &Ended::Exited(1), many, T);
        assert!(!found.clean);
        assert_eq!(found.summary, "ERROR SUMMARY: 360 errors");
    }

    #[test]
    fn a_run_the_tool_could_not_check_says_why() {
        let said = "========= Target application terminated before first instrumented API call\n";
        let unchecked = judge(Tool::Memcheck, &Ended::Exited(0), said, T);
        assert!(!unchecked.clean);
        assert_eq!(
            unchecked.summary,
            "no summary: the tool did not check the run \
             (Target application terminated before first instrumented API call)"
        );
    }

    #[test]
    fn a_tool_that_could_not_start_says_what_it_printed_last() {
        let said = "/usr/local/cuda/compute-sanitizer/compute-sanitizer: error while loading \
                    shared libraries: libfoo.so: cannot open shared object file\n\n";
        let unchecked = judge(Tool::Memcheck, &Ended::Exited(127), said, T);
        assert!(!unchecked.clean);
        assert!(
            unchecked
                .summary
                .contains("error while loading shared libraries: libfoo.so"),
            "{}",
            unchecked.summary
        );
    }

    #[test]
    fn the_first_finding_is_quoted_with_its_kernel_line() {
        // memcheck's form: the place on the line after the headline.
        let memcheck = "========= COMPUTE-SANITIZER\n\
            ========= Invalid __global__ write of size 4 bytes\n\
            =========     at vecadd+0x1d0 in /build/workspace/exercises/vecadd-anyN/src/kernel.cu:27\n\
            =========     by thread (1,0,0) in block (0,0,0)\n\
            =========     Address 0x7f4c2e000004 is out of bounds\n\
            ========= Invalid __global__ read of size 4 bytes\n\
            =========     at vecadd+0x1a0 in /build/workspace/exercises/vecadd-anyN/src/kernel.cu:26\n\
            ========= ERROR SUMMARY: 2 errors\n";
        let found = judge(Tool::Memcheck, &Ended::Exited(0), memcheck, T);
        assert_eq!(
            found.finding.as_deref(),
            Some("Invalid __global__ write of size 4 bytes (kernel.cu:27)")
        );
        // racecheck's, as the H200 printed it: the place in the headline.
        let race = "========= Error: Race reported between Read access at dot+0x4f0 in kernel.cu:46\n\
            =========     and Write access at dot+0x510 in kernel.cu:46 [2048 hazards]\n\
            ========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)\n";
        let found = judge(Tool::Racecheck, &Ended::Exited(0), race, T);
        assert!(!found.clean);
        assert_eq!(
            found.finding.as_deref(),
            Some("Error: Race reported between Read access (kernel.cu:46)")
        );
        // Clean: nothing to quote.
        let clean = judge(
            Tool::Memcheck,
            &Ended::Exited(0),
            "========= ERROR SUMMARY: 0 errors\n",
            T,
        );
        assert_eq!(clean.finding, None);
    }

    #[test]
    fn a_racecheck_warning_is_a_finding() {
        // Analysis mode (the default), a race inside one warp: racecheck
        // calls it a warning, and it is still a race.
        let race = "========= COMPUTE-SANITIZER\n\
            ========= Warning: Race reported between Write access at dot+0x6b0 in /build/workspace/exercises/dot-sm/src/kernel.cu:52\n\
            =========     and Read access at dot+0x690 in /build/workspace/exercises/dot-sm/src/kernel.cu:52 [496 hazards]\n\
            =========\n\
            ========= RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)\n";
        let found = judge(Tool::Racecheck, &Ended::Exited(0), race, T);
        assert!(!found.clean, "{}", found.summary);
        assert_eq!(
            found.summary,
            "RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)"
        );
        assert_eq!(
            found.finding.as_deref(),
            Some("Warning: Race reported between Write access (kernel.cu:52)")
        );
        // Hazard mode's report names the place on a later line.
        let hazard = "========= WARNING: Potential RAW hazard detected at __shared__ 0x8 in block (0,0,0) :\n\
            =========     Write Thread (2,0,0) at dot+0x6b0 in /build/workspace/exercises/dot-sm/src/kernel.cu:52\n\
            =========     Read Thread (0,0,0) at dot+0x690 in /build/workspace/exercises/dot-sm/src/kernel.cu:52\n\
            =========     Current Value : 0\n\
            ========= RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)\n";
        let found = judge(Tool::Racecheck, &Ended::Exited(0), hazard, T);
        assert!(!found.clean);
        assert_eq!(
            found.finding.as_deref(),
            Some(
                "WARNING: Potential RAW hazard detected at __shared__ 0x8 in block (0,0,0) (kernel.cu:52)"
            )
        );
    }

    #[test]
    fn initcheck_and_synccheck_findings_are_quoted_with_their_line() {
        let init = "========= COMPUTE-SANITIZER\n\
            ========= Uninitialized __global__ memory read of size 4 bytes\n\
            =========     at vecadd+0x1a0 in /build/workspace/exercises/vecadd-anyN/src/kernel.cu:31\n\
            =========     by thread (0,0,0) in block (0,0,0)\n\
            =========     Address 0x7f2a1c000000\n\
            ========= ERROR SUMMARY: 32 errors\n";
        let found = judge(Tool::Initcheck, &Ended::Exited(0), init, T);
        assert!(!found.clean);
        assert_eq!(
            found.finding.as_deref(),
            Some("Uninitialized __global__ memory read of size 4 bytes (kernel.cu:31)")
        );
        let sync = "========= COMPUTE-SANITIZER\n\
            ========= Barrier error detected. Divergent thread(s) in block\n\
            =========     at dot+0x5f0 in /build/workspace/exercises/dot-sm/src/kernel.cu:49\n\
            =========     by thread (0,0,0) in block (0,0,0)\n\
            ========= ERROR SUMMARY: 1 error\n";
        let found = judge(Tool::Synccheck, &Ended::Exited(1), sync, T);
        assert!(!found.clean);
        assert_eq!(
            found.finding.as_deref(),
            Some("Barrier error detected. Divergent thread(s) in block (kernel.cu:49)")
        );
        let clean = judge(
            Tool::Synccheck,
            &Ended::Exited(0),
            "========= ERROR SUMMARY: 0 errors\n",
            T,
        );
        assert!(clean.clean && clean.finding.is_none());
    }

    #[test]
    fn a_summary_alone_is_not_quoted_as_a_finding() {
        let found = judge(
            Tool::Initcheck,
            &Ended::Exited(0),
            "========= ERROR SUMMARY: 2 errors\n",
            T,
        );
        assert!(!found.clean);
        assert_eq!(found.finding, None);
    }

    /// A compute-sanitizer in `dir` that logs each command line to `log`
    /// (with a batch's run lines after it), then runs `batch` where it is
    /// given a batch and `single` where not (`$nonce` is the batch's).
    fn fake_tool(dir: &Path, batch: &str, single: &str) -> (PathBuf, PathBuf) {
        let log = dir.join("log");
        let fake = dir.join("compute-sanitizer");
        let script = format!(
            "#!/bin/sh\n\
             echo \"$*\" >>'{log}'\n\
             if [ -n \"${var}\" ]; then\n\
               tail -n +2 \"${var}\" >>'{log}'\n\
               nonce=$(head -n 1 \"${var}\")\n\
               {batch}\n\
             else\n\
               {single}\n\
             fi\n",
            log = log.display(),
            var = batch::VARIABLE,
        );
        std::fs::write(&fake, script).unwrap();
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        (fake, log)
    }

    /// A batch's frame for run `k`, on stdout with its mark on stderr, as
    /// the course's binary writes them.
    fn frame(k: usize) -> String {
        format!("printf '\\n%s {k} 0 900 {{}}\\n' \"$nonce\"; printf '\\n%s {k}\\n' \"$nonce\" >&2")
    }

    const CLEAN: &str = "echo '========= ERROR SUMMARY: 0 errors'";

    /// The tools (but those in `left_out`) through `fake` over two runs:
    /// one element, and the grid smaller than n, which racecheck goes
    /// over three blocks of.
    fn over_two_runs(fake: &Path, left_out: &[(Tool, &str)]) -> Vec<Sanitized> {
        use crate::run::budget::Budget;
        use crate::run::lane::Lane;
        let (lane, budget) = (Lane::new(1, None), Budget::default());
        let args = |a: &[&str]| a.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        let runs = [
            ToolRun {
                tag: Tag::OneElement,
                args: args(&["--n", "1"]),
                elements: None,
                racechecked: None,
                plain: None,
            },
            ToolRun {
                tag: Tag::GridSmallerThanN,
                args: args(&["--n", "9"]),
                elements: None,
                racechecked: Some((args(&["--n", "9", "--blocks", "3"]), 3)),
                plain: None,
            },
        ];
        let tools = Tools {
            program: &fake.to_string_lossy(),
            isolation: &Isolation::Unsandboxed,
            lane: ExerciseLane {
                lane: &lane,
                budget: &budget,
            },
            binary: Path::new("/course/binary"),
            files: &[],
            // With no plain time known, ten times this: 3 s.
            limits: Limits {
                timeout: Duration::from_millis(300),
                max_output: 1 << 16,
            },
        };
        tools.over(&runs, left_out)
    }

    /// memcheck alone (the other tools left out) through a fake that runs
    /// `batch` given a batch and `single` given one run, over
    /// [`over_two_runs`]' runs: its records, and how many processes it made.
    fn memcheck_over_two_runs(batch: &str, single: &str) -> (Vec<Sanitized>, usize) {
        let others: Vec<(Tool, &str)> = TOOLS[1..].iter().map(|&t| (t, "left out")).collect();
        let dir = tempfile::tempdir().unwrap();
        let (fake, log) = fake_tool(dir.path(), batch, single);
        let records = over_two_runs(&fake, &others)
            .into_iter()
            .filter(|r| r.tool == Tool::Memcheck)
            .collect();
        let log = std::fs::read_to_string(log).unwrap();
        let processes = log.lines().filter(|l| l.starts_with("--tool")).count();
        (records, processes)
    }

    #[test]
    fn a_summary_printed_past_the_output_cap_is_not_clean() {
        // A kernel that writes out of bounds, then prints the tool's clean
        // summary past the cap (64 KiB here), under the tool and under its
        // batch; the tool's own summary, last, counts an error.
        let forged = "'========= ERROR SUMMARY: 0 errors'";
        let flood = format!(
            "echo '========= Invalid __global__ write of size 4 bytes'; \
             yes {forged} | head -n 5000; \
             echo '========= ERROR SUMMARY: 1 error'"
        );
        let batch = format!("{}\n{}\n{flood}", frame(0), frame(1));
        let (records, processes) = memcheck_over_two_runs(&batch, &flood);
        assert_eq!(processes, 3, "the batch, then a process a run");
        assert_eq!(records.len(), 2);
        for record in &records {
            assert!(!record.clean && !record.in_one_process, "{record:?}");
            assert!(
                record.summary.contains("more than 64 KiB") && record.summary.contains("cut off"),
                "{record:?}"
            );
        }
        // Under the cap, the same lines are the tool's: clean where its
        // summary is.
        let (records, _) = memcheck_over_two_runs(
            &format!("{}\n{}\nyes {forged} | head -n 50", frame(0), frame(1)),
            "exit 7",
        );
        assert!(records.iter().all(|r| r.clean), "{records:?}");
    }

    #[test]
    fn a_clean_process_over_every_run_stands_for_each_run() {
        let dir = tempfile::tempdir().unwrap();
        let racecheck_clean =
            "echo '========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)'";
        let batch = format!(
            "{}\n{}\nif [ \"$2\" = racecheck ]; then {racecheck_clean}; else {CLEAN}; fi",
            frame(0),
            frame(1)
        );
        // A process a run: only racecheck, whose second run is cut.
        let single = format!("if [ \"$2\" = racecheck ]; then {racecheck_clean}; else exit 7; fi");
        let (fake, log) = fake_tool(dir.path(), &batch, &single);
        let records = over_two_runs(&fake, &[]);
        // The runs' order, each run's tools in order, all from one process
        // a tool but racecheck, which goes over a cut of the second run.
        let order: Vec<(Tag, Tool)> = records.iter().map(|r| (r.run.unwrap(), r.tool)).collect();
        let expected: Vec<(Tag, Tool)> = [Tag::OneElement, Tag::GridSmallerThanN]
            .into_iter()
            .flat_map(|tag| TOOLS.map(|tool| (tag, tool)))
            .collect();
        assert_eq!(order, expected);
        assert!(
            records.iter().all(|r| r.clean
                && r.in_one_process == (r.tool != Tool::Racecheck)
                && r.finding.is_none()),
            "{records:?}"
        );
        // racecheck went over three blocks of the second run, in a process
        // of its own.
        let blocks: Vec<Option<u32>> = records.iter().map(|r| r.blocks).collect();
        assert_eq!(blocks, [None, None, None, None, None, Some(3), None, None]);
        let log = std::fs::read_to_string(log).unwrap();
        let processes: Vec<&str> = log.lines().filter(|l| l.starts_with("--tool")).collect();
        assert_eq!(processes.len(), 5, "{log}");
        assert!(
            log.contains("--tool racecheck /course/binary --n 1\n")
                && log.contains("--tool racecheck /course/binary --n 9 --blocks 3\n")
                && log.contains(
                    "--tool memcheck /course/binary\n[\"--n\",\"1\",\"--json\"]\n\
                     [\"--n\",\"9\",\"--json\"]\n"
                ),
            "{log}"
        );
    }

    #[test]
    fn anything_but_a_clean_process_over_every_run_is_made_a_process_a_run() {
        // Alone, the first run is clean and the second has two errors.
        let single = format!(
            "if [ \"$5\" = 1 ]; then {CLEAN}; else echo '========= ERROR SUMMARY: 2 errors'; fi"
        );
        let cases = [
            (
                "a finding",
                format!(
                    "{}\n{}\necho '========= ERROR SUMMARY: 1 error'",
                    frame(0),
                    frame(1)
                ),
            ),
            (
                "the second run never made",
                format!("{}\n{CLEAN}", frame(0)),
            ),
            (
                "a kernel's printf among the frames",
                format!("{}\necho hello\n{}\n{CLEAN}", frame(0), frame(1)),
            ),
            (
                "frames of another nonce",
                format!(
                    "nonce=0123456789abcdef\n{}\n{}\n{CLEAN}",
                    frame(0),
                    frame(1)
                ),
            ),
            (
                "the second run stopped on a CUDA error",
                format!(
                    "{}\n{}\n{CLEAN}",
                    frame(0),
                    frame(1).replacen(" 0 900 ", " 3 900 ", 1)
                ),
            ),
        ];
        for (case, batch) in cases {
            let (memcheck, processes) = memcheck_over_two_runs(&batch, &single);
            assert!(
                memcheck.len() == 2
                    && memcheck[0].clean
                    && !memcheck[1].clean
                    && memcheck[1].summary == "ERROR SUMMARY: 2 errors"
                    && memcheck.iter().all(|r| !r.in_one_process),
                "{case}: {memcheck:?}"
            );
            // The batch, then a process a run.
            assert_eq!(processes, 3, "{case}");
        }
    }

    #[test]
    fn a_process_over_every_run_that_ran_out_of_time_stands() {
        // A process a run after it would hold the GPU as long again, each.
        let batch = format!("{}\nsleep 10\n{}\n{CLEAN}", frame(0), frame(1));
        let (memcheck, processes) = memcheck_over_two_runs(&batch, CLEAN);
        assert!(
            memcheck.len() == 2
                && memcheck.iter().all(|r| !r.clean
                    && r.in_one_process
                    && r.summary == "did not finish within 3 s"),
            "{memcheck:?}"
        );
        assert_eq!(processes, 1);
    }

    #[test]
    fn a_tool_out_of_time_costs_the_point_and_no_other_tool_runs() {
        // A kernel that hangs only under a tool: the first tool's process
        // over both runs runs out of time; it is not made again, a process
        // a run or alone, and no later tool is run.
        let dir = tempfile::tempdir().unwrap();
        let (fake, log) = fake_tool(dir.path(), "sleep 10", "sleep 10");
        let records = over_two_runs(&fake, &[]);
        let log = std::fs::read_to_string(log).unwrap();
        let processes: Vec<&str> = log.lines().filter(|l| l.starts_with("--tool")).collect();
        assert_eq!(processes, ["--tool memcheck /course/binary"], "{log}");
        assert_eq!(records.len(), 8);
        for record in &records {
            assert!(!record.clean, "{record:?}");
            if record.tool == Tool::Memcheck {
                assert!(record.out_of_time && record.not_run.is_none(), "{record:?}");
            } else {
                let why = record.not_run.as_deref().unwrap_or_default();
                assert!(!record.out_of_time && why.starts_with("memcheck ran out of time"));
            }
        }
    }

    #[test]
    fn a_tool_s_limit_follows_its_runs_plain_time() {
        let minute = Duration::from_secs(60);
        let half = Duration::from_millis(500);
        // An honest kernel's runs of half a second: the floor and twenty
        // times that.
        assert_eq!(
            tool_limit(minute, Some(half)),
            TOOL_FLOOR + Duration::from_secs(10)
        );
        // Never past ten timeouts, all a tool had before; nor where the
        // plain time is not known.
        assert_eq!(tool_limit(minute, Some(minute)), minute * 10);
        assert_eq!(tool_limit(minute, None), minute * 10);
        let short = Duration::from_secs(2);
        assert_eq!(tool_limit(short, Some(half)), short * 10);
    }

    #[test]
    fn a_missing_tool_says_so() {
        let missing = judge(
            Tool::Memcheck,
            &Ended::DidNotStart("No such file".into()),
            "",
            T,
        );
        assert!(!missing.clean && missing.summary.contains("could not be started"));
    }
}
