//! Test plans: the runs the grader makes of each exercise, drawn from a seed
//! the grader records (so a hard-coded answer fails, and a regrade with the
//! same seed makes the same runs), each with its points; and the grader's
//! own recheck of what a run reports, against closed forms it computes
//! itself rather than the binary's word.
//!
//! Every plan includes the sizes that expose its exercise's classic bugs: a
//! grid smaller than n (no grid-stride loop), n not a multiple of the block
//! (no bounds check), widths with partial tiles, sizes small enough that one
//! missing element shows in a float32 sum, uneven chunks.

use kernels::checksum::Checksum;
use kernels::dot::tolerance::limit;
use kernels::dot::{self, Affine};
use kernels::{memspace, streams};
use serde_json::Value;

/// One run of an exercise binary.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// What the run is about, for the feedback.
    pub about: String,
    /// Arguments, without `--json` (the runner adds it).
    pub args: Vec<String>,
    /// Parameters the report must echo back: the binary ran what was asked.
    pub expect: Vec<(&'static str, Value)>,
    pub points: u32,
}

/// Points for a run that passes; the PTX inspection is worth one more.
const RUN_POINTS: u32 = 2;

/// A run of `args`, each flag with the value the report must echo: a number
/// for sizes and counts, a string for `--a`, `--b` and `--pattern`.
fn run(about: String, args: Vec<(&'static str, Value)>) -> Run {
    let mut flat = Vec::new();
    let mut expect = Vec::new();
    for (flag, value) in args {
        flat.push(format!("--{flag}"));
        flat.push(match &value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        });
        if flag != "runs" {
            expect.push((flag, value));
        }
    }
    Run {
        about,
        args: flat,
        expect,
        points: RUN_POINTS,
    }
}

/// The runs for `exercise` (a catalogue name), drawn from `seed`.
pub fn plan(exercise: &str, seed: u64) -> Vec<Run> {
    // Each exercise's own stream of numbers, so adding runs to one plan
    // does not change another's.
    let mut rng = fastrand::Rng::with_seed(seed ^ fnv(exercise));
    match exercise {
        "vecadd-anyN" => vecadd(&mut rng),
        "dot-gm" => dot(&mut rng, false),
        "dot-sm" | "dot-atomic" => dot(&mut rng, true),
        "matmul-naive" => matmul(&mut rng, "block", &[8, 16, 32]),
        "matmul-tiled" => matmul(&mut rng, "tile", &[16, 32]),
        "memspace-timing" => memspace(&mut rng),
        "streams-overlap" => streams(&mut rng),
        _ => Vec::new(),
    }
}

/// A stable hash of a name (FNV-1a): the standard library's is seeded per process.
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A number for a run's arguments.
fn num(value: impl Into<u64>) -> Value {
    Value::from(value.into())
}

/// A string for a run's arguments.
fn text(value: impl ToString) -> Value {
    Value::from(value.to_string())
}

fn vecadd(rng: &mut fastrand::Rng) -> Vec<Run> {
    let small = rng.u64(1000..5000) | 1;
    let middle = rng.u64(1 << 20..1 << 22) | 1;
    let large = rng.u64(1 << 25..1 << 26) | 1;
    let threads: u32 = [64, 96, 128, 256][rng.usize(..4)];
    let blocks = rng.u32(3..40);
    vec![
        run(
            "one element".into(),
            vec![
                ("n", num(1u32)),
                ("threads", num(32u32)),
                ("runs", num(2u32)),
            ],
        ),
        run(
            format!("n = {small}, odd, with 2 blocks of 128: a grid smaller than n"),
            vec![
                ("n", num(small)),
                ("threads", num(128u32)),
                ("blocks", num(2u32)),
                ("runs", num(2u32)),
            ],
        ),
        run(
            format!("n = {middle} with {blocks} blocks of {threads}: every thread loops"),
            vec![
                ("n", num(middle)),
                ("threads", num(threads)),
                ("blocks", num(blocks)),
                ("runs", num(2u32)),
            ],
        ),
        run(
            format!("n = {large} with the default grid"),
            vec![("n", num(large)), ("runs", num(2u32))],
        ),
    ]
}

fn affine(rng: &mut fastrand::Rng) -> Affine {
    // Never the constant 0, which would make every product 0.
    loop {
        let x = Affine::new(rng.i64(-9..=9), rng.i64(-9..=9));
        if x != Affine::new(0, 0) {
            return x;
        }
    }
}

