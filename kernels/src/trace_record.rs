//! The driver-call trace's wire format, one definition for both ends of the
//! pipe: the tracer (`tracer/`, preloaded into a student's binary) writes
//! it, the grader reads it. Standard library only, and constants the tracer
//! uses without allocating.
//!
//! The program finds the descriptor to write to in [`FD_VARIABLE`]. Each
//! traced process first writes [`HEADER_LINE`]; then one record per driver
//! call, `SEQ PID CALL RESULT key=value ...`: a sequence number in the
//! order the calls returned, the process id, the driver entry point, its
//! CUresult, then the call's details under the [`key`] names. Lines that
//! start with `#` are comments.
//!
//! The GPU broker (`broker/`, outside the student's process) writes its
//! record of a run in the same grammar, with more keys: the events, the
//! page-locked regions and device ranges a call touched, a launch's
//! pointer parameters, and the GPU times it measured itself
//! ([`key::GPU_START`], [`key::GPU_END`]); a record it had to cut ends
//! with [`cut_line`]. The tracer writes none of them, and readers that do
//! not ask for them read either.

use std::ffi::CStr;
use std::fmt;

/// The environment variable naming the descriptor records go to.
pub const FD_VARIABLE: &str = "CUDA_COURSE_TRACE_FD";
/// [`FD_VARIABLE`], NUL-terminated, for `getenv`.
pub const FD_VARIABLE_C: &CStr = c"CUDA_COURSE_TRACE_FD";

/// The first line each traced process writes, newline included (one write,
/// so it never interleaves); the number is the format's version.
pub const HEADER_LINE: &str = "# cuda-course-trace 1\n";

/// Whether `line` (without its newline) is the header.
pub fn is_header(line: &str) -> bool {
    line == HEADER_LINE.trim_end()
}

/// The comment a batch of runs (`crate::batch`) writes to the trace after
/// each run's calls, so the grader can tell which calls were whose: the
/// batch's nonce and the run's index, newline included (one write).
pub fn batch_mark(nonce: &str, index: usize) -> String {
    format!("# batch {nonce} {index}\n")
}

/// The trace of a batch under `nonce`, cut at its marks: the text of each
/// run that was marked, in order (the header and anything before the first
/// mark are the first run's). Marks must come as 0, 1, 2, ...: the cut
/// stops at one out of order, and text after the last mark is no run's.
pub fn split_batch<'a>(text: &'a str, nonce: &str) -> Vec<&'a str> {
    let mut runs = Vec::new();
    let mut start = 0;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let end = at + line.len();
        let index = line
            .trim_end()
            .strip_prefix("# batch ")
            .and_then(|rest| rest.strip_prefix(nonce))
            .and_then(|rest| rest.strip_prefix(' '))
            .and_then(|index| index.parse::<usize>().ok());
        if let Some(index) = index {
            if index != runs.len() {
                break;
            }
            runs.push(&text[start..at]);
            start = end;
        }
        at = end;
    }
    runs
}

/// The details' names.
pub mod key {
    /// The stream handle, `0x...`.
    pub const STREAM: &str = "stream";
    pub const BYTES: &str = "bytes";
    /// A copy's [`Direction`](super::Direction).
    pub const DIR: &str = "dir";
    /// Whether a copy's host side is page-locked: 1 or 0.
    pub const PINNED: &str = "pinned";
    /// The kernel of a launch or of `cuModuleGetFunction`.
    pub const KERNEL: &str = "kernel";
    pub const GRID: &str = "grid";
    pub const BLOCK: &str = "block";
    /// An event handle, `0x...`: the one recorded, synchronised with or
    /// waited on; the start event of `cuEventElapsedTime`.
    pub const EVENT: &str = "event";
    /// The page-locked region a copy's host side lies in, `0x...` (the
    /// broker's token; the region a `cuMemAllocHost_v2` made).
    pub const REGION: &str = "region";
    /// The device address a copy or memset starts reading, `0x...`; its
    /// length is [`BYTES`].
    pub const SRC: &str = "src";
    /// The device address a copy or memset starts writing, `0x...`; an
    /// allocation's base, for `cuMemAlloc_v2` and `cuMemFree_v2`.
    pub const DST: &str = "dst";
    /// A launch's 8-byte parameters that point into device memory the
    /// program holds, `0x...,0x...`.
    pub const POINTERS: &str = "ptrs";
    /// When the call's work started and ended on the GPU, in milliseconds
    /// after the broker's first event ([`GpuTime`](super::GpuTime)),
    /// measured by events of the broker's own on the work's stream. An
    /// event the program recorded has both at its own time.
    pub const GPU_START: &str = "gpu_start";
    pub const GPU_END: &str = "gpu_end";
    /// 1 where the broker loaded the grader's canary in place of the
    /// module the program sent.
    pub const CANARY: &str = "canary";
}

