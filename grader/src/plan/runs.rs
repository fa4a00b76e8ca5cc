//! Test plans: the runs the grader makes of each exercise, drawn from a seed
//! the grader records (so a hard-coded answer fails, and a regrade with the
//! same seed makes the same runs), each with its points; and the grader's
//! own recheck of what a run reports, against closed forms it computes
//! itself rather than the binary's word.
//!
//! Every plan includes the sizes that expose its exercise's classic bugs: a
//! grid smaller than n (no grid-stride loop), n not a multiple of the block
//! (no bounds check), widths with partial tiles, sizes small enough that one
//! missing element shows in a float32 sum, uneven chunks; and every limit
//! the exercise names: its largest block, and for streams-overlap chunks
//! longer than 65535 blocks of 1024 threads cover. vecadd-anyN's and
//! matmul's runs draw their inputs from a seed of their own (`--seed`), and
//! the recheck recomputes the result's checksum from that seed.

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
    /// Bytes the run needs in host memory and again in GPU memory, when
    /// that is more than a GPU node can be assumed to have (above 2^31
    /// elements); 0 otherwise. The grader skips the run, saying why, where
    /// either is short.
    pub memory: u64,
    /// The run whose kernel time the speed point compares with the course's
    /// own kernel's, in the course's host code, on the same GPU.
    pub timed: bool,
}

impl Run {
    /// Only the kernel's run, in the course's host code, worth one point:
    /// a size whose lesson is the kernel's (an index past 2^31), which the
    /// student's own binary would only repeat at the same cost.
    fn kernel_only(mut self, memory: u64) -> Run {
        self.points = KERNEL_ONLY_POINTS;
        self.memory = memory;
        self
    }

    /// The speed point's run.
    fn timed(mut self) -> Run {
        self.timed = true;
        self
    }
}

/// A kernel-only run's points: the kernel's share of an ordinary run.
const KERNEL_ONLY_POINTS: u32 = 1;

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
        memory: 0,
        timed: false,
    }
}

/// Elements above 2^31, so that an `int` index overflows before the end:
/// by 1 to 4 Mi (odd), enough elements past the limit to be seen missing.
fn past_int(rng: &mut fastrand::Rng) -> u64 {
    (1 << 31) + (rng.u64(1 << 20..1 << 22) | 1)
}

/// Timed runs are the median of this many launches: one slow launch does
/// not decide the speed point.
const TIMED_RUNS: u32 = 5;

