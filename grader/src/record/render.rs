//! The words of every typed outcome: what the feedback, the terminal and
//! `grader report` say of each. Outcomes are kept in results.json as they
//! were found; rewording one here rewords every report made from then on,
//! old results included, with no regrading.

use std::fmt;

use kernels::catalogue::Behaviour;
use kernels::trace_record::Direction;

use crate::build::reference::Changed;
use crate::plan::disagreement::Disagreement;
use crate::plan::runs::Tag;
use crate::record::outcome::{
    CheckName, CheckOutcome, Evidence, Failure, Finding, Garbage, IntegrityEvidence, Memory,
    NotStarted, Overlap, RefusedBinary, Shortfall, Skip, Tool, TraceFailure, Verdict,
};
use crate::record::results::{Check, Run, Sanitized};

/// A run's verdict for a person: what happened, what to look at, and the
/// emulator's `found` findings: with a CUDA error where one stopped the
/// launch, else with whatever the run's answer was (it carried on); for a
/// run that passed, the findings alone.
pub fn verdict(verdict: &Verdict, found: &[Finding]) -> String {
    let found = (!found.is_empty()).then(|| findings(found));
    match verdict {
        // The emulator carried on, as a GPU would have: its findings.
        Verdict::Passed => found.unwrap_or_else(|| "passed".to_owned()),
        Verdict::Failed { failure } => {
            let (summary, hint) = failure_summary(failure, found.as_deref());
            let mut text = format!("wrong answer: {summary}");
            if let Some(hint) = hint {
                text += &format!(" (hint: {hint})");
            }
            text
        }
        Verdict::Unfinished { message } => format!("not finished: {message}"),
        Verdict::CudaError { name, message } => {
            let message = match &found {
                Some(found) => format!("{message}\n{found}"),
                None => message.clone(),
            };
            match name {
                Some(name) => format!("CUDA error {name}: {message}"),
                None => format!("CUDA error: {message}"),
            }
        }
        Verdict::RefusedArguments { message } => {
            format!("the binary refused the grader's arguments: {message}")
        }
        Verdict::Crashed { signal } => format!(
            "crashed with signal {signal} ({}): a panic or a fault in the host code",
            signal_name(*signal)
        ),
        Verdict::TimedOut { seconds } => {
            format!("did not finish within {seconds:.0} s: a kernel or host loop that never ends?")
        }
        Verdict::OutOfMemory { limit } => format!(
            "used more than the {} MiB of memory a run may have, and was stopped: does it \
             allocate more than the exercise needs?",
            limit >> 20
        ),
        Verdict::Flooded => "printed more than the grader keeps: remove debug printing".into(),
        Verdict::Garbage { garbage } => {
            format!("output is not the course's JSON report: {garbage}")
        }
        Verdict::Inconsistent { code, passed } => {
            format!("exit code {code} disagrees with the report's check (passed = {passed})")
        }
        Verdict::DidNotStart { reason } => match reason {
            NotStarted::Spawn { error } => format!("could not be started: {error}"),
            other => other.to_string(),
        },
        Verdict::Skipped { reason } => reason.to_string(),
    }
}

/// What the emulator found, as the feedback quotes it.
fn findings(found: &[Finding]) -> String {
    let lines: Vec<&str> = found.iter().map(|f| f.text.as_str()).collect();
    format!("the CPU emulator found: {}", lines.join("\n"))
}

/// What a run that reported the exercise's exact answer with the canary
/// kernel built in is told, and the instructor's summary repeats.
pub const CPU_ANSWER: &str = "integrity: run with the grader's own kernel in place of yours, \
     whose result differs from the exercise's answer, your program reported the exercise's exact answer: it was not \
     computed by the kernel it launched. This exercise's host points are 0, and the instructor \
     is told.";

/// An integrity flag's evidence, in a sentence.
pub fn integrity(evidence: &IntegrityEvidence) -> String {
    match evidence {
        IntegrityEvidence::CpuAnswer => "run with the grader's own kernel in place of its own, \
             whose result differs from the exercise's answer, the program reported the exercise's exact answer: it was \
             not computed by the kernel it launched"
            .to_owned(),
        IntegrityEvidence::ForgedTrace { records } => format!(
            "{records} driver-call trace records from a process the tracer never announced: \
             written on the trace's descriptor by the program itself"
        ),
    }
}