/// The comment that ends a record the broker cut at its bound: `kept`
/// calls are in it, `dropped` more were made. Newline included.
pub fn cut_line(kept: u64, dropped: u64) -> String {
    format!("# cut: {kept} calls recorded, {dropped} more not\n")
}

/// Whether `text` is a record that was cut ([`cut_line`]).
pub fn is_cut(text: &str) -> bool {
    text.lines().any(|line| line.starts_with("# cut: "))
}

/// A time on the broker's GPU timeline: nanoseconds after its first event,
/// written as milliseconds with six decimals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct GpuTime {
    pub nanos: u64,
}

impl GpuTime {
    /// From milliseconds (as `cuEventElapsedTime` gives them); a negative
    /// or NaN time is 0.
    pub fn from_ms(ms: f64) -> GpuTime {
        GpuTime {
            nanos: (ms * 1e6).round().max(0.0) as u64,
        }
    }

    pub fn ms(self) -> f64 {
        self.nanos as f64 / 1e6
    }
}

impl fmt::Display for GpuTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{:06}",
            self.nanos / 1_000_000,
            self.nanos % 1_000_000
        )
    }
}

impl std::str::FromStr for GpuTime {
    type Err = ();

    /// `MS` or `MS.FRACTION`, at most six decimals.
    fn from_str(text: &str) -> Result<GpuTime, ()> {
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        let (whole, fraction) = match text.split_once('.') {
            Some((whole, fraction)) if digits(fraction) => (whole, fraction),
            Some(_) => return Err(()),
            None => (text, ""),
        };
        if !digits(whole) || fraction.len() > 6 {
            return Err(());
        }
        let ms: u64 = whole.parse().map_err(|_| ())?;
        let padded = format!("{fraction:0<6}");
        let part: u64 = padded.parse().map_err(|_| ())?;
        ms.checked_mul(1_000_000)
            .and_then(|n| n.checked_add(part))
            .map(|nanos| GpuTime { nanos })
            .ok_or(())
    }
}

/// Which way a copy went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    feature = "protocol",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "kebab-case")
)]
pub enum Direction {
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
}

impl Direction {
    /// As a record writes it.
    pub const fn word(self) -> &'static str {
        match self {
            Direction::HostToDevice => "htod",
            Direction::DeviceToHost => "dtoh",
            Direction::DeviceToDevice => "dtod",
        }
    }
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
    /// The broker's details (None, or empty, in the tracer's records).
    pub event: Option<u64>,
    pub region: Option<u64>,
    pub src: Option<u64>,
    pub dst: Option<u64>,
    pub pointers: Vec<u64>,
    pub gpu_start: Option<GpuTime>,
    pub gpu_end: Option<GpuTime>,
    pub canary: Option<bool>,
}

impl Call {
    pub fn is_launch(&self) -> bool {
        self.name == "cuLaunchKernel"
    }

    pub fn is_async(&self) -> bool {
        self.name.contains("Async")
    }
}

/// Why a line is not a record.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(
    feature = "protocol",
    derive(serde::Serialize, serde::Deserialize),
    serde(tag = "kind", rename_all = "kebab-case")
)]
pub enum LineError {
    /// A word the record needs is missing.
    Missing {
        what: String,
    },
    NotANumber {
        what: String,
        text: String,
    },
    TooLarge {
        what: String,
        value: u64,
    },
    NotKeyValue {
        field: String,
    },
    NotAHandle {
        text: String,
    },
    BadDirection {
        value: String,
    },
    BadPinned {
        value: String,
    },
    /// A key that holds 0 or 1 holds something else.
    BadFlag {
        key: String,
        value: String,
    },
    NotATime {
        key: String,
        value: String,
    },
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LineError::Missing { what } => write!(f, "no {what}"),
            LineError::NotANumber { what, text } => write!(f, "{what} {text:?} is not a number"),
            LineError::TooLarge { what, value } => write!(f, "{what} {value} is too large"),
            LineError::NotKeyValue { field } => write!(f, "{field:?} is not key=value"),
            LineError::NotAHandle { text } => write!(f, "{text:?} is not a 0x handle"),
            LineError::BadDirection { value } => {
                write!(f, "dir={value} is not htod, dtoh or dtod")
            }
            LineError::BadPinned { value } => write!(f, "pinned={value} is not 0 or 1"),
            LineError::BadFlag { key, value } => write!(f, "{key}={value} is not 0 or 1"),
            LineError::NotATime { key, value } => {
                write!(
                    f,
                    "{key}={value} is not milliseconds (at most six decimals)"
                )
            }
        }
    }
}

