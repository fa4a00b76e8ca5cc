//! Each exercise's grading by its family: the runs of its plan, drawn from
//! the class's seed with the catalogue's points, and the recheck of a
//! passing report. Every match here is on the typed [`ExerciseId`] and
//! [`Family`], never on a name.

use kernels::catalogue::{ExerciseId, Family, RunTag as Tag};
use kernels::{dot, matmul};
use serde_json::Value;

use crate::plan::demands::{self, Demand};
use crate::plan::disagreement::{self, Disagreement};
use crate::plan::draw;
use crate::plan::runs::{Params, Run};
use crate::plan::{memspace, streams, vecadd};

/// The runs of `id`, drawn from `seed`.
pub fn plan(id: ExerciseId, seed: u64) -> Vec<Run> {
    // Each exercise's own stream of numbers, so adding runs to one plan
    // does not change another's.
    let mut rng = fastrand::Rng::with_seed(seed ^ fnv(id.name()));
    let rng = &mut rng;
    let drawn: Vec<(Tag, Params)> = match id.family() {
        Family::Vecadd => wrap(vecadd::plan(rng), Params::Vecadd),
        Family::Dot => wrap(crate::plan::dot::plan(dot_variant(id), rng), Params::Dot),
        Family::Matmul => wrap(
            crate::plan::matmul::plan(matmul_variant(id), rng),
            Params::Matmul,
        ),
        Family::Memspace => wrap(memspace::plan(rng), Params::Memspace),
        Family::Streams => wrap(streams::plan(rng), Params::Streams),
    };
    let exercise = id.exercise();
    drawn
        .into_iter()
        .map(|(tag, params)| {
            let spec = exercise
                .run(tag)
                .unwrap_or_else(|| panic!("{id} plans {tag}, which its catalogue entry lacks"));
            // Past 2^31: three float arrays of n, in host and GPU memory.
            let memory = match params.n() {
                Some(n) if spec.past_int => draw::three_arrays(n),
                _ => 0,
            };
            Run {
                tag,
                params,
                points: spec.points(),
                memory,
                timed: spec.timed,
            }
        })
        .collect()
}

fn wrap<P>(runs: Vec<(Tag, P)>, into: impl Fn(P) -> Params) -> Vec<(Tag, Params)> {
    runs.into_iter().map(|(tag, p)| (tag, into(p))).collect()
}

fn dot_variant(id: ExerciseId) -> dot::Variant {
    dot::Variant::of(id).expect("an exercise of the dot family")
}

fn matmul_variant(id: ExerciseId) -> matmul::Variant {
    matmul::Variant::of(id).expect("an exercise of the matmul family")
}

/// A stable hash of a name (FNV-1a): the standard library's is seeded per process.
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// What the trace of a student's binary must show for a passing run of
/// `id` to count.
pub fn demands(id: ExerciseId) -> &'static [Demand] {
    match id.family() {
        Family::Streams => streams::DEMANDS,
        Family::Vecadd | Family::Dot | Family::Matmul | Family::Memspace => demands::EVERY_EXERCISE,
    }
}

/// Whether the run `tag` of `id` has its overlap in time judged
/// (`Demand::OverlapInTime`), the student's binary having the GPU alone
/// for it: streams-overlap's [`streams::OVERLAP_TIMED`], one run, since a
/// student's binary alone for its whole process holds every other run
/// back.
pub fn overlap_timed_at(id: ExerciseId, tag: Tag) -> bool {
    demands(id).contains(&Demand::OverlapInTime) && tag == streams::OVERLAP_TIMED
}

/// The grader's own check of a passing report: it ran what was asked, and
/// its result matches what the grader computes from the run's parameters,
/// never from the binary's word.
pub fn recheck(id: ExerciseId, run: &Run, report: &Value) -> Result<(), Disagreement> {
    echoes(run, report)?;
    // Every report says how many values it compared.
    disagreement::count(&report["check"]["compared"], "check.compared")?;
    match (&run.params, id.family()) {
        (Params::Vecadd(p), Family::Vecadd) => vecadd::recheck(p, report),
        (Params::Dot(p), Family::Dot) => crate::plan::dot::recheck(dot_variant(id), p, report),
        (Params::Matmul(p), Family::Matmul) => crate::plan::matmul::recheck(p, report),
        (Params::Memspace(_), Family::Memspace) => memspace::recheck(report),
        (Params::Streams(_), Family::Streams) => streams::recheck(report),
        // A run of another family's: its parameters are not this
        // exercise's, whatever the report says.
        _ => Err(Disagreement::Parameters {
            why: format!("the run planned is not one of {id}'s"),
        }),
    }
}