/// A failure's summary, the emulator's findings after it, and its hint.
fn failure_summary(failure: &Failure, found: Option<&str>) -> (String, Option<String>) {
    let (summary, hint) = match failure {
        Failure::WrongAnswer {
            wrong,
            compared,
            first,
            tolerance,
            hint,
        } => {
            let first = first
                .as_ref()
                .map(|f| format!("; first {}: expected {}, got {}", f.at, f.expected, f.got))
                .unwrap_or_default();
            let error = tolerance
                .as_ref()
                .map(|t| {
                    format!(
                        "; relative error {:.2e}, tolerance {:.2e}",
                        t.relative_error.0, t.limit
                    )
                })
                .unwrap_or_default();
            (
                format!("{wrong} of {compared} wrong{first}{error}"),
                hint.clone(),
            )
        }
        Failure::Disagrees { disagreement } => (
            format!("the grader's own check disagrees: {disagreement}"),
            None,
        ),
        Failure::Trace { evidence } => (
            format!("the driver-call trace disagrees with the report: {evidence}"),
            None,
        ),
        Failure::NoTrace { trace } => {
            (format!("no driver-call trace could be read: {trace}"), None)
        }
        Failure::NoOverlap { overlap } => (overlap.to_string(), None),
        Failure::Canary { disagreement } => (
            format!(
                "the host code did not return the result of the kernel it launched: {disagreement}"
            ),
            Some(
                "the grader runs your host code with a kernel of its own, whose result differs \
                 from the exercise's answer; report what the kernel computed, copied back"
                    .to_owned(),
            ),
        ),
        Failure::CpuAnswer => (CPU_ANSWER.to_owned(), None),
        Failure::StaleLaunch { message } => (
            message.clone(),
            Some(
                "keep no state across launches: each launch reads its inputs and writes every \
                 output"
                    .to_owned(),
            ),
        ),
        // The findings are the summary: a launch failed, and the report
        // passed anyway.
        Failure::UncheckedLaunch => {
            return (
                found
                    .unwrap_or("the CPU emulator failed a launch")
                    .to_owned(),
                Some("check every launch's result: synchronize and propagate its error".to_owned()),
            );
        }
    };
    match found {
        Some(found) => (format!("{summary}\n{found}"), hint),
        None => (summary, hint),
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGKILL => "SIGKILL",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGTERM => "SIGTERM",
        _ => "signal",
    }
}

