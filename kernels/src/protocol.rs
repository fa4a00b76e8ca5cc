//! The result protocol: the one JSON object an exercise prints with `--json`,
//! and the types the grader parses it back into. The same types do both, so
//! the two sides cannot drift (docs/src/design.md, "The result protocol").

use std::fmt;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::exit_code::Exit;

/// Bumped when a field changes meaning or disappears; adding an optional
/// field keeps the version.
pub const SCHEMA_VERSION: u32 = 1;

/// What a run that got as far as checking its answer reports.
/// `P` and `R` are the exercise's own parameter and result types.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Report<P, R> {
    pub schema_version: u32,
    pub exercise: String,
    pub device: DeviceInfo,
    pub parameters: P,
    pub results: R,
    pub check: Check,
    /// In the order the steps ran.
    pub timings: Vec<Timing>,
    /// Absent when the kernel never completed a timed run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput: Option<Throughput>,
    /// For arithmetic-bound kernels (matmul): floating-point operations the
    /// problem needs (2·W³ for a W×W product) over the kernel's median time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gflop_per_s: Option<f64>,
    /// What the CPU emulator counted where `--counters` asked
    /// (`crate::emulator_counters`): the kernel's first launch, each kernel
    /// it launched. Absent otherwise, and on a GPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<Vec<crate::emulator_counters::LaunchCounters>>,
}

impl<P, R> Report<P, R> {
    pub fn exit(&self) -> Exit {
        if self.check.passed {
            Exit::Passed
        } else {
            Exit::Failed
        }
    }
}

/// What a run that stopped before checking reports: bad arguments, no GPU, a
/// CUDA error, or a step the student has not written yet.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct ErrorReport {
    pub schema_version: u32,
    pub exercise: String,
    pub error: ErrorInfo,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct ErrorInfo {
    pub kind: ErrorKind,
    /// The message a person sees, possibly several lines.
    pub message: String,
    /// The CUDA error name where there is one, e.g. `CUDA_ERROR_ILLEGAL_ADDRESS`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_error: Option<String>,
}

#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    BadArguments,
    /// No NVIDIA GPU or driver: the machine cannot run kernels.
    NoGpu,
    /// The driver refused the PTX (too new, wrong architecture, invalid).
    PtxRejected,
    /// Any other CUDA error, a failed launch included.
    Cuda,
    /// A `TODO(step N)` is still in place.
    Unfinished,
    /// One launch of the kernel did not compute what the checked launch
    /// did (it skipped its work, or wrote something else): a failed check.
    StaleLaunch,
}

impl ErrorKind {
    pub fn exit(self) -> Exit {
        match self {
            ErrorKind::BadArguments => Exit::BadArguments,
            ErrorKind::Unfinished | ErrorKind::StaleLaunch => Exit::Failed,
            ErrorKind::NoGpu | ErrorKind::PtxRejected | ErrorKind::Cuda => Exit::CudaError,
        }
    }
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct DeviceInfo {
    pub name: String,
    /// "major.minor", e.g. "9.0" for Hopper.
    pub compute_capability: String,
    pub multiprocessors: u32,
    pub memory_bytes: u64,
    /// The newest CUDA version the driver supports, e.g. "13.0".
    pub driver_cuda_version: String,
}

/// The verdict on the GPU's answer, with enough detail to act on.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Check {
    pub passed: bool,
    /// What was required, e.g. "every c\[i] equals 3·(i mod 4096)".
    pub criterion: String,
    /// How many values were compared, and how many of them were wrong.
    pub compared: u64,
    pub wrong: u64,
    /// The first few wrong values, in index order.
    pub failures: Vec<Failure>,
    /// For checks with a tolerance: the error measured and the limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<Tolerance>,
    /// What the pattern of failures suggests, when it suggests something.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Failure {
    /// Where, e.g. "c\[270336]".
    pub at: String,
    pub expected: Real,
    pub got: Real,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Tolerance {
    pub relative_error: Real,
    pub limit: f64,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Timing {
    /// "h2d", "kernel", "d2h", ...
    pub step: String,
    pub ms: f64,
    /// How many timed runs `ms` is the median of.
    pub median_of: u32,
}

impl Timing {
    pub fn new(step: &str, ms: f64, median_of: u32) -> Timing {
        Timing {
            step: step.to_owned(),
            ms,
            median_of,
        }
    }
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Throughput {
    /// Bytes the kernel must move at least, over its median time.
    pub kernel_gb_per_s: f64,
    /// Device-to-device copy bandwidth measured in the same process, counting
    /// bytes read plus bytes written: this GPU's practical memory limit.
    pub copy_gb_per_s: f64,
    pub ratio_to_copy: f64,
}

/// A float that may be NaN or infinite: what a broken kernel produces. JSON
/// has no such numbers, so those travel as the strings "NaN", "inf", "-inf".
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Real(pub f64);

impl fmt::Display for Real {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl Serialize for Real {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            x if x.is_finite() => serializer.serialize_f64(x),
            x if x.is_nan() => serializer.serialize_str("NaN"),
            x if x > 0.0 => serializer.serialize_str("inf"),
            _ => serializer.serialize_str("-inf"),
        }
    }
}

impl<'de> Deserialize<'de> for Real {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Wire {
            Number(f64),
            Text(String),
        }
        match Wire::deserialize(deserializer)? {
            Wire::Number(x) => Ok(Real(x)),
            Wire::Text(text) => match text.as_str() {
                "NaN" => Ok(Real(f64::NAN)),
                "inf" => Ok(Real(f64::INFINITY)),
                "-inf" => Ok(Real(f64::NEG_INFINITY)),
                other => Err(serde::de::Error::custom(format!(
                    "expected a number, \"NaN\", \"inf\" or \"-inf\", got {other:?}"
                ))),
            },
        }
    }
}

/// One exercise run's output, as parsed from its stdout.
#[derive(Debug, Clone, PartialEq)]
pub enum Output<P, R> {
    Report(Box<Report<P, R>>),
    Error(ErrorReport),
}

/// Why a run's stdout is not a protocol object.
#[derive(Debug)]
pub enum ParseError {
    NotJson(serde_json::Error),
    WrongSchema { found: Option<u64> },
    WrongShape(serde_json::Error),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::NotJson(err) => write!(f, "the output is not one JSON object: {err}"),
            ParseError::WrongSchema { found } => write!(
                f,
                "the output has schema_version {found:?}; this reader knows {SCHEMA_VERSION}"
            ),
            ParseError::WrongShape(err) => {
                write!(f, "the JSON object is not a result report: {err}")
            }
        }
    }
}

