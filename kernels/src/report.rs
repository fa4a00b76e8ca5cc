//! Renders a [`Report`] for a person. Only shows what the report holds, so
//! the terminal text and the JSON can never disagree.

use std::fmt::Write;

use serde::Serialize;

use crate::protocol::{Check, DeviceInfo, Report, Throughput, Timing};
use crate::units;

/// Width of the label column.
const LABEL: usize = 12;

/// The multi-line report an exercise prints without `--json`.
pub fn render<P: Serialize, R: Serialize>(report: &Report<P, R>) -> String {
    let mut out = String::new();
    line(&mut out, &report.exercise, &device(&report.device));
    if report.device.name.contains("emulator") {
        line(
            &mut out,
            "emulated",
            "kernels ran on the CPU emulator: default sizes are smaller than on a GPU, \
             and times are the emulator's, not a GPU's",
        );
    }
    line(&mut out, "parameters", &fields(&report.parameters));
    line(&mut out, "results", &fields(&report.results));
    check(&mut out, &report.check);
    if !report.timings.is_empty() {
        line(&mut out, "timings", &timings(&report.timings));
    }
    if let Some(throughput) = &report.throughput {
        line(&mut out, "throughput", &bandwidth(throughput));
    }
    if let Some(rate) = report.gflop_per_s {
        line(&mut out, "throughput", &format!("{rate:.1} GFLOP/s"));
    }
    if let Some(launches) = &report.counters {
        line(
            &mut out,
            "counters",
            "counted by the CPU emulator for the kernel's first launch, \
             as Nsight Compute defines them:",
        );
        for text in crate::emulator_counters::table(launches).lines() {
            let _ = writeln!(out, "{:<LABEL$} {text}", "");
        }
    }
    out
}

fn line(out: &mut String, label: &str, text: &str) {
    let _ = writeln!(out, "{label:<LABEL$} {text}");
}

fn device(device: &DeviceInfo) -> String {
    format!(
        "on {} (compute {}, {} SMs, {}, CUDA driver {})",
        device.name,
        device.compute_capability,
        device.multiprocessors,
        units::bytes(device.memory_bytes),
        device.driver_cuda_version
    )
}

/// `a = 1, b = 2` from any struct that serialises to a JSON object. Where
/// it has a seed, the dot family's affine `a` and `b` are left out: the
/// inputs were drawn from the seed instead (`--seed` conflicts with `--a`
/// and `--b`), and a line that read `a = i` beside it would mislead.
fn fields<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::Object(map)) => map
            .iter()
            .filter(|(key, _)| !(map.contains_key("seed") && matches!(key.as_str(), "a" | "b")))
            .map(|(key, value)| match value {
                serde_json::Value::String(text) => format!("{key} = {text}"),
                other => format!("{key} = {other}"),
            })
            .collect::<Vec<_>>()
            .join(", "),
        Ok(other) => other.to_string(),
        Err(err) => format!("(cannot show: {err})"),
    }
}

fn check(out: &mut String, check: &Check) {
    let verdict = if check.passed {
        format!(
            "PASS: {} ({} compared)",
            check.criterion,
            units::count(check.compared)
        )
    } else {
        format!(
            "FAIL: {} of {} wrong; required: {}",
            units::count(check.wrong),
            units::count(check.compared),
            check.criterion
        )
    };
    line(out, "check", &verdict);
    let indent = " ".repeat(LABEL + 3);
    if let Some(tolerance) = &check.tolerance {
        let _ = writeln!(
            out,
            "{indent}relative error {:.3e}, limit {:.3e}",
            tolerance.relative_error.0, tolerance.limit
        );
    }
    for failure in &check.failures {
        let _ = writeln!(
            out,
            "{indent}{}: expected {}, got {}",
            failure.at, failure.expected, failure.got
        );
    }
    if check.wrong > check.failures.len() as u64 && !check.failures.is_empty() {
        let more = check.wrong - check.failures.len() as u64;
        let _ = writeln!(out, "{indent}... and {} more", units::count(more));
    }
    if let Some(hint) = &check.hint {
        let _ = writeln!(out, "{indent}hint: {hint}");
    }
}