/// A check's words: what it found, or why it earned nothing or was not
/// assessed. `runs` are the exercise's run records, whose descriptions the
/// words quote; `sanitized` the compute-sanitizer records.
pub fn check(check: &Check, runs: &[Run], sanitized: &[Sanitized]) -> String {
    let about = |tag| {
        runs.iter()
            .find(|r| r.tag == tag)
            .map_or_else(|| tag.to_string(), Run::about)
    };
    match (&check.outcome, check.name) {
        (CheckOutcome::NoKernel, _) => "0 points: no kernel was built to check".into(),
        (CheckOutcome::Emulated, CheckName::MemorySafety) => {
            // Gradings before the emulator's findings assessed it.
            "not assessed: on the CPU emulator, whose own checks of every access fail the runs \
             instead"
                .into()
        }
        (CheckOutcome::EmulatorChecked { found_in: None }, _) => {
            "the CPU emulator's checks of every access found nothing in any run".into()
        }
        (
            CheckOutcome::EmulatorChecked {
                found_in: Some(run),
            },
            _,
        ) => format!(
            "0 points: the CPU emulator found what a GPU's compute-sanitizer reports, in the run \
             \"{}\" (its finding is with the run)",
            about(*run)
        ),
        (CheckOutcome::Emulated, _) => {
            "not assessed: the CPU emulator's times say nothing of a GPU's".into()
        }
        (CheckOutcome::NoSanitize, _) => "not assessed: graded with --no-sanitize".into(),
        (CheckOutcome::Unrunnable { reason }, CheckName::MemorySafety) => {
            format!("0 points: compute-sanitizer could not run the kernel: {reason}")
        }
        (CheckOutcome::Unrunnable { .. }, CheckName::Speed | CheckName::Lesson) => {
            "0 points: the kernel could not be run in the course's host code".into()
        }
        (
            CheckOutcome::Counted {
                run,
                shows,
                kernel,
                measure,
                limit,
            },
            _,
        ) => lesson_words(check.passed, *shows, about(*run), kernel, *measure, *limit),
        (CheckOutcome::NotCounted { run, reason }, _) => format!(
            "not assessed: the CPU emulator could not count the kernel at the run \"{}\": {reason}",
            about(*run)
        ),
        (CheckOutcome::TimedOut { run }, _) => format!(
            "0 points: not checked, the kernel did not finish the run \"{}\" in time",
            about(*run)
        ),
        (CheckOutcome::Sanitized { run }, _) => tools(check.passed, *run, sanitized, &about),
        (CheckOutcome::NotMeasured { run }, CheckName::Lesson) => format!(
            "0 points: the kernel did not pass the run \"{}\", and the lesson point goes only to \
             a kernel that passes every run",
            about(*run)
        ),
        (CheckOutcome::NotMeasured { run }, _) => format!(
            "0 points: the kernel did not pass the run \"{}\", so its speed was not measured",
            about(*run)
        ),
        (CheckOutcome::CourseFailed { run, ended }, _) => format!(
            "not assessed: the course's own kernel did not pass the run \"{}\" here ({ended})",
            about(*run)
        ),
        (
            CheckOutcome::Measured {
                run,
                theirs_ms,
                course_ms,
                fraction,
                asks,
            },
            _,
        ) => format!(
            "in the run \"{}\" your kernel took {theirs_ms:.3} ms and the course's \
             {course_ms:.3} ms on this GPU: {fraction:.2} of its speed (the point asks {asks})",
            about(*run)
        ),
    }
}

/// The lesson point's words (`judge::lesson`): what was counted, and what to change where it did
/// not pass. `about` is the run's description.
fn lesson_words(
    passed: bool,
    shows: Behaviour,
    about: String,
    kernel: &str,
    measure: f64,
    limit: f64,
) -> String {
    let counted = match shows {
        Behaviour::CoalescedLoads => format!(
            "the global loads of `{kernel}` touched {measure:.2} times the fewest 32-byte sectors \
             their bytes fit in (the point asks at most {limit})"
        ),
        Behaviour::TiledLoads => format!(
            "each warp of `{kernel}` made {measure:.2} of a naive kernel's 2·W global load \
             requests (the point asks at most {limit})"
        ),
    };
    let said = format!("counted on the CPU emulator in the run \"{about}\", {counted}");
    if passed {
        return said;
    }
    let change = match shows {
        Behaviour::CoalescedLoads => {
            "neighbouring threads read words far apart, as when each thread walks a contiguous \
             run of its own; step every thread by the grid's threads (i += blockDim.x * \
             gridDim.x), so a warp's 32 lanes read 32 neighbouring words at once"
        }
        Behaviour::TiledLoads => {
            "the kernel reads its operands from global memory in the inner loop; load each tile \
             of both M and N into shared memory once a phase, and read it there"
        }
    };
    format!(
        "0 points: {said}: {change} (`--counters` with the run's arguments shows the count on \
         the emulator)"
    )
}

/// What compute-sanitizer's tools found (`sanitized`, the records of a
/// check that `passed` or not), run by run; `first` names a record's run
/// where it does not (records made when the tools ran over the first run
/// only), `about` a run's description.
fn tools(
    passed: bool,
    first: Tag,
    sanitized: &[Sanitized],
    about: &dyn Fn(Tag) -> String,
) -> String {
    // Each tool's record names its run; older records, the first.
    let mut by_run: Vec<(Tag, Vec<&Sanitized>)> = Vec::new();
    for s in sanitized {
        let tag = s.run.unwrap_or(first);
        match by_run.iter_mut().find(|(t, _)| *t == tag) {
            Some((_, records)) => records.push(s),
            None => by_run.push((tag, vec![s])),
        }
    }
    if passed {
        tools_clean(&by_run, sanitized, about)
    } else {
        tools_found(&by_run, about)
    }
}