fn dot(rng: &mut fastrand::Rng, power_of_two: bool) -> Vec<Run> {
    let small = rng.u64(1000..5000) | 1;
    let million = rng.u64(900_000..1_100_000);
    let large = rng.u64(1 << 24..1 << 25) | 1;
    let (a, b) = (affine(rng), affine(rng));
    let threads = |rng: &mut fastrand::Rng| {
        if power_of_two {
            num(32u32 << rng.u32(0..6))
        } else {
            num(rng.u32(32..1024))
        }
    };
    let (t1, t2) = (threads(rng), threads(rng));
    vec![
        run(
            format!("n = {small}, a = {a}, b = {b}: small enough that one element shows"),
            vec![
                ("n", num(small)),
                ("threads", t1.clone()),
                ("a", text(a)),
                ("b", text(b)),
                ("runs", num(3u32)),
            ],
        ),
        run(
            format!("n = {million} with {t2} threads, a = i, b = 2"),
            vec![
                ("n", num(million)),
                ("threads", t2),
                ("a", text("i")),
                ("b", text("2")),
                ("runs", num(3u32)),
            ],
        ),
        run(
            format!("n = {large} with the default inputs: every block's share counts"),
            vec![("n", num(large)), ("threads", t1), ("runs", num(2u32))],
        ),
    ]
}

fn matmul(rng: &mut fastrand::Rng, flag: &'static str, edges: &[u32]) -> Vec<Run> {
    let edge = |rng: &mut fastrand::Rng| num(edges[rng.usize(..edges.len())]);
    let tiny = rng.u32(2..16);
    let partial = rng.u32(17..64) | 1;
    let middle = rng.u32(100..300);
    let (e1, e2, e3) = (edge(rng), edge(rng), edge(rng));
    let mut runs = vec![
        run(
            format!("W = {tiny}, smaller than a block"),
            vec![("width", num(tiny)), (flag, e1), ("runs", num(2u32))],
        ),
        run(
            format!("W = {partial}: partial tiles on the right and bottom"),
            vec![("width", num(partial)), (flag, e2), ("runs", num(2u32))],
        ),
        run(
            format!("W = {middle}"),
            vec![("width", num(middle)), (flag, e3), ("runs", num(2u32))],
        ),
        run(
            "W = 1024".into(),
            vec![("width", num(1024u32)), ("runs", num(2u32))],
        ),
    ];
    // Both exercises report the block's edge as `block`; the tiled one's
    // flag for it is --tile.
    for run in &mut runs {
        for (key, _) in &mut run.expect {
            if *key == "tile" {
                *key = "block";
            }
        }
    }
    runs
}

fn memspace(rng: &mut fastrand::Rng) -> Vec<Run> {
    let blocks = rng.u32(3..50);
    let threads: u32 = [96, 128, 256, 1024][rng.usize(..4)];
    vec![
        run(
            "the default grid, uniform reads".into(),
            vec![("runs", num(2u32))],
        ),
        run(
            format!("{blocks} blocks of {threads}, per-thread reads"),
            vec![
                ("blocks", num(blocks)),
                ("threads", num(threads)),
                ("pattern", text("per-thread")),
                ("runs", num(2u32)),
            ],
        ),
    ]
}

fn streams(rng: &mut fastrand::Rng) -> Vec<Run> {
    let n = rng.u64(900_000..1_100_000) | 1;
    let work = rng.u32(10..200);
    vec![
        run(
            format!("n = {n} in 7 uneven chunks over 3 streams, work {work}"),
            vec![
                ("n", num(n)),
                ("streams", num(3u32)),
                ("chunks", num(7u32)),
                ("work", num(work)),
                ("runs", num(1u32)),
            ],
        ),
        run(
            "n = 2^22 over 4 streams".into(),
            vec![
                ("n", num(1u64 << 22)),
                ("streams", num(4u32)),
                ("work", num(100u32)),
                ("runs", num(1u32)),
            ],
        ),
    ]
}