/// One record.
pub fn parse_line(line: &str) -> Result<Call, LineError> {
    let mut words = line.split_whitespace();
    let mut next = |what: &str| {
        words.next().ok_or_else(|| LineError::Missing {
            what: what.to_owned(),
        })
    };
    let seq = number(next("sequence number")?, "sequence number")?;
    let pid = number(next("process id")?, "process id")?;
    let name = next("call")?.to_owned();
    let result = number(next("result")?, "result")?;
    let too_large = |what: &str, value| LineError::TooLarge {
        what: what.to_owned(),
        value,
    };
    let mut call = Call {
        seq,
        pid: u32::try_from(pid).map_err(|_| too_large("process id", pid))?,
        name,
        result: u32::try_from(result).map_err(|_| too_large("result", result))?,
        stream: None,
        bytes: None,
        direction: None,
        pinned: None,
        kernel: None,
        event: None,
        region: None,
        src: None,
        dst: None,
        pointers: Vec::new(),
        gpu_start: None,
        gpu_end: None,
        canary: None,
    };
    for field in words {
        let (name, value) = field
            .split_once('=')
            .ok_or_else(|| LineError::NotKeyValue {
                field: field.to_owned(),
            })?;
        match name {
            key::STREAM => call.stream = Some(hex(value)?),
            key::BYTES => call.bytes = Some(number(value, key::BYTES)?),
            key::DIR => {
                let all = [
                    Direction::HostToDevice,
                    Direction::DeviceToHost,
                    Direction::DeviceToDevice,
                ];
                let direction = all.into_iter().find(|d| d.word() == value);
                call.direction = Some(direction.ok_or_else(|| LineError::BadDirection {
                    value: value.to_owned(),
                })?);
            }
            key::PINNED => {
                call.pinned = Some(match value {
                    "1" => true,
                    "0" => false,
                    other => {
                        return Err(LineError::BadPinned {
                            value: other.to_owned(),
                        });
                    }
                })
            }
            key::KERNEL => call.kernel = Some(value.to_owned()),
            key::EVENT => call.event = Some(hex(value)?),
            key::REGION => call.region = Some(hex(value)?),
            key::SRC => call.src = Some(hex(value)?),
            key::DST => call.dst = Some(hex(value)?),
            key::POINTERS => {
                call.pointers = value.split(',').map(hex).collect::<Result<_, _>>()?;
            }
            key::GPU_START => call.gpu_start = Some(time(name, value)?),
            key::GPU_END => call.gpu_end = Some(time(name, value)?),
            key::CANARY => call.canary = Some(flag(name, value)?),
            // grid, block, host: details for a person reading it.
            _ => {}
        }
    }
    Ok(call)
}

fn time(key: &str, value: &str) -> Result<GpuTime, LineError> {
    value.parse().map_err(|()| LineError::NotATime {
        key: key.to_owned(),
        value: value.to_owned(),
    })
}

fn flag(key: &str, value: &str) -> Result<bool, LineError> {
    match value {
        "1" => Ok(true),
        "0" => Ok(false),
        _ => Err(LineError::BadFlag {
            key: key.to_owned(),
            value: value.to_owned(),
        }),
    }
}

fn number(text: &str, what: &str) -> Result<u64, LineError> {
    text.parse().map_err(|_| LineError::NotANumber {
        what: what.to_owned(),
        text: text.to_owned(),
    })
}