/// The words of tools that found nothing: which tools, over which runs,
/// over what cut of them, and which were left out and why.
fn tools_clean(
    by_run: &[(Tag, Vec<&Sanitized>)],
    sanitized: &[Sanitized],
    about: &dyn Fn(Tag) -> String,
) -> String {
    let tools: Vec<String> = by_run
        .first()
        .map(|(_, records)| {
            records
                .iter()
                .filter(|s| s.not_run.is_none())
                .map(|s| s.tool.to_string())
                .collect()
        })
        .unwrap_or_default();
    // A tool left out as it could find nothing says why, once.
    let mut not_run: Vec<String> = Vec::new();
    for s in sanitized {
        if let Some(why) = &s.not_run {
            let said = format!("{} not run: {why}", s.tool);
            if !not_run.contains(&said) {
                not_run.push(said);
            }
        }
    }
    let runs: Vec<String> = by_run
        .iter()
        .map(|(tag, _)| format!("\"{}\"", about(*tag)))
        .collect();
    // A tool that went over fewer blocks than the run has (racecheck over
    // memspace-timing's), or fewer elements (every tool over
    // streams-overlap's uneven chunks), says so.
    let mut cut: Vec<String> = sanitized
        .iter()
        .filter(|s| s.not_run.is_none())
        .filter_map(|s| match (s.blocks, s.elements) {
            (Some(b), _) => Some(format!("{} over grids of {b} of their blocks", s.tool)),
            (None, Some(e)) => Some(format!(
                "the tools over the run's chunks and streams at n = {e}"
            )),
            (None, None) => None,
        })
        .collect();
    cut.dedup();
    cut.extend(not_run);
    format!(
        "{} found nothing in the run{} {}{}",
        and_list(&tools),
        if runs.len() == 1 { "" } else { "s" },
        and_list(&runs),
        if cut.is_empty() {
            String::new()
        } else {
            format!(" ({})", cut.join("; "))
        }
    )
}

/// The words of tools that found something: each run's findings, tool by
/// tool, with the tool's summary.
fn tools_found(by_run: &[(Tag, Vec<&Sanitized>)], about: &dyn Fn(Tag) -> String) -> String {
    let found: Vec<String> = by_run
        .iter()
        .filter_map(|(tag, records)| {
            let said: Vec<String> = records
                .iter()
                .filter(|s| !s.clean)
                .map(|s| {
                    let tool = match (s.blocks, s.elements) {
                        (Some(b), _) => format!("{} over a grid of {b} of its blocks", s.tool),
                        (None, Some(e)) => format!("{} at n = {e}", s.tool),
                        (None, None) => s.tool.to_string(),
                    };
                    match &s.finding {
                        Some(finding) => format!("{tool}: {finding} ({})", s.summary),
                        None => format!("{tool}: {}", s.summary),
                    }
                })
                .collect();
            (!said.is_empty())
                .then(|| format!("in the run \"{}\": {}", about(*tag), said.join("; ")))
        })
        .collect();
    found.join("; ")
}

impl fmt::Display for CheckName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CheckName::MemorySafety => "memory safety",
            CheckName::Speed => "speed",
            CheckName::Lesson => "lesson",
        })
    }
}

/// "a", "a and b", "a, b and c".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Tool::Memcheck => "memcheck",
            Tool::Racecheck => "racecheck",
            Tool::Initcheck => "initcheck",
            Tool::Synccheck => "synccheck",
        })
    }
}

impl fmt::Display for Garbage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Garbage::Empty { code, stderr } => write!(
                f,
                "stdout is empty (exit code {code}); stderr says: {stderr}"
            ),
            Garbage::NotReport { error } => f.write_str(error),
        }
    }
}