/// The grader's own check of a passing report: it ran what was asked, and
/// its result matches what the grader computes. Err says what is off.
pub fn recheck(exercise: &str, run: &Run, report: &Value) -> Result<(), String> {
    let params = &report["parameters"];
    for (key, want) in &run.expect {
        if &params[*key] != want {
            return Err(format!(
                "the report says {key} = {}, but the grader asked for {want}",
                params[*key]
            ));
        }
    }
    let number = |v: &Value, what: &str| {
        v.as_f64()
            .ok_or_else(|| format!("the report has no {what}"))
    };
    let count = |v: &Value, what: &str| {
        v.as_u64()
            .ok_or_else(|| format!("the report has no {what}"))
    };
    let compared = count(&report["check"]["compared"], "check.compared")?;
    let expect_compared = |want: u64| {
        (compared == want).then_some(()).ok_or_else(|| {
            format!("the report compared {compared} values, not the {want} the run produces")
        })
    };
    match exercise {
        "vecadd-anyN" => {
            let n = count(&params["n"], "n")?;
            expect_compared(n)?;
            let want = kernels::vecadd::expected_checksum(n) as f64;
            let got = number(&report["results"]["checksum"], "checksum")?;
            (got == want)
                .then_some(())
                .ok_or_else(|| format!("the checksum of c is {got}; the grader computes {want}"))
        }
        "dot-gm" | "dot-sm" | "dot-atomic" => {
            let variant = match exercise {
                "dot-gm" => dot::Variant::Gm,
                "dot-sm" => dot::Variant::Sm,
                _ => dot::Variant::Atomic,
            };
            let p: dot::Parameters = serde_json::from_value(params.clone())
                .map_err(|err| format!("the report's parameters: {err}"))?;
            let inputs = p.inputs();
            let (exact, scale) = (inputs.dot(p.n), inputs.abs_dot(p.n));
            let got = number(&report["results"]["dot"], "dot")?;
            let error = dot::tolerance::relative_error(got, exact, scale);
            let limit = limit(variant, &p);
            (error <= limit)
                .then_some(())
                .ok_or_else(|| format!("the dot is {got}; the grader computes {exact}, off by {error:.2e} of Σ|a·b| (limit {limit:.2e})"))
        }
        "matmul-naive" | "matmul-tiled" => {
            let w = count(&params["width"], "width")?;
            expect_compared(w * w)?;
            let rms = number(&report["results"]["rms_vs_golden"], "rms_vs_golden")?;
            (rms == 0.0)
                .then_some(())
                .ok_or_else(|| format!("P differs from the CPU golden model by an RMS of {rms}"))
        }
        "memspace-timing" => {
            let p: memspace::Parameters = parameters(params)?;
            expect_compared(4 * p.grid_threads())?;
            values_checksum(report, &memspace::expected_checksum(&p))
        }
        "streams-overlap" => {
            let p: streams::Parameters = parameters(params)?;
            expect_compared(2 * p.n)?;
            values_checksum(report, &streams::expected_checksum(&p))
        }
        other => Err(format!("no plan for {other}")),
    }
}

fn parameters<P: serde::de::DeserializeOwned>(params: &Value) -> Result<P, String> {
    serde_json::from_value(params.clone()).map_err(|err| format!("the report's parameters: {err}"))
}

