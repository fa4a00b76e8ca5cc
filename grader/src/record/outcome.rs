//! Every way a run can end and why, as results.json keeps it: typed, made
//! by the rooms that run and judge (`run`, `judge`), worded only by
//! [`render`](super::render), so rewording feedback needs no regrading.
//! Each enum is tagged in JSON (`"kind"`, `"why"`), so a script reads a
//! verdict without parsing sentences, and a new outcome is a new variant.

use kernels::protocol::{Failure as WrongValue, Tolerance};
use kernels::trace_record::{Direction, LineError};
use serde::{Deserialize, Serialize};

use crate::build::reference::Changed;
use crate::plan::disagreement::Disagreement;
use crate::plan::runs::Tag;

/// What one run amounts to.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Verdict {
    /// Exit 0, a report whose check passed, the grader's recheck and the
    /// trace agreeing.
    Passed,
    /// The run does not count, and why.
    Failed {
        failure: Failure,
    },
    /// A `TODO(step N)` still in place: the binary's message.
    Unfinished {
        message: String,
    },
    /// CUDA reported an error (exit 3): its name and the binary's message.
    CudaError {
        name: Option<String>,
        message: String,
    },
    /// The binary refused the grader's arguments (exit 2): a grader bug or a
    /// changed argument parser.
    RefusedArguments {
        message: String,
    },
    Crashed {
        signal: i32,
    },
    /// Stopped at the run's limit.
    TimedOut {
        seconds: f64,
    },
    /// Killed at the memory cap of its cell (bytes).
    OutOfMemory {
        limit: u64,
    },
    /// More output than the grader keeps.
    Flooded,
    /// Output that is not the course's JSON report.
    Garbage {
        garbage: Garbage,
    },
    /// Exit code and report disagree (exit 0 with a failed check, say).
    Inconsistent {
        code: i32,
        passed: bool,
    },
    /// The run was not made, and why.
    DidNotStart {
        reason: NotStarted,
    },
    /// A planned run left out, no points either way.
    Skipped {
        reason: Skip,
    },
}

impl Verdict {
    pub fn passed(&self) -> bool {
        matches!(self, Verdict::Passed)
    }

    /// The kind, as results.json tags it: one word to sort and count by.
    pub fn kind(&self) -> &'static str {
        match self {
            Verdict::Passed => "passed",
            Verdict::Failed { .. } => "failed",
            Verdict::Unfinished { .. } => "unfinished",
            Verdict::CudaError { .. } => "cuda-error",
            Verdict::RefusedArguments { .. } => "refused-arguments",
            Verdict::Crashed { .. } => "crashed",
            Verdict::TimedOut { .. } => "timed-out",
            Verdict::OutOfMemory { .. } => "out-of-memory",
            Verdict::Flooded => "flooded",
            Verdict::Garbage { .. } => "garbage",
            Verdict::Inconsistent { .. } => "inconsistent",
            Verdict::DidNotStart { .. } => "did-not-start",
            Verdict::Skipped { .. } => "skipped",
        }
    }
}

/// Why a run that ended does not count.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "why", rename_all = "kebab-case")]
pub enum Failure {
    /// The binary's own check failed: how many values were wrong, the first
    /// of them, the tolerance where there is one, the binary's hint.
    WrongAnswer {
        wrong: u64,
        compared: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        first: Option<WrongValue>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tolerance: Option<Tolerance>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hint: Option<String>,
    },
    /// A passing report the grader's own recheck disagrees with.
    Disagrees { disagreement: Disagreement },
    /// A passing report the driver-call trace disagrees with.
    Trace { evidence: Evidence },
    /// A passing report whose trace could not be read.
    NoTrace { trace: TraceFailure },
    /// streams-overlap on a GPU: overlapping brought no time.
    NoOverlap { overlap: Overlap },
    /// A passing report, and a launch the CPU emulator failed (its findings
    /// are the run's): the host code did not check the launch. Only in
    /// gradings before the emulator carried on past its findings.
    UncheckedLaunch,
    /// A run of the canary build whose result is not the canary kernel's:
    /// the host code did not return the result of the kernel it launched.
    Canary { disagreement: Disagreement },
    /// A run of the canary build that reports the exercise's exact answer,
    /// which the canary kernel does not compute: the answer came from
    /// somewhere else than the kernel (an integrity flag).
    CpuAnswer,
    /// A launch of the kernel, in a run of several, did not compute what
    /// the checked (last) launch did: it skipped its work or wrote
    /// something else (the binary's own words).
    StaleLaunch { message: String },
}