/// The runs for `exercise` (a catalogue name), drawn from `seed`.
pub fn plan(exercise: &str, seed: u64) -> Vec<Run> {
    // Each exercise's own stream of numbers, so adding runs to one plan
    // does not change another's.
    let mut rng = fastrand::Rng::with_seed(seed ^ fnv(exercise));
    match exercise {
        "vecadd-anyN" => vecadd(&mut rng),
        "dot-gm" | "dot-sm" | "dot-atomic" => dot(&mut rng, exercise),
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
    // Above 2 blocks of 1024 threads even in float4s (8192 elements), so a
    // vectorised kernel without the grid-stride loop misses some too.
    let small = rng.u64(9000..13000) | 1;
    let middle = rng.u64(1 << 20..1 << 22) | 1;
    let large = rng.u64(1 << 25..1 << 26) | 1;
    let threads: u32 = [64, 96, 128, 256][rng.usize(..4)];
    let blocks = rng.u32(3..40);
    let huge = past_int(rng);
    // Inputs drawn from the run's seed: a kernel that writes c from i alone,
    // or that never reads a or b, cannot match them.
    let mut seed = || ("seed", num(rng.u64(..)));
    vec![
        run(
            "one element".into(),
            vec![
                ("n", num(1u32)),
                ("threads", num(32u32)),
                seed(),
                ("runs", num(2u32)),
            ],
        ),
        run(
            format!(
                "n = {small}, odd, with 2 blocks of 1024 (the largest block): a grid smaller than n, \
                 even counting 4 elements a thread"
            ),
            vec![
                ("n", num(small)),
                ("threads", num(1024u32)),
                ("blocks", num(2u32)),
                seed(),
                ("runs", num(2u32)),
            ],
        ),
        run(
            format!("n = {middle} with {blocks} blocks of {threads}: every thread loops"),
            vec![
                ("n", num(middle)),
                ("threads", num(threads)),
                ("blocks", num(blocks)),
                seed(),
                ("runs", num(2u32)),
            ],
        ),
        run(
            format!("n = {large} with the default grid"),
            vec![("n", num(large)), seed(), ("runs", num(TIMED_RUNS))],
        )
        .timed(),
        // The default inputs, whose checksum is a closed form: the grader
        // checks 2^31 elements without computing them.
        run(
            format!("n = {huge}, above 2^31: an int index overflows before the end"),
            vec![("n", num(huge)), ("runs", num(1u32))],
        )
        .kernel_only(3 * 4 * huge),
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

fn dot(rng: &mut fastrand::Rng, exercise: &str) -> Vec<Run> {
    let power_of_two = exercise != "dot-gm";
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
    let t1 = threads(rng);
    let blocks = rng.u32(3..40);
    let mut runs = vec![
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
            format!(
                "n = {million} with {blocks} blocks of 1024 (the largest block), a = i, b = 2: \
                 a grid smaller than n"
            ),
            vec![
                ("n", num(million)),
                ("threads", num(1024u32)),
                ("blocks", num(blocks)),
                ("a", text("i")),
                ("b", text("2")),
                ("runs", num(3u32)),
            ],
        ),
        run(
            format!("n = {large} with the default inputs: every block's share counts"),
            vec![
                ("n", num(large)),
                ("threads", t1),
                ("runs", num(TIMED_RUNS)),
            ],
        )
        .timed(),
    ];
    // dot-gm's kernel indexes every element (the others' only sum them):
    // its products past 2^31 in c, the host summing them.
    if exercise == "dot-gm" {
        let huge = past_int(rng);
        runs.push(
            run(
                format!("n = {huge}, above 2^31: an int index overflows before the end"),
                vec![("n", num(huge)), ("runs", num(1u32))],
            )
            .kernel_only(3 * 4 * huge),
        );
    }
    runs
}

fn matmul(rng: &mut fastrand::Rng, flag: &'static str, edges: &[u32]) -> Vec<Run> {
    let edge = |rng: &mut fastrand::Rng| num(edges[rng.usize(..edges.len())]);
    let tiny = rng.u32(2..16);
    let partial = rng.u32(17..64) | 1;
    let middle = rng.u32(100..300);
    let (e1, e2) = (edge(rng), edge(rng));
    // The largest block the exercise accepts: 32 × 32 = 1024 threads.
    let e3 = num(32u32);
    // M and N drawn from each run's seed: not integers, so a kernel that
    // accumulates in int fails, and not computable without reading them.
    let mut seed = || ("seed", num(rng.u64(..)));
    let mut runs = vec![
        run(
            format!("W = {tiny}, smaller than a block"),
            vec![
                ("width", num(tiny)),
                (flag, e1),
                seed(),
                ("runs", num(2u32)),
            ],
        ),
        run(
            format!("W = {partial}: partial tiles on the right and bottom"),
            vec![
                ("width", num(partial)),
                (flag, e2),
                seed(),
                ("runs", num(2u32)),
            ],
        ),
        run(
            format!("W = {middle} with 32 × 32 blocks, the largest"),
            vec![
                ("width", num(middle)),
                (flag, e3),
                seed(),
                ("runs", num(2u32)),
            ],
        ),
        run(
            "W = 1024".into(),
            vec![("width", num(1024u32)), seed(), ("runs", num(TIMED_RUNS))],
        ),
    ];
    // Tiling is about speed; the naive kernel is the baseline it beats.
    if flag == "tile" {
        runs[3].timed = true;
    }
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
    let threads: u32 = [96, 128, 256, 512][rng.usize(..4)];
    // The smaller grid first: compute-sanitizer runs the first run.
    vec![
        run(
            format!("{blocks} blocks of {threads}, per-thread reads"),
            vec![
                ("blocks", num(blocks)),
                ("threads", num(threads)),
                ("pattern", text("per-thread")),
                ("runs", num(2u32)),
            ],
        ),
        run(
            "the default grid of 1024-thread blocks (the largest), uniform reads".into(),
            vec![("threads", num(1024u32)), ("runs", num(2u32))],
        ),
    ]
}

/// Blocks a one-dimensional grid may have on the GPUs that cap gridDim.x
/// lowest, and the most threads a block has: a chunk longer than their
/// product needs a grid-stride loop whatever block size the kernel picks.
const GRID_CAP_ELEMENTS: u64 = 65_535 * 1024;

fn streams(rng: &mut fastrand::Rng) -> Vec<Run> {
    let n = rng.u64(900_000..1_100_000) | 1;
    let work = rng.u32(10..200);
    // Four chunks, each longer than a grid without a loop covers, and tens
    // of ms of copies: enough for the overlap the trace must show
    // (`traced::judge`, from 4 chunks and 5 ms of serial time).
    let huge = 4 * GRID_CAP_ELEMENTS + (rng.u64(1..1 << 20) | 1);
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
            format!(
                "n = {huge} in 4 chunks over 2 streams: each chunk needs more than 65535 blocks \
                 even of 1024 threads, so only a grid-stride loop covers it; the copies and \
                 kernels must overlap"
            ),
            vec![
                ("n", num(huge)),
                ("streams", num(2u32)),
                ("chunks", num(4u32)),
                ("work", num(2u32)),
                ("runs", num(1u32)),
            ],
        ),
    ]
}