impl std::error::Error for ParseError {}

/// Parses what an exercise printed with `--json`.
pub fn parse_output<P: DeserializeOwned, R: DeserializeOwned>(
    stdout: &str,
) -> Result<Output<P, R>, ParseError> {
    let value: serde_json::Value = serde_json::from_str(stdout).map_err(ParseError::NotJson)?;
    let version = value.get("schema_version").and_then(|v| v.as_u64());
    if version != Some(u64::from(SCHEMA_VERSION)) {
        return Err(ParseError::WrongSchema { found: version });
    }
    if value.get("error").is_some() {
        serde_json::from_value(value)
            .map(Output::Error)
            .map_err(ParseError::WrongShape)
    } else {
        serde_json::from_value(value)
            .map(|report| Output::Report(Box::new(report)))
            .map_err(ParseError::WrongShape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    struct Params {
        n: u64,
    }

    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    struct Results {
        sum: Real,
    }

    fn report() -> Report<Params, Results> {
        Report {
            schema_version: SCHEMA_VERSION,
            exercise: "demo".into(),
            device: DeviceInfo {
                name: "Test GPU".into(),
                compute_capability: "9.0".into(),
                multiprocessors: 132,
                memory_bytes: 80 << 30,
                driver_cuda_version: "13.0".into(),
            },
            parameters: Params { n: 7 },
            results: Results {
                sum: Real(f64::NAN),
            },
            check: Check {
                passed: false,
                criterion: "sum equals 21".into(),
                compared: 1,
                wrong: 1,
                failures: vec![Failure {
                    at: "sum".into(),
                    expected: Real(21.0),
                    got: Real(f64::NEG_INFINITY),
                }],
                tolerance: Some(Tolerance {
                    relative_error: Real(f64::INFINITY),
                    limit: 1e-6,
                }),
                hint: Some("look".into()),
            },
            timings: vec![Timing {
                step: "kernel".into(),
                ms: 0.25,
                median_of: 10,
            }],
            throughput: Some(Throughput {
                kernel_gb_per_s: 1.0,
                copy_gb_per_s: 2.0,
                ratio_to_copy: 0.5,
            }),
            gflop_per_s: Some(1234.5),
            counters: None,
        }
    }

    /// NaN != NaN, so compare through the wire form.
    fn wire<T: Serialize>(value: &T) -> String {
        serde_json::to_string(value).unwrap()
    }

    #[test]
    fn a_report_survives_the_round_trip_with_non_finite_values() {
        let sent = report();
        let text = wire(&sent);
        assert!(
            text.contains("\"NaN\"") && text.contains("\"-inf\""),
            "{text}"
        );
        match parse_output::<Params, Results>(&text).unwrap() {
            Output::Report(back) => assert_eq!(wire(&back), text),
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn an_error_report_parses_as_an_error() {
        let sent = ErrorReport {
            schema_version: SCHEMA_VERSION,
            exercise: "demo".into(),
            error: ErrorInfo {
                kind: ErrorKind::NoGpu,
                message: "no GPU".into(),
                cuda_error: Some("CUDA_ERROR_NO_DEVICE".into()),
            },
        };
        let text = wire(&sent);
        assert!(text.contains("\"kind\":\"no-gpu\""), "{text}");
        assert_eq!(
            parse_output::<Params, Results>(&text).unwrap(),
            Output::Error(sent)
        );
    }

    #[test]
    fn garbage_and_other_schemas_are_told_apart() {
        assert!(matches!(
            parse_output::<Params, Results>("PASS"),
            Err(ParseError::NotJson(_))
        ));
        assert!(matches!(
            parse_output::<Params, Results>(r#"{"schema_version": 99}"#),
            Err(ParseError::WrongSchema { found: Some(99) })
        ));
        assert!(matches!(
            parse_output::<Params, Results>(r#"{"schema_version": 1, "exercise": "x"}"#),
            Err(ParseError::WrongShape(_))
        ));
    }

    #[test]
    fn a_string_that_is_not_a_special_float_is_rejected() {
        let err = serde_json::from_str::<Real>("\"12\"").unwrap_err();
        assert!(err.to_string().contains("expected a number"), "{err}");
    }

    #[test]
    fn exit_codes_follow_the_verdict() {
        let mut passed = report();
        passed.check.passed = true;
        assert_eq!(passed.exit(), Exit::Passed);
        assert_eq!(report().exit(), Exit::Failed);
        assert_eq!(ErrorKind::BadArguments.exit().code(), 2);
        assert_eq!(ErrorKind::Unfinished.exit().code(), 1);
        assert_eq!(ErrorKind::NoGpu.exit().code(), 3);
    }
}