/// The report's checksum of every output value against the one the grader
/// computes from the run's parameters: the values themselves, not a count.
fn values_checksum(report: &Value, want: &Checksum) -> Result<(), String> {
    let field = &report["results"]["checksum"];
    if field.is_null() {
        return Err(
            "the report has no results.checksum: the course's driver writes one \
                    from the values copied back, so this report came from other code"
                .into(),
        );
    }
    let got: Checksum = serde_json::from_value(field.clone())
        .map_err(|err| format!("the report's results.checksum: {err}"))?;
    got.mismatch(want).map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::EXERCISES;
    use serde_json::json;

    #[test]
    fn every_exercise_has_a_plan_and_the_same_seed_gives_the_same_runs() {
        for exercise in EXERCISES {
            let once = plan(exercise.name, 7);
            assert!(!once.is_empty(), "{}", exercise.name);
            assert_eq!(once, plan(exercise.name, 7), "{}", exercise.name);
            assert!(once.iter().all(|r| r.args.len() % 2 == 0 && r.points > 0));
        }
    }

    #[test]
    fn another_seed_gives_other_sizes() {
        let differ = (1..20)
            .filter(|&seed| plan("dot-sm", seed) != plan("dot-sm", 0))
            .count();
        assert_eq!(differ, 19);
    }

    fn arg(run: &Run, flag: &str) -> Option<u64> {
        let at = run.args.iter().position(|a| a == &format!("--{flag}"))?;
        run.args[at + 1].parse().ok()
    }

    #[test]
    fn plans_include_the_sizes_that_expose_the_classic_bugs() {
        for seed in 0..50 {
            let vecadd = plan("vecadd-anyN", seed);
            // A grid smaller than n, with n not a multiple of the block.
            assert!(vecadd.iter().any(|r| {
                let (n, t, b) = (arg(r, "n"), arg(r, "threads"), arg(r, "blocks"));
                matches!((n, t, b), (Some(n), Some(t), Some(b)) if b * t < n && n % t != 0)
            }));
            // A width below every block edge, and one with partial tiles.
            for (exercise, flag) in [("matmul-naive", "block"), ("matmul-tiled", "tile")] {
                let widths: Vec<u64> = plan(exercise, seed)
                    .iter()
                    .filter_map(|r| arg(r, "width"))
                    .collect();
                assert!(widths.iter().any(|&w| w < 16), "{exercise}: {widths:?}");
                assert!(
                    widths.iter().any(|&w| w > 16 && w % 16 != 0),
                    "{exercise}: {widths:?}"
                );
                assert!(plan(exercise, seed).iter().any(|r| arg(r, flag).is_some()));
            }
            // dot: an n where one missing element is above float32's resolution.
            assert!(
                plan("dot-atomic", seed)
                    .iter()
                    .any(|r| arg(r, "n").is_some_and(|n| n < 5000))
            );
            // dot-sm and dot-atomic take power-of-two blocks.
            for r in plan("dot-sm", seed) {
                assert!(
                    arg(&r, "threads").is_none_or(|t| t.is_power_of_two()),
                    "{r:?}"
                );
            }
        }
    }

    /// The parameter names an exercise's report has, from the course's
    /// own report types.
    fn parameter_keys(exercise: &str) -> Vec<String> {
        use kernels::{matmul, memspace, streams, vecadd};
        let value = match exercise {
            "vecadd-anyN" => serde_json::to_value(vecadd::Parameters {
                n: 1,
                threads: 1,
                blocks: 1,
                runs: 1,
            }),
            "matmul-naive" | "matmul-tiled" => serde_json::to_value(matmul::Parameters {
                width: 1,
                block: 1,
                runs: 1,
            }),
            "memspace-timing" => serde_json::to_value(memspace::Parameters {
                threads: 1,
                blocks: 1,
                runs: 1,
                pattern: memspace::Pattern::Uniform,
            }),
            "streams-overlap" => serde_json::to_value(streams::Parameters {
                n: 1,
                streams: 1,
                chunks: 1,
                work: 1,
                runs: 1,
            }),
            _ => serde_json::to_value(dot::Parameters {
                n: 1,
                threads: 1,
                blocks: 1,
                runs: 1,
                a: Affine::new(0, 1),
                b: Affine::new(0, 1),
            }),
        };
        value
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    }

    #[test]
    fn every_expectation_names_a_parameter_the_report_has() {
        for exercise in EXERCISES {
            let keys = parameter_keys(exercise.name);
            for seed in 0..10 {
                for run in plan(exercise.name, seed) {
                    for (key, _) in &run.expect {
                        assert!(
                            keys.iter().any(|k| k == key),
                            "{}: {key} is not in {keys:?}",
                            exercise.name
                        );
                    }
                }
            }
        }
    }

    fn dot_report(n: u64, got: f64) -> Value {
        json!({
            "parameters": {"n": n, "threads": 256, "blocks": 1056, "runs": 2, "a": "i", "b": "2"},
            "results": {"dot": got},
            "check": {"compared": 1}
        })
    }

    #[test]
    fn a_right_dot_passes_the_recheck_and_a_block_short_one_does_not() {
        let r = run(
            "t".into(),
            vec![("n", num(1_000_000u64)), ("a", text("i")), ("b", text("2"))],
        );
        let exact = (1_000_000u64 * 999_999) as f64;
        assert_eq!(recheck("dot-sm", &r, &dot_report(1_000_000, exact)), Ok(()));
        let short = recheck(
            "dot-sm",
            &r,
            &dot_report(1_000_000, exact * (1.0 - 1.0 / 1056.0)),
        );
        assert!(
            short
                .unwrap_err()
                .contains("the grader computes 999999000000")
        );
    }

    #[test]
    fn a_report_of_other_parameters_than_asked_is_caught() {
        let r = run(
            "t".into(),
            vec![("n", num(5000u64)), ("a", text("i")), ("b", text("2"))],
        );
        let err = recheck("dot-gm", &r, &dot_report(1_000_000, 0.0)).unwrap_err();
        assert!(
            err.contains("n = 1000000") && err.contains("asked for 5000"),
            "{err}"
        );
    }

    #[test]
    fn a_printed_checksum_that_is_not_the_grader_s_fails() {
        let r = run("t".into(), vec![("n", num(1000u64))]);
        let want = kernels::vecadd::expected_checksum(1000) as f64;
        let report = |checksum: f64| json!({"parameters": {"n": 1000}, "results": {"checksum": checksum}, "check": {"compared": 1000}});
        assert_eq!(recheck("vecadd-anyN", &r, &report(want)), Ok(()));
        assert!(recheck("vecadd-anyN", &r, &report(want + 3.0)).is_err());
        let fewer = json!({"parameters": {"n": 1000}, "results": {"checksum": want}, "check": {"compared": 999}});
        assert!(
            recheck("vecadd-anyN", &r, &fewer)
                .unwrap_err()
                .contains("999")
        );
    }

    /// A memspace report of blocks x threads with `checksum` (None: absent).
    fn memspace_report(blocks: u64, threads: u64, checksum: Option<Value>) -> Value {
        let mut report = json!({
            "parameters": {"threads": threads, "blocks": blocks, "runs": 2, "pattern": "per-thread"},
            "results": {"rows": []},
            "check": {"compared": 4 * blocks * threads}
        });
        if let Some(checksum) = checksum {
            report["results"]["checksum"] = checksum;
        }
        report
    }

    /// FNV-1a over 32-bit words and the sum of the words, written out here
    /// rather than taken from the kernels crate.
    fn words_checksum(words: impl IntoIterator<Item = u32>) -> Value {
        let (mut count, mut sum, mut hash) = (0u64, 0u64, 0xcbf2_9ce4_8422_2325u64);
        for w in words {
            count += 1;
            sum = sum.wrapping_add(u64::from(w));
            hash = (hash ^ u64::from(w)).wrapping_mul(0x0100_0000_01b3);
        }
        json!({"count": count, "sum": sum, "hash": hash})
    }

    #[test]
    fn memspace_passes_only_with_the_checksum_of_the_right_sums() {
        let r = run(
            "t".into(),
            vec![
                ("blocks", num(3u32)),
                ("threads", num(96u32)),
                ("pattern", text("per-thread")),
            ],
        );
        // 8386560.0f32 in every space and thread.
        let right = words_checksum(std::iter::repeat_n(0x4aff_f000, 4 * 3 * 96));
        let report = memspace_report(3, 96, Some(right));
        assert_eq!(recheck("memspace-timing", &r, &report), Ok(()));

        let absent = recheck("memspace-timing", &r, &memspace_report(3, 96, None));
        assert!(absent.unwrap_err().contains("no results.checksum"));

        let mut one_off: Vec<u32> = vec![0x4aff_f000; 4 * 3 * 96];
        one_off[100] += 1;
        let wrong = memspace_report(3, 96, Some(words_checksum(one_off)));
        let err = recheck("memspace-timing", &r, &wrong).unwrap_err();
        assert!(err.contains("not the ones the exercise produces"), "{err}");

        let garbled = memspace_report(3, 96, Some(json!({"count": "many"})));
        let err = recheck("memspace-timing", &r, &garbled).unwrap_err();
        assert!(err.contains("results.checksum"), "{err}");
    }

    #[test]
    fn streams_passes_only_with_the_checksum_of_both_runs_outputs() {
        let (n, work) = (1001u64, 13u32);
        let r = run(
            "t".into(),
            vec![("n", num(n)), ("streams", num(3u32)), ("work", num(work))],
        );
        let report = |checksum: Option<Value>| {
            let mut report = json!({
                "parameters": {"n": n, "streams": 3, "chunks": 7, "work": work, "runs": 1},
                "results": {"serial_ms": 1.0, "overlapped_ms": 0.5},
                "check": {"compared": 2 * n}
            });
            if let Some(checksum) = checksum {
                report["results"]["checksum"] = checksum;
            }
            report
        };
        // x -> 1664525 x + 1013904223 (mod 2^32), `work` times, to every i.
        let out: Vec<u32> = (0..n as u32)
            .map(|i| {
                (0..work).fold(i, |x, _| {
                    x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223)
                })
            })
            .collect();
        let both = || out.iter().chain(&out).copied();
        assert_eq!(
            recheck("streams-overlap", &r, &report(Some(words_checksum(both())))),
            Ok(())
        );
        assert!(
            recheck("streams-overlap", &r, &report(None))
                .unwrap_err()
                .contains("no results.checksum")
        );
        // Only the serial run's values: the count says so.
        let err = recheck(
            "streams-overlap",
            &r,
            &report(Some(words_checksum(out.clone()))),
        )
        .unwrap_err();
        assert!(err.contains("covers 1001 values, not the 2002"), "{err}");
        // The input copied back unchanged: a CPU-free forgery of the right size.
        let input = (0..n as u32).chain(0..n as u32);
        let err = recheck("streams-overlap", &r, &report(Some(words_checksum(input)))).unwrap_err();
        assert!(err.contains("not the ones"), "{err}");
    }
}