/// The `--seed` a run passes, if any.
fn run_seed(run: &Run) -> Option<u64> {
    run.expect
        .iter()
        .find(|(key, _)| *key == "seed")
        .and_then(|(_, value)| value.as_u64())
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
            // From the run's own seed (the expectation above made the
            // report echo it), never from the report's expected_checksum.
            let seed = run_seed(run);
            let want = kernels::vecadd::Inputs { seed }.checksum(n);
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
            if rms != 0.0 {
                return Err(format!(
                    "P differs from the CPU golden model by an RMS of {rms}"
                ));
            }
            let width = u32::try_from(w).map_err(|_| format!("the width {w} is not a width"))?;
            // The weighted checksum of P, from the run's own seed: O(W²).
            let want = kernels::matmul::Inputs {
                seed: run_seed(run),
            }
            .checksum(width);
            let got = number(&report["results"]["checksum"], "checksum")?;
            (got == want).then_some(()).ok_or_else(|| {
                format!("the weighted checksum of P is {got}; the grader computes {want}")
            })
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
    use kernels::catalogue::EXERCISES;
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
    fn the_indexing_exercises_run_above_2_31_and_the_speed_exercises_are_timed() {
        for seed in 0..20 {
            for exercise in EXERCISES {
                let runs = plan(exercise.name, seed);
                let huge: Vec<&Run> = runs.iter().filter(|r| r.memory > 0).collect();
                if matches!(exercise.name, "vecadd-anyN" | "dot-gm") {
                    assert_eq!(huge.len(), 1, "{}", exercise.name);
                    let n = arg(huge[0], "n").unwrap();
                    assert!(n > 1 << 31 && n % 2 == 1, "{n}");
                    // a, b and c in float32.
                    assert_eq!(huge[0].memory, 12 * n);
                    assert_eq!(huge[0].points, KERNEL_ONLY_POINTS);
                    assert!(huge[0].about.contains("above 2^31"));
                } else {
                    assert!(huge.is_empty(), "{}", exercise.name);
                }
                let timed: Vec<&Run> = runs.iter().filter(|r| r.timed).collect();
                let about_speed = matches!(
                    exercise.name,
                    "vecadd-anyN" | "dot-gm" | "dot-sm" | "dot-atomic" | "matmul-tiled"
                );
                assert_eq!(timed.len(), usize::from(about_speed), "{}", exercise.name);
                for run in timed {
                    assert_eq!(arg(run, "runs"), Some(u64::from(TIMED_RUNS)));
                    assert_eq!(run.memory, 0);
                }
            }
        }
    }

    #[test]
    fn the_first_run_is_the_smallest_for_compute_sanitizer() {
        let size = |r: &Run| {
            arg(r, "n")
                .or_else(|| arg(r, "width").map(|w| w * w))
                .or_else(|| Some(arg(r, "blocks")? * arg(r, "threads")?))
        };
        for seed in 0..20 {
            for exercise in EXERCISES {
                let runs = plan(exercise.name, seed);
                // memspace's default grid is the device's: larger than any
                // grid it draws (at most 50 blocks).
                let sizes: Vec<u64> = runs.iter().map(|r| size(r).unwrap_or(u64::MAX)).collect();
                assert_eq!(
                    sizes.iter().min(),
                    sizes.first(),
                    "{}: {sizes:?}",
                    exercise.name
                );
            }
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
            // Every grid-stride exercise gets a grid smaller than n, and
            // every exercise its largest block.
            for exercise in ["vecadd-anyN", "dot-gm", "dot-sm", "dot-atomic"] {
                let runs = plan(exercise, seed);
                assert!(
                    runs.iter().any(|r| {
                        let (n, t, b) = (arg(r, "n"), arg(r, "threads"), arg(r, "blocks"));
                        matches!((n, t, b), (Some(n), Some(t), Some(b)) if b * t < n)
                    }),
                    "{exercise}"
                );
            }
            for (exercise, flag, largest) in [
                ("vecadd-anyN", "threads", 1024),
                ("dot-gm", "threads", 1024),
                ("dot-sm", "threads", 1024),
                ("dot-atomic", "threads", 1024),
                ("memspace-timing", "threads", 1024),
                ("matmul-naive", "block", 32),
                ("matmul-tiled", "tile", 32),
            ] {
                assert!(
                    plan(exercise, seed)
                        .iter()
                        .any(|r| arg(r, flag) == Some(largest)),
                    "{exercise} never runs --{flag} {largest}"
                );
            }
            // A streams chunk that 65535 blocks of 1024 threads cannot cover.
            assert!(plan("streams-overlap", seed).iter().any(|r| {
                let (n, chunks) = (arg(r, "n").unwrap(), arg(r, "chunks").unwrap_or(1));
                n / chunks > 65_535 * 1024
            }));
            // Seeded inputs on every vecadd and matmul run, each its own
            // (but the run above 2^31, whose default inputs the grader
            // checks by a closed form).
            for exercise in ["vecadd-anyN", "matmul-naive", "matmul-tiled"] {
                let seeds: Vec<u64> = plan(exercise, seed)
                    .iter()
                    .filter(|r| r.memory == 0)
                    .map(|r| arg(r, "seed").expect("every run is seeded"))
                    .collect();
                let mut distinct = seeds.clone();
                distinct.sort_unstable();
                distinct.dedup();
                assert_eq!(distinct.len(), seeds.len(), "{exercise}");
            }
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
                seed: Some(1),
            }),
            "matmul-naive" | "matmul-tiled" => serde_json::to_value(matmul::Parameters {
                width: 1,
                block: 1,
                runs: 1,
                seed: Some(1),
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
    fn a_seeded_checksum_is_recomputed_from_the_run_s_seed() {
        let r = run("t".into(), vec![("n", num(1000u64)), ("seed", num(77u64))]);
        let inputs = kernels::vecadd::Inputs { seed: Some(77) };
        let right: f64 = (0..1000)
            .map(|i| f64::from(inputs.a(i) + inputs.b(i)))
            .sum();
        let report = |checksum: f64, seed: u64| json!({"parameters": {"n": 1000, "seed": seed}, "results": {"checksum": checksum}, "check": {"compared": 1000}});
        assert_eq!(recheck("vecadd-anyN", &r, &report(right, 77)), Ok(()));
        // The default inputs' checksum, or another seed's, fails.
        let default = kernels::vecadd::expected_checksum(1000) as f64;
        assert!(recheck("vecadd-anyN", &r, &report(default, 77)).is_err());
        let err = recheck("vecadd-anyN", &r, &report(right, 78)).unwrap_err();
        assert!(err.contains("seed"), "{err}");
    }

    #[test]
    fn a_matmul_checksum_is_recomputed_from_the_run_s_seed() {
        use kernels::matmul::{Inputs, checksum, product};
        let (width, seed) = (37u32, 5u64);
        let w = u64::from(width);
        let r = run("t".into(), vec![("width", num(width)), ("seed", num(seed))]);
        let (m, n) = Inputs { seed: Some(seed) }.matrices(width).unwrap();
        let p = product(&m, &n, width);
        let report = |p: &[f32]| json!({"parameters": {"width": width, "seed": seed}, "results": {"rms_vs_golden": 0.0, "checksum": checksum(p, width)}, "check": {"compared": w * w}});
        assert_eq!(recheck("matmul-tiled", &r, &report(&p)), Ok(()));
        // An int accumulator's P: every product truncated.
        let truncated: Vec<f32> = (0..w * w)
            .map(|x| {
                let (i, j) = (x / w, x % w);
                (0..w)
                    .map(|k| (m[(i * w + k) as usize] * n[(k * w + j) as usize]) as i32)
                    .sum::<i32>() as f32
            })
            .collect();
        let err = recheck("matmul-naive", &r, &report(&truncated)).unwrap_err();
        assert!(err.contains("the grader computes"), "{err}");
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