impl fmt::Display for NotStarted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotStarted::Spawn { error } => f.write_str(error),
            NotStarted::PtxLacks => f.write_str(
                "not run: the kernel's PTX lacks what the exercise is about, so this run could \
                 earn nothing",
            ),
            NotStarted::NoReference { exercise } => write!(
                f,
                "the bundle has no reference binary for {exercise}; build the bundle again"
            ),
            NotStarted::NoPtx => {
                f.write_str("the build left no PTX for the kernel, so it could not be run")
            }
            NotStarted::Refused { changed } => {
                write!(f, "the grader refused to run the kernel: {changed}")
            }
            NotStarted::Unreadable { error } => {
                write!(f, "the grader refused to run the kernel: {error}")
            }
            NotStarted::Signature { mismatch } => write!(
                f,
                "the kernel could not run in the course's host code: {mismatch}"
            ),
            NotStarted::NoBroker => {
                f.write_str("the bundle has no GPU broker; build the bundle again")
            }
            NotStarted::BrokerChanged { changed } => write!(f, "{changed}"),
            NotStarted::NoCanary => f.write_str(
                "the bundle has no canary kernel for this exercise, so your host code could not \
                 be run; build the bundle again",
            ),
            NotStarted::CanaryChanged { changed } => {
                write!(f, "the grader refused to run your host code: {changed}")
            }
            NotStarted::CanaryUnverified { ended } => write!(
                f,
                "not assessed: the course's host code running the grader's kernel did not \
                 report ({ended}); the grader's fault, grade again"
            ),
        }
    }
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Skip::Emulator { too_slow } => write!(
                f,
                "skipped on the CPU emulator, no points either way: {too_slow}; grading on a \
                 GPU runs it"
            ),
            Skip::Memory { shortfall } => write!(f, "{shortfall}"),
        }
    }
}

/// Where copies in `direction` go, as the feedback says it.
fn way(direction: Direction) -> &'static str {
    match direction {
        Direction::HostToDevice => "to the GPU",
        Direction::DeviceToHost => "back to the host",
        Direction::DeviceToDevice => "within the GPU",
    }
}

impl fmt::Display for Evidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Evidence::NeverLaunched { kernels } => write!(
                f,
                "your program printed a result but never launched `{}`: the result must come \
                 from the kernel, launched with cuLaunchKernel (cust's launch!)",
                kernels.join("` or `")
            ),
            Evidence::EveryLaunchFailed { kernels, error } => write!(
                f,
                "every launch of `{}` failed (the first with CUDA error {error}): check the \
                 grid, the block and the kernel's arguments",
                kernels.join("` or `")
            ),
            Evidence::NoLaunchSucceeded { kernels } => write!(
                f,
                "no launch of `{}` succeeded, so no result can have come from it",
                kernels.join("`, `")
            ),
            Evidence::NoCopyBack { last_launch } => write!(
                f,
                "nothing was copied from the GPU to the host after the last launch of the kernel \
                 (driver call {last_launch}): the result your program reports did not come back \
                 from the GPU"
            ),
            Evidence::Pageable { direction, copies } => write!(
                f,
                "{copies} of the copies {} used pageable host memory, which the GPU cannot copy \
                 while it computes: allocate the host buffers page-locked (cust's LockedBuffer, \
                 cuMemAllocHost)",
                way(*direction)
            ),
            Evidence::Synchronous { direction } => write!(
                f,
                "the copies {} were synchronous: queue them with the asynchronous copies \
                 (async_copy_from / async_copy_to) on each chunk's stream",
                way(*direction)
            ),
            Evidence::FewStreams { direction, streams } => write!(
                f,
                "asynchronous copies {} from page-locked memory ran on {streams} stream(s), not \
                 at least two: queue each chunk's copies on the chunk's own stream",
                way(*direction)
            ),
        }
    }
}

impl fmt::Display for TraceFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceFailure::Pipe { error } => write!(f, "the broker's record's pipe: {error}"),
            TraceFailure::Unreadable { error } => {
                write!(f, "the broker's record could not be read: {error}")
            }
            TraceFailure::HeldOpen => f.write_str(
                "the broker's record stayed open after the program ended: a process it started \
                 still holds it",
            ),
            TraceFailure::Broker { why } => write!(
                f,
                "the grader's GPU broker failed ({why}); this is not your program's doing: \
                 the instructor should grade it again"
            ),
            TraceFailure::NotLoaded => f.write_str(
                "the tracer was not loaded into the program, so its driver calls could not be \
                 seen: the binary must load the CUDA driver (libcuda.so.1) dynamically, as the \
                 course's does",
            ),
            TraceFailure::Garbled { line: 0, error, .. } => {
                write!(f, "the first record of the trace: {error}")
            }
            TraceFailure::Garbled { line, text, error } => {
                write!(f, "line {line} of the trace, {text:?}: {error}")
            }
            TraceFailure::Truncated { mib, records: 0 } => {
                write!(f, "the driver-call trace passed {mib} MiB and was cut off")
            }
            TraceFailure::Truncated { mib, records } => write!(
                f,
                "the driver-call trace passed what the grader keeps ({mib} MiB or {records} \
                 records) and was cut off"
            ),
        }
    }
}