/// A fact that contradicts what a student's program reported, beyond a
/// wrong answer: the exercise's host points are 0, and the instructor's
/// summary, grades.csv and the student's feedback say so.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Integrity {
    /// The run it showed in.
    pub tag: Tag,
    pub evidence: IntegrityEvidence,
}

/// What the evidence is.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum IntegrityEvidence {
    /// Built with the grader's canary kernel, the program reported the
    /// exercise's exact answer, which that kernel does not compute.
    CpuAnswer,
    /// Trace records of processes the tracer never announced: written on
    /// the trace's descriptor by the program itself.
    ForgedTrace { records: usize },
}

impl IntegrityEvidence {
    /// One word for the column and the summary.
    pub fn kind(&self) -> &'static str {
        match self {
            IntegrityEvidence::CpuAnswer => "cpu-answer",
            IntegrityEvidence::ForgedTrace { .. } => "forged-trace",
        }
    }
}

/// Output that is not the course's report.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "why", rename_all = "kebab-case")]
pub enum Garbage {
    /// Nothing on stdout: the exit code, and stderr's first line.
    Empty { code: i32, stderr: String },
    /// Something on stdout that does not parse as a report.
    NotReport { error: String },
}

/// Why a planned run was not made.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "why", rename_all = "kebab-case")]
pub enum NotStarted {
    /// The process could not be started: the system's reason.
    Spawn { error: String },
    /// A run above 2^31 elements of a kernel whose PTX lacks what the
    /// exercise is about: it could earn nothing.
    PtxLacks,
    /// The bundle holds no course binary for the exercise.
    NoReference { exercise: String },
    /// The student's build left no PTX.
    NoPtx,
    /// A file of the bundle the kernel's run needs is not the one built.
    Refused { changed: Changed },
    /// A file of the bundle the kernel's run needs cannot be read.
    Unreadable { error: String },
    /// The course's host code cannot launch the student's kernels.
    Signature { mismatch: String },
    /// The bundle holds no broker (an older bundle).
    NoBroker,
    /// The broker or its client is not the one built.
    BrokerChanged { changed: Changed },
    /// The bundle holds no canary for the item (an older bundle).
    NoCanary,
    /// The canary's PTX or the student's binary is not the one built.
    CanaryChanged { changed: Changed },
    /// The course's host code running the canary did not report: nothing
    /// to compare with (the node's fault, not the student's).
    CanaryUnverified { ended: String },
}

/// Why an exercise whose binary was built was not run at all: the bundle's
/// copy of the student's binary is not the one built (changed since, by a
/// run or by hand, or in a bundle that recorded no digest). Not a build
/// error: the build succeeded, and the grader refused what the bundle holds.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct RefusedBinary {
    /// Its sha256 as built; None where the bundle recorded none.
    pub expected: Option<String>,
    /// Its sha256 now; None where it cannot be read.
    pub found: Option<String>,
}

/// Why a planned run was left out.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "why", rename_all = "kebab-case")]
pub enum Skip {
    /// On the CPU emulator, for the catalogue's reason.
    Emulator { too_slow: String },
    /// Above 2^31 elements, where the node lacks the memory now.
    Memory { shortfall: Shortfall },
}

/// Which memory a run above 2^31 elements needs room in.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Memory {
    Host,
    Gpu,
}

/// Why a run above 2^31 elements is not made on this node now: never a
/// student's loss.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Shortfall {
    /// How much is free could not be read.
    Unread { of: Memory, why: String },
    /// It needs `need` bytes, and `have` are free.
    Short { of: Memory, need: u64, have: u64 },
}

/// What the driver-call trace shows against a passing report.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Evidence {
    /// No launch of these kernels (any one name will do).
    NeverLaunched { kernels: Vec<String> },
    /// Every launch of them failed, the first with this CUDA error.
    EveryLaunchFailed { kernels: Vec<String>, error: u32 },
    /// No launch of the exercise's kernels succeeded.
    NoLaunchSucceeded { kernels: Vec<String> },
    /// Nothing came back from the GPU after the last launch (driver call
    /// `last_launch`).
    NoCopyBack { last_launch: u64 },
    /// Copies in this direction from pageable memory.
    Pageable { direction: Direction, copies: usize },
    /// Synchronous copies in this direction.
    Synchronous { direction: Direction },
    /// Asynchronous page-locked copies in this direction on fewer than two
    /// streams.
    FewStreams {
        direction: Direction,
        streams: usize,
    },
}