/// The report ran what was asked: every parameter the plan sets echoed.
fn echoes(run: &Run, report: &Value) -> Result<(), Disagreement> {
    let echoed = &report["parameters"];
    for (key, want) in run.expect() {
        if echoed[key] != want {
            return Err(Disagreement::Echo {
                key: key.to_owned(),
                got: echoed[key].clone(),
                asked: want,
            });
        }
    }
    Ok(())
}

/// The check of a run of the student's canary build (`build::canary`): it
/// ran what was asked, and its result is the canary kernel's, as the
/// course's host code running the same PTX reported it (`reference`). The
/// values copied back must match exactly (their checksum); a dot product
/// within twice its tolerance of the course's, as the student's host may
/// add partial sums in another order.
pub fn canary_agrees(
    id: ExerciseId,
    run: &Run,
    report: &Value,
    reference: &Value,
) -> Result<(), Disagreement> {
    echoes(run, report)?;
    let field = match id.family() {
        Family::Dot => "dot",
        Family::Vecadd | Family::Matmul | Family::Memspace | Family::Streams => "checksum",
    };
    let (got, want) = (&report["results"][field], &reference["results"][field]);
    let differs = || Disagreement::Canary {
        field: field.to_owned(),
        got: got.clone(),
        want: want.clone(),
    };
    if want.is_null() {
        return Err(differs());
    }
    if id.family() != Family::Dot {
        return if got == want { Ok(()) } else { Err(differs()) };
    }
    let p: dot::Parameters = disagreement::parameters(report)?;
    let (got_dot, want_dot) = (
        disagreement::number(got, field)?,
        disagreement::number(want, field)?,
    );
    // The canary scales every product by at most 1.28.
    let scale = 1.28 * crate::plan::dot::exact(p.values(), p.n).scale_f64();
    let error = (got_dot - want_dot).abs() / scale.max(f64::MIN_POSITIVE);
    if error <= 2.0 * dot::tolerance::limit(dot_variant(id), &p) {
        Ok(())
    } else {
        Err(differs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::draw::TIMED_RUNS;
    use kernels::catalogue::{ALL_IDS, ExerciseId::*, points};
    use kernels::dot::Affine;
    use serde_json::json;

    #[test]
    fn every_exercise_has_a_plan_and_the_same_seed_gives_the_same_runs() {
        for exercise in ALL_IDS {
            let once = plan(exercise, 7);
            assert!(!once.is_empty(), "{exercise}");
            assert_eq!(once, plan(exercise, 7), "{exercise}");
            // Every flag with its value, but the one switch.
            let switch = format!("--{}", kernels::INPUTS_ON_GPU);
            let valued = |r: &Run| r.args().iter().filter(|a| **a != switch).count();
            assert!(once.iter().all(|r| valued(r) % 2 == 0 && r.points > 0));
        }
    }

    #[test]
    fn the_indexing_exercises_run_above_2_31_and_the_speed_exercises_are_timed() {
        for seed in 0..20 {
            for exercise in ALL_IDS {
                let runs = plan(exercise, seed);
                let huge: Vec<&Run> = runs.iter().filter(|r| r.memory > 0).collect();
                // As the catalogue says: vecadd-anyN and dot-gm index every
                // element past 2^31.
                let past_int = exercise.exercise().runs.iter().any(|r| r.past_int);
                assert_eq!(past_int, matches!(exercise, VecaddAnyN | DotGm));
                if past_int {
                    assert_eq!(huge.len(), 1, "{exercise}");
                    let n = huge[0].arg("n").unwrap();
                    assert!(n > 1 << 31 && n % 2 == 1, "{n}");
                    // a, b and c in float32.
                    assert_eq!(huge[0].memory, 12 * n);
                    assert_eq!(huge[0].points, points::KERNEL_ONLY);
                    assert!(huge[0].about().contains("above 2^31"));
                    // Its inputs made on the GPU, and no other run's.
                    for run in &runs {
                        let switch = run
                            .args()
                            .contains(&format!("--{}", kernels::INPUTS_ON_GPU));
                        assert_eq!(switch, run.memory > 0, "{exercise} {}", run.tag);
                    }
                } else {
                    assert!(huge.is_empty(), "{exercise}");
                }
                let timed: Vec<&Run> = runs.iter().filter(|r| r.timed).collect();
                let about_speed = matches!(
                    exercise,
                    VecaddAnyN | DotGm | DotSm | DotAtomic | MatmulTiled
                );
                assert_eq!(timed.len(), usize::from(about_speed), "{exercise}");
                // Every run whose verdict reads a time, the speed point's
                // and each of streams' (its overlap), is a median.
                let overlap = demands(exercise).contains(&Demand::OverlapInTime);
                for run in runs.iter().filter(|r| r.timed || overlap) {
                    assert_eq!(run.arg("runs"), Some(u64::from(TIMED_RUNS)), "{exercise}");
                    assert_eq!(run.memory, 0);
                }
            }
        }
    }

    #[test]
    fn the_first_run_is_the_smallest_for_compute_sanitizer() {
        let size = |r: &Run| {
            r.arg("n")
                .or_else(|| r.arg("width").map(|w| w * w))
                .or_else(|| Some(r.arg("blocks")? * r.arg("threads")?))
        };
        for seed in 0..20 {
            for exercise in ALL_IDS {
                let runs = plan(exercise, seed);
                // memspace's default grid is the device's: larger than any
                // grid it draws (at most 50 blocks).
                let sizes: Vec<u64> = runs.iter().map(|r| size(r).unwrap_or(u64::MAX)).collect();
                assert_eq!(sizes.iter().min(), sizes.first(), "{exercise}: {sizes:?}");
            }
        }
    }

    #[test]
    fn another_seed_gives_other_sizes() {
        let differ = (1..20)
            .filter(|&seed| plan(DotSm, seed) != plan(DotSm, 0))
            .count();
        assert_eq!(differ, 19);
    }

    #[test]
    fn plans_include_the_sizes_that_expose_the_classic_bugs() {
        for seed in 0..50 {
            let vecadd = plan(VecaddAnyN, seed);
            // A grid smaller than n, with n not a multiple of the block.
            assert!(vecadd.iter().any(|r| {
                let (n, t, b) = (r.arg("n"), r.arg("threads"), r.arg("blocks"));
                matches!((n, t, b), (Some(n), Some(t), Some(b)) if b * t < n && n % t != 0)
            }));
            // A width below every block edge, and one with partial tiles.
            for (exercise, flag) in [(MatmulNaive, "block"), (MatmulTiled, "tile")] {
                let widths: Vec<u64> = plan(exercise, seed)
                    .iter()
                    .filter_map(|r| r.arg("width"))
                    .collect();
                assert!(widths.iter().any(|&w| w < 16), "{exercise}: {widths:?}");
                assert!(
                    widths.iter().any(|&w| w > 16 && w % 16 != 0),
                    "{exercise}: {widths:?}"
                );
                assert!(plan(exercise, seed).iter().any(|r| r.arg(flag).is_some()));
            }
            // dot: an n where one missing element is above float32's resolution.
            assert!(
                plan(DotAtomic, seed)
                    .iter()
                    .any(|r| r.arg("n").is_some_and(|n| n < 5000))
            );
            // Every grid-stride exercise gets a grid smaller than n, and
            // every exercise its largest block.
            for exercise in [VecaddAnyN, DotGm, DotSm, DotAtomic] {
                let runs = plan(exercise, seed);
                assert!(
                    runs.iter().any(|r| {
                        let (n, t, b) = (r.arg("n"), r.arg("threads"), r.arg("blocks"));
                        matches!((n, t, b), (Some(n), Some(t), Some(b)) if b * t < n)
                    }),
                    "{exercise}"
                );
            }
            for (exercise, flag, largest) in [
                (VecaddAnyN, "threads", 1024),
                (DotGm, "threads", 1024),
                (DotSm, "threads", 1024),
                (DotAtomic, "threads", 1024),
                (MemspaceTiming, "threads", 1024),
                (MatmulNaive, "block", 32),
                (MatmulTiled, "tile", 32),
            ] {
                assert!(
                    plan(exercise, seed)
                        .iter()
                        .any(|r| r.arg(flag) == Some(largest)),
                    "{exercise} never runs --{flag} {largest}"
                );
            }
            // A streams chunk that 65535 blocks of 1024 threads cannot cover.
            assert!(plan(StreamsOverlap, seed).iter().any(|r| {
                let (n, chunks) = (r.arg("n").unwrap(), r.arg("chunks").unwrap_or(1));
                n / chunks > 65_535 * 1024
            }));
            // Seeded inputs on every vecadd and matmul run, each its own,
            // the run above 2^31 included.
            for exercise in [VecaddAnyN, MatmulNaive, MatmulTiled] {
                let seeds: Vec<u64> = plan(exercise, seed)
                    .iter()
                    .map(|r| r.arg("seed").expect("every run is seeded"))
                    .collect();
                let mut distinct = seeds.clone();
                distinct.sort_unstable();
                distinct.dedup();
                assert_eq!(distinct.len(), seeds.len(), "{exercise}");
            }
            // dot-sm and dot-atomic take power-of-two blocks.
            for r in plan(DotSm, seed) {
                assert!(
                    r.arg("threads").is_none_or(|t| t.is_power_of_two()),
                    "{r:?}"
                );
            }
        }
    }

    /// The parameter names an exercise's report has, from the course's
    /// own report types.
    fn parameter_keys(exercise: ExerciseId) -> Vec<String> {
        use kernels::{memspace, streams, vecadd};
        let value = match exercise.family() {
            Family::Vecadd => serde_json::to_value(vecadd::Parameters {
                n: 1,
                threads: 1,
                blocks: 1,
                runs: 1,
                seed: Some(1),
            }),
            Family::Matmul => serde_json::to_value(matmul::Parameters {
                width: 1,
                block: 1,
                runs: 1,
                seed: Some(1),
            }),
            Family::Memspace => serde_json::to_value(memspace::Parameters {
                threads: 1,
                blocks: 1,
                runs: 1,
                pattern: memspace::Pattern::Uniform,
            }),
            Family::Streams => serde_json::to_value(streams::Parameters {
                n: 1,
                streams: 1,
                chunks: 1,
                work: 1,
                runs: 1,
            }),
            Family::Dot => serde_json::to_value(dot::Parameters {
                n: 1,
                threads: 1,
                blocks: 1,
                runs: 1,
                a: Affine::new(0, 1),
                b: Affine::new(0, 1),
                seed: Some(1),
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
        for exercise in ALL_IDS {
            let keys = parameter_keys(exercise);
            for seed in 0..10 {
                for run in plan(exercise, seed) {
                    for (key, _) in run.expect() {
                        assert!(
                            keys.iter().any(|k| k == key),
                            "{exercise}: {key} is not in {keys:?}"
                        );
                    }
                }
            }
        }
    }

    /// A planned run of `params`.
    fn run(params: Params) -> Run {
        Run {
            tag: Tag::OneElement,
            params,
            points: 2,
            memory: 0,
            timed: false,
        }
    }

    fn dot_run(n: u64) -> Run {
        run(Params::Dot(crate::plan::dot::Params {
            n,
            threads: None,
            blocks: None,
            a: Some(Affine::new(0, 1)),
            b: Some(Affine::new(2, 0)),
            seed: None,
            inputs_on_gpu: false,
            runs: 2,
        }))
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
        let r = dot_run(1_000_000);
        let exact = (1_000_000u64 * 999_999) as f64;
        assert_eq!(recheck(DotSm, &r, &dot_report(1_000_000, exact)), Ok(()));
        let short = recheck(
            DotSm,
            &r,
            &dot_report(1_000_000, exact * (1.0 - 1.0 / 1056.0)),
        );
        assert!(
            matches!(&short, Err(Disagreement::Dot { exact, .. }) if exact == "999999000000"),
            "{short:?}"
        );
    }

    /// Every run of vecadd-anyN, the dot family and matmul that the host
    /// holds draws its inputs from a seed (`kernels::seeded::drawn`), at
    /// every seed of the grading; only the runs above 2^31, whose inputs
    /// the course's kernels make on the GPU, keep their closed forms.
    #[test]
    fn every_run_the_host_holds_has_drawn_inputs() {
        for seed in 0..100 {
            for exercise in ALL_IDS {
                if !matches!(
                    exercise.family(),
                    Family::Vecadd | Family::Dot | Family::Matmul
                ) {
                    continue;
                }
                for run in plan(exercise, seed) {
                    let on_gpu = run
                        .args()
                        .contains(&format!("--{}", kernels::INPUTS_ON_GPU));
                    let drawn = run.arg("seed").is_some();
                    let vecadd = exercise.family() == Family::Vecadd;
                    // vecadd-anyN's run past 2^31 draws one period on the
                    // host, which the GPU repeats; dot-gm's makes affine
                    // a and b on the GPU.
                    assert_eq!(
                        drawn,
                        !on_gpu || vecadd,
                        "{exercise} {} {:?}",
                        run.tag,
                        run.args()
                    );
                }
            }
        }
    }

    fn drawn_dot_run(n: u64, seed: u64) -> Run {
        run(Params::Dot(crate::plan::dot::Params {
            n,
            threads: Some(32),
            blocks: Some(3),
            a: None,
            b: None,
            seed: Some(seed),
            inputs_on_gpu: false,
            runs: 2,
        }))
    }

    fn drawn_dot_report(n: u64, seed: u64, got: f64) -> Value {
        json!({
            "parameters": {"n": n, "threads": 32, "blocks": 3, "runs": 2, "a": "i", "b": "2i",
                           "seed": seed},
            "results": {"dot": got},
            "check": {"compared": 1}
        })
    }

    #[test]
    fn a_drawn_dot_is_rechecked_against_the_grader_s_own_sum() {
        let (n, seed) = (4001, 77);
        let values = kernels::dot::Values::Drawn { seed };
        let exact = values.exact(n);
        let r = drawn_dot_run(n, seed);
        let right = exact.dot_f64();
        assert_eq!(
            recheck(DotSm, &r, &drawn_dot_report(n, seed, right)),
            Ok(())
        );
        // A hundredth of Σ|a·b| off: far past the bound.
        let off = right + exact.scale_f64() / 100.0;
        let short = recheck(DotSm, &r, &drawn_dot_report(n, seed, off));
        assert!(matches!(short, Err(Disagreement::Dot { .. })), "{short:?}");
        // Another seed's inputs: not the run asked for.
        let other = recheck(DotSm, &r, &drawn_dot_report(n, seed + 1, right));
        assert!(matches!(other, Err(Disagreement::Echo { .. })), "{other:?}");
        // The affine inputs' answer is no answer to a drawn run.
        let affine = kernels::dot::Inputs::DEFAULT.dot(n) as f64;
        assert!(recheck(DotSm, &r, &drawn_dot_report(n, seed, affine)).is_err());
    }

    #[test]
    fn a_report_of_other_parameters_than_asked_is_caught() {
        let err = recheck(DotGm, &dot_run(5000), &dot_report(1_000_000, 0.0)).unwrap_err();
        assert_eq!(
            err,
            Disagreement::Echo {
                key: "n".into(),
                got: json!(1_000_000),
                asked: json!(5000)
            }
        );
    }

    fn vecadd_run(n: u64, seed: Option<u64>) -> Run {
        run(Params::Vecadd(crate::plan::vecadd::Params {
            n,
            threads: None,
            blocks: None,
            seed,
            inputs_on_gpu: false,
            runs: 2,
        }))
    }

    #[test]
    fn a_seeded_checksum_is_recomputed_from_the_run_s_seed() {
        let r = vecadd_run(1000, Some(77));
        let inputs = kernels::vecadd::Inputs { seed: Some(77) };
        let right: f64 = (0..1000)
            .map(|i| f64::from(inputs.a(i) + inputs.b(i)))
            .sum();
        let report = |checksum: f64, seed: u64| json!({"parameters": {"n": 1000, "seed": seed}, "results": {"checksum": checksum}, "check": {"compared": 1000}});
        assert_eq!(recheck(VecaddAnyN, &r, &report(right, 77)), Ok(()));
        // The default inputs' checksum, or another seed's, fails.
        let default = kernels::vecadd::expected_checksum(1000) as f64;
        assert!(matches!(
            recheck(VecaddAnyN, &r, &report(default, 77)),
            Err(Disagreement::Sum { .. })
        ));
        let err = recheck(VecaddAnyN, &r, &report(right, 78)).unwrap_err();
        assert!(
            matches!(&err, Disagreement::Echo { key, .. } if key == "seed"),
            "{err:?}"
        );
    }

    #[test]
    fn a_matmul_checksum_is_recomputed_from_the_run_s_seed() {
        use kernels::matmul::{Inputs, checksum, product};
        let (width, seed) = (37u32, 5u64);
        let w = u64::from(width);
        let r = run(Params::Matmul(crate::plan::matmul::Params {
            width,
            edge: None,
            tiled: true,
            seed: Some(seed),
            runs: 2,
        }));
        let (m, n) = Inputs { seed: Some(seed) }.matrices(width).unwrap();
        let p = product(&m, &n, width);
        let report = |p: &[f32]| json!({"parameters": {"width": width, "seed": seed}, "results": {"rms_vs_golden": 0.0, "checksum": checksum(p, width)}, "check": {"compared": w * w}});
        assert_eq!(recheck(MatmulTiled, &r, &report(&p)), Ok(()));
        // An int accumulator's P: every product truncated.
        let truncated: Vec<f32> = (0..w * w)
            .map(|x| {
                let (i, j) = (x / w, x % w);
                (0..w)
                    .map(|k| (m[(i * w + k) as usize] * n[(k * w + j) as usize]) as i32)
                    .sum::<i32>() as f32
            })
            .collect();
        let err = recheck(MatmulNaive, &r, &report(&truncated)).unwrap_err();
        assert!(matches!(err, Disagreement::WeightedSum { .. }), "{err:?}");
    }

    #[test]
    fn a_printed_checksum_that_is_not_the_grader_s_fails() {
        let r = vecadd_run(1000, None);
        let want = kernels::vecadd::expected_checksum(1000) as f64;
        let report = |checksum: f64| json!({"parameters": {"n": 1000}, "results": {"checksum": checksum}, "check": {"compared": 1000}});
        assert_eq!(recheck(VecaddAnyN, &r, &report(want)), Ok(()));
        assert!(recheck(VecaddAnyN, &r, &report(want + 3.0)).is_err());
        let fewer = json!({"parameters": {"n": 1000}, "results": {"checksum": want}, "check": {"compared": 999}});
        assert_eq!(
            recheck(VecaddAnyN, &r, &fewer),
            Err(Disagreement::Compared {
                got: 999,
                want: 1000
            })
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
        let r = run(Params::Memspace(crate::plan::memspace::Params {
            blocks: Some(3),
            threads: 96,
            pattern: Some(kernels::memspace::Pattern::PerThread),
            runs: 2,
        }));
        // 8386560.0f32 in every space and thread.
        let right = words_checksum(std::iter::repeat_n(0x4aff_f000, 4 * 3 * 96));
        let report = memspace_report(3, 96, Some(right));
        assert_eq!(recheck(MemspaceTiming, &r, &report), Ok(()));

        let absent = recheck(MemspaceTiming, &r, &memspace_report(3, 96, None));
        assert_eq!(absent, Err(Disagreement::NoChecksum));

        let mut one_off: Vec<u32> = vec![0x4aff_f000; 4 * 3 * 96];
        one_off[100] += 1;
        let wrong = memspace_report(3, 96, Some(words_checksum(one_off)));
        let err = recheck(MemspaceTiming, &r, &wrong).unwrap_err();
        assert!(
            matches!(&err, Disagreement::Values { got, want } if got.count == want.count && got.sum != want.sum),
            "{err:?}"
        );

        let garbled = memspace_report(3, 96, Some(json!({"count": "many"})));
        let err = recheck(MemspaceTiming, &r, &garbled).unwrap_err();
        assert!(matches!(err, Disagreement::BadChecksum { .. }), "{err:?}");
    }

    #[test]
    fn streams_passes_only_with_the_checksum_of_both_runs_outputs() {
        let (n, work) = (1001u64, 13u32);
        let r = run(Params::Streams(crate::plan::streams::Params {
            n,
            streams: 3,
            chunks: 7,
            work,
            runs: 1,
        }));
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
            recheck(StreamsOverlap, &r, &report(Some(words_checksum(both())))),
            Ok(())
        );
        assert_eq!(
            recheck(StreamsOverlap, &r, &report(None)),
            Err(Disagreement::NoChecksum)
        );
        // Only the serial run's values: the count says so.
        let err = recheck(
            StreamsOverlap,
            &r,
            &report(Some(words_checksum(out.clone()))),
        )
        .unwrap_err();
        assert!(
            matches!(&err, Disagreement::Values { got, want } if got.count == 1001 && want.count == 2002),
            "{err:?}"
        );
        // The input copied back unchanged: a CPU-free forgery of the right size.
        let input = (0..n as u32).chain(0..n as u32);
        let err = recheck(StreamsOverlap, &r, &report(Some(words_checksum(input)))).unwrap_err();
        assert!(matches!(err, Disagreement::Values { .. }), "{err:?}");
    }

    #[test]
    fn a_run_of_another_family_is_not_this_exercise_s() {
        let report =
            json!({"parameters": {"n": 5000, "a": "i", "b": "2"}, "check": {"compared": 1}});
        let err = recheck(VecaddAnyN, &dot_run(5000), &report).unwrap_err();
        assert!(matches!(err, Disagreement::Parameters { .. }), "{err:?}");
    }
}