fn timings(timings: &[Timing]) -> String {
    timings
        .iter()
        .map(|t| match t.median_of {
            1 => format!("{} {:.3} ms", t.step, t.ms),
            n => format!("{} {:.3} ms (median of {n})", t.step, t.ms),
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

fn bandwidth(t: &Throughput) -> String {
    format!(
        "kernel {:.1} GB/s = {:.3} x device-to-device copy ({:.1} GB/s, measured in this run)",
        t.kernel_gb_per_s, t.ratio_to_copy, t.copy_gb_per_s
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Failure, Real, SCHEMA_VERSION};

    #[derive(Serialize)]
    struct Params {
        n: u64,
        pattern: String,
    }

    fn report(passed: bool) -> Report<Params, Params> {
        let failures = if passed {
            vec![]
        } else {
            vec![Failure {
                at: "c[4]".into(),
                expected: Real(12.0),
                got: Real(f64::NAN),
            }]
        };
        Report {
            schema_version: SCHEMA_VERSION,
            exercise: "vecadd-anyN".into(),
            device: DeviceInfo {
                name: "Test GPU".into(),
                compute_capability: "9.0".into(),
                multiprocessors: 132,
                memory_bytes: 85_000_000_000,
                driver_cuda_version: "13.0".into(),
            },
            parameters: Params {
                n: 5,
                pattern: "uniform".into(),
            },
            results: Params {
                n: 1,
                pattern: "x".into(),
            },
            check: Check {
                passed,
                criterion: "every c[i] equals 3i".into(),
                compared: 5,
                wrong: if passed { 0 } else { 2 },
                failures,
                tolerance: None,
                hint: (!passed).then(|| "is the loop grid-stride?".into()),
            },
            timings: vec![
                Timing {
                    step: "h2d".into(),
                    ms: 1.5,
                    median_of: 1,
                },
                Timing {
                    step: "kernel".into(),
                    ms: 0.25,
                    median_of: 10,
                },
            ],
            throughput: Some(Throughput {
                kernel_gb_per_s: 2900.0,
                copy_gb_per_s: 3000.0,
                ratio_to_copy: 2900.0 / 3000.0,
            }),
            gflop_per_s: None,
            counters: None,
        }
    }

    #[test]
    fn a_pass_shows_every_section() {
        let text = render(&report(true));
        let expected = "\
vecadd-anyN  on Test GPU (compute 9.0, 132 SMs, 85.00 GB, CUDA driver 13.0)
parameters   n = 5, pattern = uniform
results      n = 1, pattern = x
check        PASS: every c[i] equals 3i (5 compared)
timings      h2d 1.500 ms | kernel 0.250 ms (median of 10)
throughput   kernel 2900.0 GB/s = 0.967 x device-to-device copy (3000.0 GB/s, measured in this run)
";
        assert_eq!(text, expected);
    }

    #[test]
    fn a_failure_shows_where_what_and_a_hint() {
        let text = render(&report(false));
        assert!(
            text.contains("FAIL: 2 of 5 wrong; required: every c[i] equals 3i"),
            "{text}"
        );
        assert!(text.contains("c[4]: expected 12, got NaN"), "{text}");
        assert!(text.contains("... and 1 more"), "{text}");
        assert!(text.contains("hint: is the loop grid-stride?"), "{text}");
    }

    #[test]
    fn a_seed_replaces_the_affine_inputs_in_the_parameters_line() {
        let affine = |seed| crate::dot::Parameters {
            n: 1000,
            threads: 256,
            blocks: 2,
            runs: 1,
            a: "i".parse::<crate::dot::Affine>().unwrap(),
            b: "2i".parse::<crate::dot::Affine>().unwrap(),
            seed,
        };
        assert_eq!(
            fields(&affine(Some(5))),
            "blocks = 2, n = 1000, runs = 1, seed = 5, threads = 256"
        );
        assert_eq!(
            fields(&affine(None)),
            "a = i, b = 2i, blocks = 2, n = 1000, runs = 1, threads = 256"
        );
    }
}