impl fmt::Display for Overlap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Overlap::NoTimes => {
                f.write_str("the report gives no serial_ms and overlapped_ms to compare")
            }
            Overlap::NotConcurrent { fraction, limit } => write!(
                f,
                "on the GPU's own timeline (the grader's broker timed every copy and kernel), \
                 {:.1}% of your streams' work ran while another stream's did, below the {:.0}% \
                 that overlapped streams reach: each stream waited for the one before",
                fraction * 100.0,
                limit * 100.0
            ),
            Overlap::TooSlow {
                serial_ms,
                overlapped_ms,
                chunks,
                limit,
            } => write!(
                f,
                "the overlapped run took {overlapped_ms:.3} ms, {:.2} of the serial run's \
                 {serial_ms:.3} ms; with {chunks} chunks overlapping copies and kernels brings \
                 it below {limit}",
                overlapped_ms / serial_ms
            ),
        }
    }
}

impl fmt::Display for Disagreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Disagreement::Echo { key, got, asked } => write!(
                f,
                "the report says {key} = {got}, but the grader asked for {asked}"
            ),
            Disagreement::Missing { field } => write!(f, "the report has no {field}"),
            Disagreement::Parameters { why } => write!(f, "the report's parameters: {why}"),
            Disagreement::Compared { got, want } => write!(
                f,
                "the report compared {got} values, not the {want} the run produces"
            ),
            Disagreement::Sum { got, want } => {
                write!(f, "the checksum of c is {got}; the grader computes {want}")
            }
            Disagreement::Dot {
                got,
                exact,
                error,
                limit,
            } => write!(
                f,
                "the dot is {got}; the grader computes {exact}, off by {error:.2e} of Σ|a·b| \
                 (limit {limit:.2e})"
            ),
            Disagreement::Rms { rms } => {
                write!(f, "P differs from the CPU golden model by an RMS of {rms}")
            }
            Disagreement::Width { width } => write!(f, "the width {width} is not a width"),
            Disagreement::WeightedSum { got, want } => write!(
                f,
                "the weighted checksum of P is {got}; the grader computes {want}"
            ),
            Disagreement::NoChecksum => f.write_str(
                "the report has no results.checksum: the course's driver writes one from the \
                 values copied back, so this report came from other code",
            ),
            Disagreement::BadChecksum { why } => {
                write!(f, "the report's results.checksum: {why}")
            }
            Disagreement::Values { got, want } => {
                f.write_str(&got.mismatch(want).unwrap_or_default())
            }
            // The canary's result stays out of the feedback: the values
            // are in results.json, for the instructor.
            Disagreement::Canary { field, .. } => write!(
                f,
                "the report's results.{field} is not what the kernel it launched computed"
            ),
        }
    }
}

impl fmt::Display for Changed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} is not the file that was built (sha256 {} expected, {} found)",
            self.path.display(),
            self.expected,
            self.found.as_deref().unwrap_or("unreadable"),
        )
    }
}

impl fmt::Display for RefusedBinary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the grader refused to run your binary: it is not the binary that was built (sha256 \
             {} expected, {} found)",
            self.expected.as_deref().unwrap_or("none"),
            self.found.as_deref().unwrap_or("unreadable"),
        )
    }
}