fn hex(text: &str) -> Result<u64, LineError> {
    text.strip_prefix("0x")
        .and_then(|digits| u64::from_str_radix(digits, 16).ok())
        .ok_or_else(|| LineError::NotAHandle {
            text: text.to_owned(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_s_two_spellings_agree() {
        assert_eq!(FD_VARIABLE_C.to_str(), Ok(FD_VARIABLE));
        assert!(is_header("# cuda-course-trace 1"));
        assert!(!is_header("# cuda-course-trace 2"));
    }

    #[test]
    fn a_batch_s_trace_is_cut_at_its_marks_in_order() {
        let nonce = "0123456789abcdef";
        let text = format!(
            "{HEADER_LINE}1 7 cuInit 0\n{}2 7 cuLaunchKernel 0\n# batch fedcba9876543210 1\n{}3 7 cuInit 0\n",
            batch_mark(nonce, 0),
            batch_mark(nonce, 1)
        );
        let runs = split_batch(&text, nonce);
        assert_eq!(
            runs,
            [
                "# cuda-course-trace 1\n1 7 cuInit 0\n",
                // Another nonce's mark is a comment of the run's.
                "2 7 cuLaunchKernel 0\n# batch fedcba9876543210 1\n"
            ]
        );
        // A mark out of order ends the cut; unmarked text is no run's.
        let skipped = format!("{}a\n{}b\n", batch_mark(nonce, 0), batch_mark(nonce, 2));
        assert_eq!(split_batch(&skipped, nonce), [""]);
        assert!(split_batch("1 7 cuInit 0\n", nonce).is_empty());
    }

    #[test]
    fn a_record_s_words_and_details_are_read() {
        let call = parse_line(
            "5 7 cuMemcpyDtoHAsync_v2 0 stream=0x5a bytes=4096 dir=dtoh pinned=1 host=0x1",
        )
        .unwrap();
        assert_eq!(
            (call.seq, call.pid, call.result, call.stream, call.bytes),
            (5, 7, 0, Some(0x5a), Some(4096))
        );
        assert_eq!(call.direction, Some(Direction::DeviceToHost));
        assert_eq!(call.pinned, Some(true));
        assert!(call.is_async() && !call.is_launch());
    }

    #[test]
    fn a_garbled_line_says_what_is_wrong() {
        for (text, says) in [
            ("1 7 cuLaunchKernel", "no result"),
            (
                "x 7 cuCtxSynchronize 0",
                "sequence number \"x\" is not a number",
            ),
            ("1 7 cuMemcpyHtoD_v2 0 dir=up", "dir=up is not htod"),
            ("1 7 cuMemcpyHtoD_v2 0 stream=12", "is not a 0x handle"),
            ("1 7 cuMemcpyHtoD_v2 0 pinned", "is not key=value"),
            (
                "1 99999999999 cuInit 0",
                "process id 99999999999 is too large",
            ),
        ] {
            let err = parse_line(text).unwrap_err().to_string();
            assert!(err.contains(says), "{text}: {err}");
        }
    }

    #[test]
    fn the_broker_s_details_are_read_and_the_tracer_s_lines_still_are() {
        let call = parse_line(
            "9 7 cuMemcpyHtoDAsync_v2 0 stream=0x120 bytes=64 dir=htod pinned=1 \
             region=0x110 dst=0x7f0000 gpu_start=1.5 gpu_end=12.000250",
        )
        .unwrap();
        assert_eq!(
            (call.region, call.dst, call.src),
            (Some(0x110), Some(0x7f0000), None)
        );
        assert_eq!(call.gpu_start, Some(GpuTime { nanos: 1_500_000 }));
        assert_eq!(call.gpu_end.map(GpuTime::ms), Some(12.00025));
        let launch = parse_line(
            "3 7 cuLaunchKernel 0 stream=0x0 kernel=k grid=1,1,1 block=1,1,1 ptrs=0x10,0x20 canary=1",
        )
        .unwrap();
        assert_eq!(launch.pointers, [0x10, 0x20]);
        assert_eq!(launch.canary, Some(true));
        // The tracer's event detail is a handle too.
        let sync = parse_line("4 7 cuEventSynchronize 0 event=0x5a").unwrap();
        assert_eq!(sync.event, Some(0x5a));
        for (text, says) in [
            ("1 7 cuLaunchKernel 0 gpu_start=-1", "is not milliseconds"),
            ("1 7 cuLaunchKernel 0 gpu_end=1.1234567", "at most six"),
            ("1 7 cuLaunchKernel 0 gpu_end=1.", "is not milliseconds"),
            ("1 7 cuLaunchKernel 0 ptrs=0x1,2", "is not a 0x handle"),
            (
                "1 7 cuModuleLoadData 0 canary=yes",
                "canary=yes is not 0 or 1",
            ),
        ] {
            let err = parse_line(text).unwrap_err().to_string();
            assert!(err.contains(says), "{text}: {err}");
        }
    }

    #[test]
    fn gpu_times_are_written_as_they_are_read() {
        for nanos in [0, 1, 999_999, 1_000_000, 123_456_789_012] {
            let time = GpuTime { nanos };
            assert_eq!(time.to_string().parse(), Ok(time));
        }
        assert_eq!(GpuTime::from_ms(0.25).to_string(), "0.250000");
        assert_eq!(GpuTime::from_ms(-3.0), GpuTime { nanos: 0 });
        assert!("99999999999999999999".parse::<GpuTime>().is_err());
    }

    #[test]
    fn a_cut_record_says_so() {
        let text = format!("{HEADER_LINE}1 7 cuInit 0\n{}", cut_line(1, 5));
        assert!(is_cut(&text) && !is_cut(HEADER_LINE));
        assert!(parse_line("1 7 cuInit 0").is_ok());
    }
}