/// Why no trace could be read.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum TraceFailure {
    /// The grader's pipe could not be made.
    Pipe { error: String },
    /// The pipe could not be read.
    Unreadable { error: String },
    /// A process the program started still held the trace open.
    HeldOpen,
    /// No header: the tracer was not loaded. Only in gradings before the
    /// broker.
    NotLoaded,
    /// The grader's broker failed (the node's fault, never the student's:
    /// its session ends well however the program behaves).
    Broker { why: String },
    /// A line that is not a record.
    Garbled {
        /// From 1; 0 for the first record, whose process the trace is.
        line: usize,
        text: String,
        error: LineError,
    },
    /// More than the grader keeps (MiB, or records where it says):
    /// the end is gone.
    Truncated {
        mib: usize,
        #[serde(default, skip_serializing_if = "is_zero")]
        records: usize,
    },
}

/// streams-overlap's times, where overlapping brought none.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Overlap {
    /// The report gives no serial_ms and overlapped_ms.
    NoTimes,
    /// On the broker's timeline, only `fraction` of the streams' work ran
    /// beside another stream's, below `limit`.
    NotConcurrent { fraction: f64, limit: f64 },
    /// Overlapped above `limit` of serial with `chunks` chunks.
    TooSlow {
        serial_ms: f64,
        overlapped_ms: f64,
        chunks: u64,
        limit: f64,
    },
}

/// One finding of the CPU emulator, as it printed it: in the grader's runs
/// the emulator carries on past most (`emulator::exec::memory::carry_on`),
/// and a finding costs the memory-safety point.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Finding {
    pub kind: FindingKind,
    /// The `kernel.cu` line it names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The emulator's words, with block, thread and address.
    pub text: String,
}

/// What the emulator found: the kind its finding's line names, defined
/// once with the line's grammar, the tag its name here.
pub use kernels::emulator_output::FindingKind;

/// The points that are not a run's.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum CheckName {
    /// compute-sanitizer finds nothing in the first run.
    MemorySafety,
    /// The timed run's kernel against the course's.
    Speed,
    /// What the kernel does on the CPU emulator shows the exercise's
    /// lesson (`kernels::catalogue::Lesson`).
    Lesson,
}

/// What a check found, or why it earned nothing, or why it was not
/// assessed.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "why", rename_all = "kebab-case")]
pub enum CheckOutcome {
    /// No kernel was built to check.
    NoKernel,
    /// On the CPU emulator: not assessed (the speed point; the memory-safety
    /// point in gradings before the emulator's findings assessed it).
    Emulated,
    /// On the CPU emulator, whose own checks ran over every run of the
    /// kernel in the course's host code: the first run with a finding (the
    /// findings are the run's), or None when none had any.
    EmulatorChecked { found_in: Option<Tag> },
    /// `--no-sanitize`: not assessed.
    NoSanitize,
    /// The kernel could not be run in the course's host code.
    Unrunnable { reason: NotStarted },
    /// The kernel did not finish this run in time: not run again under the
    /// tools, which slow it down many times.
    TimedOut { run: Tag },
    /// The tools ran over this run (their records are the exercise's
    /// `sanitizer`).
    Sanitized { run: Tag },
    /// The kernel did not pass this run, so its speed was not measured.
    NotMeasured { run: Tag },
    /// The course's own kernel did not pass this run here: the node's
    /// fault, not assessed.
    CourseFailed { run: Tag, ended: String },
    /// The lesson counted on the CPU emulator at this run (capped as the
    /// emulator caps it), over `kernel`'s first launch: `measure` (what
    /// `kernels::catalogue::Behaviour` defines) against the most it may be.
    Counted {
        run: Tag,
        shows: kernels::catalogue::Behaviour,
        kernel: String,
        measure: f64,
        limit: f64,
    },
    /// The lesson could not be counted at this run: not assessed, as the
    /// node's doing (no emulator library in the bundle, a run that ended
    /// without the emulator's counters), never the kernel's loss.
    NotCounted { run: Tag, reason: String },
    /// Both kernels' times at this run, and the fraction the point asks.
    Measured {
        run: Tag,
        theirs_ms: f64,
        course_ms: f64,
        fraction: f64,
        asks: f64,
    },
}

/// One compute-sanitizer tool.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Tool {
    Memcheck,
    Racecheck,
    /// Reads of global memory nothing wrote.
    Initcheck,
    /// Barriers and warp syncs used wrongly (divergent, invalid masks).
    Synccheck,
}

/// Whether a count is 0, for fields left out of results.json when they are.
fn is_zero(n: &usize) -> bool {
    *n == 0
}