impl fmt::Display for Shortfall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let gib = |b: u64| format!("{:.1} GiB", b as f64 / f64::from(1 << 30));
        f.write_str("skipped, no points either way: ")?;
        match self {
            Shortfall::Unread {
                of: Memory::Host,
                why,
            } => write!(f, "the host's available memory could not be read ({why})"),
            Shortfall::Unread {
                of: Memory::Gpu,
                why,
            } => write!(f, "the GPU's free memory could not be read ({why})"),
            Shortfall::Short {
                of: Memory::Host,
                need,
                have,
            } => write!(
                f,
                "it needs {} of host memory, and this node has {} available",
                gib(*need),
                gib(*have)
            ),
            Shortfall::Short {
                of: Memory::Gpu,
                need,
                have,
            } => write!(
                f,
                "it needs {} of GPU memory, and the GPU has {} free",
                gib(*need),
                gib(*have)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::outcome::{CheckName, CheckOutcome, Tool};

    fn record(tool: Tool, run: Tag, not_run: Option<&str>) -> Sanitized {
        Sanitized {
            tool,
            clean: true,
            summary: "ERROR SUMMARY: 0 errors".into(),
            finding: None,
            run: Some(run),
            blocks: None,
            elements: None,
            not_run: not_run.map(str::to_owned),
            in_one_process: false,
            out_of_time: false,
            seconds: 0.0,
        }
    }

    /// The memory-safety point, earned, the tools first over `run`.
    fn memory_safety(run: Tag) -> Check {
        Check {
            name: CheckName::MemorySafety,
            assessed: true,
            passed: true,
            points: 1,
            max_points: 1,
            outcome: CheckOutcome::Sanitized { run },
        }
    }

    #[test]
    fn a_clean_check_names_the_tools_run_and_says_why_the_others_were_not() {
        let check = memory_safety(Tag::OneElement);
        let mut sanitized = Vec::new();
        for run in [Tag::OneElement, Tag::GridSmallerThanN] {
            sanitized.push(record(Tool::Memcheck, run, None));
            sanitized.push(record(Tool::Racecheck, run, Some("no shared memory")));
            sanitized.push(record(Tool::Initcheck, run, None));
            sanitized.push(record(Tool::Synccheck, run, Some("no barrier")));
        }
        let said = super::check(&check, &[], &sanitized);
        assert!(
            said.starts_with("memcheck and initcheck found nothing in the runs"),
            "{said}"
        );
        assert!(
            said.ends_with("(racecheck not run: no shared memory; synccheck not run: no barrier)"),
            "{said}"
        );
        // Every tool run: as before.
        for s in &mut sanitized {
            s.not_run = None;
        }
        let said = super::check(&check, &[], &sanitized);
        assert!(
            said.starts_with("memcheck, racecheck, initcheck and synccheck found nothing"),
            "{said}"
        );
        assert!(!said.contains("not run"), "{said}");
    }

    #[test]
    fn tools_over_fewer_elements_than_the_run_say_at_what_size() {
        let mut check = memory_safety(Tag::UnevenChunks);
        let at_a_million = |tool, not_run| Sanitized {
            elements: Some(1_048_577),
            ..record(tool, Tag::UnevenChunks, not_run)
        };
        let mut sanitized = vec![
            at_a_million(Tool::Memcheck, None),
            at_a_million(Tool::Racecheck, Some("no shared memory")),
            at_a_million(Tool::Initcheck, None),
        ];
        let said = super::check(&check, &[], &sanitized);
        assert!(
            said.ends_with(
                "(the tools over the run's chunks and streams at n = 1048577; racecheck not run: \
                 no shared memory)"
            ),
            "{said}"
        );
        // A finding names the size it was found at.
        sanitized[0].clean = false;
        sanitized[0].summary = "ERROR SUMMARY: 1 error".into();
        (check.passed, check.points) = (false, 0);
        let said = super::check(&check, &[], &sanitized);
        assert!(
            said.contains("memcheck at n = 1048577: ERROR SUMMARY: 1 error"),
            "{said}"
        );
    }

    #[test]
    fn the_words_name_what_was_counted_and_what_to_change() {
        let lost = lesson_words(
            false,
            Behaviour::CoalescedLoads,
            "n = 9".into(),
            "dot",
            8.0,
            4.0,
        );
        assert!(lost.starts_with("0 points:"), "{lost}");
        assert!(
            lost.contains("8.00 times") && lost.contains("gridDim.x"),
            "{lost}"
        );
        let kept = lesson_words(true, Behaviour::TiledLoads, "W = 99".into(), "m", 0.06, 0.5);
        assert!(
            !kept.contains("0 points") && kept.contains("0.06"),
            "{kept}"
        );
    }
}
