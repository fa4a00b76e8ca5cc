//! One student's one exercise, graded: plan, then jobs, then outcomes, then
//! points. A point when the kernel's PTX shows what the exercise is about;
//! then each planned run made twice, the student's PTX through the course's
//! binary (the kernel's points: host code the student did not write) and
//! the student's own binary with the tracer (the host's points), each
//! judged; then memory safety and speed. Runs and checks earn points only
//! when the PTX point was earned, so an answer computed on the host earns
//! nothing; and the PTX, memory-safety and speed points only for a kernel
//! that passed every planned run it made, so a kernel that shows the right
//! instructions but writes a formula keeps none of them.

use std::path::{Path, PathBuf};

use kernels::catalogue::points::{KERNEL_SHARE, PTX};
use kernels::catalogue::{Emulated, ExerciseId};
use kernels::exit_code::Exit;

use crate::build::bundle::{Bundle, Item};
use crate::build::digest;
use crate::build::ptx_check;
use crate::build::reference::{Kept, Reference};
use crate::confine::runner::Ended;
use crate::confine::runner::Limits;
use crate::confine::sandbox::Isolation;
use crate::judge::points::{self, Bench};
use crate::plan::demands::Demand;
use crate::plan::runs::{self as plan, Role};
use crate::record::outcome::{Failure, Integrity, IntegrityEvidence, NotStarted, Skip, Verdict};
use crate::record::results::{self, Exercise, Run};
use crate::run::job::{self, Job, Made};
use crate::run::lane::{AFTER_A_HANG, Ending, Hangs, Lane, Use};

/// What every exercise of a grading is graded with.
pub struct Context<'a> {
    /// The bundle and its folder.
    pub bundle: &'a Bundle,
    pub bundle_dir: &'a Path,
    pub isolation: &'a Isolation,
    pub limits: Limits,
    /// Assess the memory-safety point: compute-sanitizer on a GPU, the
    /// emulator's findings on it.
    pub sanitize: bool,
    /// The kernels run on the CPU emulator: capped plans, its findings.
    pub emulate: bool,
    /// The emulator's library, where the kernels run on it.
    pub driver: Option<&'a Path>,
    /// The GPU's lanes: which runs share it, which have it alone.
    pub lane: &'a Lane,
}

/// Grades `item`.
pub fn grade(context: &Context, item: &Item) -> Exercise {
    let planned = crate::plan::emulated::plan(item.exercise, context.bundle.seed, context.emulate);
    let plan = planned.runs;
    let mut graded = Exercise {
        refused: item.refused.clone(),
        build_errors: item.build_errors.clone(),
        ptx_missing: item.ptx_missing.clone(),
        runs: vec![],
        points: 0,
        max_points: 0,
        sanitizer: vec![],
        checks: points::not_assessed(&plan, context.sanitize, context.emulate),
        inputs: inputs(
            context.bundle,
            context.bundle_dir,
            context.sanitize,
            context.emulate,
            item,
        ),
        absent: item.absent.clone(),
        integrity: vec![],
        kernel_lost: None,
    };
    // Whether each run above 2^31 elements fits this node, decided once
    // for the item, so that its maximum is the same whether or not
    // anything was built.
    let short: Vec<_> = plan
        .iter()
        .map(|run| {
            (run.memory > 0)
                .then(|| context.lane.shortfall(run.memory))
                .flatten()
        })
        .collect();
    // What it could have earned: every run made, every point assessed.
    graded.max_points = PTX
        + plan
            .iter()
            .zip(&short)
            .filter(|(_, short)| short.is_none())
            .map(|(r, _)| r.points)
            .sum::<u32>()
        + points::assessed_max(&graded.checks);
    let Some(binary) = &item.binary else {
        return graded;
    };
    let binary = context.bundle_dir.join(binary);
    // The binary as built, or nothing runs: a bundle changed since (by a
    // run, or by hand) is not graded.
    let found = digest::file(&binary).ok();
    if item.digest.is_none() || found != item.digest {
        graded.build_errors = Some(format!(
            "the grader refused to run {}: it is not the binary that was built \
             (sha256 {} expected, {} found)",
            item.exercise,
            item.digest.as_deref().unwrap_or("none"),
            found.as_deref().unwrap_or("unreadable"),
        ));
        return graded;
    }
    let counts = item.ptx_missing.is_empty();
    let kernel_host = kernel_host(context, item);
    let tracer = match &context.bundle.tracer {
        None => Err(NotStarted::NoTracer),
        Some(kept) => kept
            .check(context.bundle_dir)
            .map_err(|changed| NotStarted::TracerChanged { changed }),
    };
    let canary = canary_host(context, item);
    let limits = (context.limits.timeout.as_secs_f64(), context.emulate);
    let exercise = item.exercise;
    // Shared by every run and tool of this exercise (`Hangs`).
    let hangs = Hangs::default();
    // The runs of the course's binary that share the GPU, the kernel's and
    // the canary's, each made in one process first (`run::batch`); a run
    // the batch does not give is made in the loop below, in a process of
    // its own. On the CPU emulator a process costs little (no driver
    // makes a context), so a failing kernel's batch would be a run lost:
    // there only the canary's runs, which always report, are batched.
    // `chosen`: the plan's indices of the runs that fit the node and that
    // `wanted` marks.
    let chosen = |wanted: &dyn Fn(&plan::Run) -> bool| -> Vec<usize> {
        (0..plan.len())
            .filter(|&i| short[i].is_none() && wanted(&plan[i]))
            .collect()
    };
    // Only a pass: a failing verdict comes from a process of its own.
    let passed = |code| code == Exit::Passed.code();
    // A report with the canary's result, which moves off the exact answer
    // by design and so fails the course's check: that is its result.
    let reported = Exit::reached_the_check;
    let mut kernel_batch = match &kernel_host {
        Ok((reference, ptx)) if !context.emulate => {
            let shares = chosen(&|run| {
                using(exercise, run, Role::KernelInCourseHost, context.emulate) == Use::Shared
            });
            let job = |run| Job {
                run,
                role: Role::KernelInCourseHost,
                binary: reference,
                ptx: Some(ptx),
                tracer: None,
            };
            batched(context, exercise, &plan, &shares, job, passed)
        }
        _ => vec![],
    };
    let host_runs = |run: &plan::Run| run.points > KERNEL_SHARE.min(run.points);
    let mut canary_batch = match (&tracer, &canary) {
        (Ok(_), Ok((_, canary_ptx, reference))) => {
            let shares = chosen(&|run| canary_using(run) == Use::Shared && host_runs(run));
            let job = |run| Job {
                run,
                role: Role::KernelInCourseHost,
                binary: reference,
                ptx: Some(canary_ptx),
                tracer: None,
            };
            batched(context, exercise, &plan, &shares, job, reported)
        }
        _ => vec![],
    };
    // The student's own binary's runs (with the canary's kernel), traced,
    // the same way; a run is the batch's only where it is then judged a
    // pass. Not on the CPU emulator: there the grader's class took 115.2 s
    // at `--jobs 2` with them against 108.9 s without, on 2 cores
    // (`scripts/perf/README.md`, 2026-11-29, night).
    let mut student_batch = match (&tracer, &canary) {
        (Ok(tracer), Ok((canary_binary, _, _))) if !context.emulate => {
            let shares = chosen(&|run| {
                using(exercise, run, Role::StudentHost, context.emulate) == Use::Shared
                    && host_runs(run)
            });
            let job = |run| Job {
                run,
                role: Role::StudentHost,
                binary: canary_binary,
                ptx: None,
                tracer: Some(tracer),
            };
            // The judge, against the canary, says whether it passed.
            batched(context, exercise, &plan, &shares, job, reported)
        }
        _ => vec![],
    };
    let bench = Bench {
        isolation: context.isolation,
        limits: context.limits,
        lane: context.lane,
        hangs: &hangs,
        keeps_work_queues: reads_overlap(exercise),
    };
    // The speed point's run, on a GPU, and the course's own kernel's time
    // at it, taken right after the student's kernel's: the two timed runs
    // of an exercise then wait for the GPU alone in the same drain, before
    // its sanitizer tools and its runs above 2^31 elements (tens of
    // seconds of long shares each run alone would wait behind), and on a
    // GPU in the same state.
    let timed = plan.iter().find(|r| r.timed).filter(|_| !context.emulate);
    let mut course_timed = None;
    for (index, (run, short)) in plan.iter().zip(short).enumerate() {
        let kernel_points = KERNEL_SHARE.min(run.points);
        if let Some(shortfall) = short {
            let skip = Skip::Memory { shortfall };
            graded
                .runs
                .push(results::skipped(exercise.name(), run, skip));
            continue;
        }
        if run.memory > 0 && !counts {
            // Tens of seconds of the node's time that could earn nothing.
            graded.runs.push(not_run(
                run,
                Role::KernelInCourseHost,
                kernel_points,
                NotStarted::PtxLacks,
            ));
            continue;
        }
        graded.runs.push(match &kernel_host {
            Ok((reference, ptx)) => {
                let job = Job {
                    run,
                    role: Role::KernelInCourseHost,
                    binary: reference,
                    ptx: Some(ptx),
                    tracer: None,
                };
                // A kernel that has hung alone gets less time in its later
                // runs (the runs above 2^31 elements keep the whole timeout).
                let timeout = if hangs.seen() && run.memory == 0 {
                    context.limits.timeout.min(AFTER_A_HANG)
                } else {
                    context.limits.timeout
                };
                let kernel_limits = Limits {
                    timeout,
                    ..context.limits
                };
                let limits = (timeout.as_secs_f64(), context.emulate);
                let judged = |made| {
                    crate::judge::run::judge(
                        exercise,
                        &job,
                        made,
                        kernel_points,
                        counts,
                        limits,
                        None,
                    )
                };
                // The batch took only an exit that passed the course's
                // check; the grader's recheck may still fail it, and then
                // the run is made again alone as any other failure.
                let judged = pass_or_alone(take(&mut kernel_batch, index), judged, || {
                    make(context, exercise, &hangs, &job, kernel_limits)
                });
                if timed == Some(run) && points::theirs_ms(&judged).is_some() {
                    course_timed = Some(points::course_ms(&bench, reference, run));
                }
                judged
            }
            Err(why) => not_run(run, Role::KernelInCourseHost, kernel_points, why.clone()),
        });
        let host_points = run.points - kernel_points;
        if host_points == 0 {
            // A kernel-only run: the student's binary is not asked.
            continue;
        }
        graded.runs.push(match (&tracer, &canary) {
            (Ok(tracer), Ok((canary_binary, canary_ptx, reference))) => {
                // The canary's result, from the course's host code.
                let course = Job {
                    run,
                    role: Role::KernelInCourseHost,
                    binary: reference,
                    ptx: Some(canary_ptx),
                    tracer: None,
                };
                let made = take(&mut canary_batch, index).unwrap_or_else(|| {
                    let using = canary_using(run);
                    made_as(context, exercise, &hangs, &course, context.limits, using)
                });
                let expected: Option<serde_json::Value> =
                    serde_json::from_str(made.outcome.stdout.trim())
                        .ok()
                        .filter(|r: &serde_json::Value| r["results"].is_object());
                let unverified = NotStarted::CanaryUnverified {
                    ended: format!(
                        "{:?}: {}",
                        made.outcome.ended,
                        made.outcome
                            .stdout
                            .trim()
                            .chars()
                            .take(300)
                            .collect::<String>()
                    ),
                };
                let job = Job {
                    run,
                    role: Role::StudentHost,
                    binary: canary_binary,
                    ptx: None,
                    tracer: Some(tracer),
                };
                let canary_said = expected.as_ref().ok_or(unverified);
                let judged = |made| {
                    crate::judge::run::judge(
                        exercise,
                        &job,
                        made,
                        host_points,
                        counts,
                        limits,
                        Some(canary_said.clone()),
                    )
                };
                pass_or_alone(take(&mut student_batch, index), judged, || {
                    make(context, exercise, &hangs, &job, context.limits)
                })
            }
            (Err(why), _) | (_, Err(why)) => {
                not_run(run, Role::StudentHost, host_points, why.clone())
            }
        });
    }
    graded.runs.extend(planned.skipped.into_iter().map(|s| {
        let skip = Skip::Emulator {
            too_slow: s.too_slow.to_owned(),
        };
        results::skipped(exercise.name(), &s.run, skip)
    }));
    // The PTX, memory-safety and speed points need a kernel that passes
    // every planned run it made in the course's host code (runs left out
    // count neither way): a kernel that shows the right instructions but
    // writes a formula, never reading its inputs, earns none of them.
    graded.kernel_lost = graded
        .runs
        .iter()
        .find(|r| r.role == Some(Role::KernelInCourseHost) && r.lost() && !no_gpu(&r.verdict))
        .map(|r| r.tag);
    let earns = counts && graded.kernel_lost.is_none();
    if context.sanitize && context.emulate && !plan.is_empty() {
        points::set(
            &mut graded.checks,
            points::emulator_safety(&graded.runs, earns),
        );
    } else if context.sanitize && !plan.is_empty() {
        let ran = |tag| {
            graded
                .runs
                .iter()
                .find(|r| r.role == Some(Role::KernelInCourseHost) && r.tag == tag)
        };
        let sanitized: Vec<(&plan::Run, Option<&Run>)> = sanitized_runs(exercise, &plan)
            .into_iter()
            .map(|r| (r, ran(r.tag)))
            .collect();
        let (check, sanitized) =
            points::memory_safety(&bench, exercise, &kernel_host, &sanitized, earns);
        graded.sanitizer = sanitized;
        points::set(&mut graded.checks, check);
    }
    if let Some(timed) = timed {
        let asks = item.exercise.exercise().speed_fraction();
        let check = points::speed(&graded.runs, &kernel_host, timed, course_timed, asks, earns);
        points::set(&mut graded.checks, check);
    }
    // A report the evidence contradicts: the exercise's host points go.
    graded.integrity = graded
        .runs
        .iter()
        .filter(|r| {
            matches!(
                r.verdict,
                Verdict::Failed {
                    failure: Failure::CpuAnswer
                }
            )
        })
        .map(|r| Integrity {
            tag: r.tag,
            evidence: IntegrityEvidence::CpuAnswer,
        })
        .collect();
    if !graded.integrity.is_empty() {
        for run in &mut graded.runs {
            if run.role == Some(Role::StudentHost) {
                run.points = 0;
            }
        }
    }
    graded.points = u32::from(earns) * PTX
        + graded.runs.iter().map(|r| r.points).sum::<u32>()
        + graded.checks.iter().map(|c| c.points).sum::<u32>();
    graded.max_points = PTX
        + graded.runs.iter().map(|r| r.max_points).sum::<u32>()
        + points::assessed_max(&graded.checks);
    graded
}

/// The plan's runs at `chosen` (indices), each made as `job` says, all in
/// one process (`run::batch`): by plan index, each run's [`Made`] where its
/// exit code is one `takes` takes, None where it is to be made alone. It
/// is a short share, as each of its runs would be: beside others a batch
/// takes about what one run does (1.7 s on an H200 at `--jobs 16`), and a
/// long share waits while any timed run is in flight, which left the GPU
/// idle once most runs were in batches (`scripts/perf/README.md`, "The
/// student's runs in one process", 2026-11-29).
fn batched<'a>(
    context: &Context,
    exercise: ExerciseId,
    plan: &'a [plan::Run],
    chosen: &[usize],
    job: impl Fn(&'a plan::Run) -> Job<'a>,
    takes: impl Fn(i32) -> bool,
) -> Vec<Option<Made>> {
    let mut by_index: Vec<Option<Made>> = plan.iter().map(|_| None).collect();
    // One run gains nothing from a batch.
    if chosen.len() < 2 {
        return by_index;
    }
    let jobs: Vec<Job> = chosen.iter().map(|&i| job(&plan[i])).collect();
    let limits = Limits {
        timeout: context.limits.timeout.min(crate::run::batch::TIMEOUT),
        ..context.limits
    };
    let phase = match jobs[0].role {
        Role::KernelInCourseHost => "runs in batches",
        Role::StudentHost => "the student's runs in batches",
    };
    let made = context.lane.run_as(phase, Use::Shared, |_| {
        crate::run::batch::make(
            &jobs,
            takes,
            context.isolation,
            limits,
            context.driver,
            reads_overlap(exercise),
        )
    });
    for (&i, made) in chosen.iter().zip(made) {
        by_index[i] = made;
    }
    by_index
}

/// The run a batch `made`, `judged`, where that is a pass; otherwise the
/// run made again in a process of its own (`alone`), whose verdict stands
/// whatever it is: a failing verdict never comes from a batch.
fn pass_or_alone<M>(made: Option<M>, judged: impl Fn(M) -> Run, alone: impl FnOnce() -> M) -> Run {
    match made.map(&judged) {
        Some(run) if run.verdict.passed() => run,
        _ => judged(alone()),
    }
}

/// The batch's [`Made`] for the plan's run `index`, if it has one.
fn take(batch: &mut [Option<Made>], index: usize) -> Option<Made> {
    batch.get_mut(index).and_then(Option::take)
}

/// Makes `job` in its lane (`using`); a run that ended in a way another
/// process on the GPU could have caused is made again alone
/// ([`Lane::run_confirmed`]). A wrong answer is the kernel's own (contexts
/// do not share memory) and stands.
fn make(context: &Context, exercise: ExerciseId, hangs: &Hangs, job: &Job, limits: Limits) -> Made {
    let using = using(exercise, job.run, job.role, context.emulate);
    made_as(context, exercise, hangs, job, limits, using)
}

/// [`make`], using the GPU as `using` says.
fn made_as(
    context: &Context,
    exercise: ExerciseId,
    hangs: &Hangs,
    job: &Job,
    limits: Limits,
    using: Use,
) -> Made {
    let phase = match using {
        // A long share: streams' untimed run of the student's binary.
        Use::Shared | Use::SharedLong => "runs",
        Use::Alone => "timed runs",
        Use::Gated => "gated runs",
        Use::Memory(_) => "runs above 2^31",
    };
    context.lane.run_confirmed(
        phase,
        using,
        hangs,
        |gate| {
            let keeps_work_queues = reads_overlap(exercise);
            job::make(
                job,
                context.isolation,
                limits,
                context.driver,
                gate,
                keeps_work_queues,
            )
        },
        |made: &Made| ending(&made.outcome.ended),
    )
}

/// Whether the exercise's verdicts read how its streams overlap in time:
/// its runs are timed, and keep the driver's several work queues per
/// context (`sandbox::ONE_WORK_QUEUE`).
fn reads_overlap(exercise: ExerciseId) -> bool {
    crate::plan::exercise::demands(exercise).contains(&Demand::OverlapInTime)
}

/// Whether a process beside a run on the GPU could have made it end so.
fn ending(ended: &Ended) -> Ending {
    match ended {
        Ended::Exited(code) if *code == kernels::exit_code::Exit::CudaError.code() => {
            Ending::Neighbours
        }
        Ended::Exited(_) => Ending::Own,
        Ended::TimedOut => Ending::OutOfTime,
        Ended::Signalled(_) | Ended::DidNotStart(_) => Ending::Neighbours,
    }
}

/// How the canary's run in the course's binary uses the GPU: its result is
/// all the grader reads of it (`plan::exercise::canary_agrees`), never a
/// time, so it shares the GPU at every run, timed ones included, and a run
/// above 2^31 elements reserves its memory.
fn canary_using(run: &plan::Run) -> Use {
    if run.memory > 0 {
        Use::Memory(run.memory)
    } else {
        Use::Shared
    }
}

/// How a planned run made in `role` uses the GPU. Where its verdict reads
/// a time, alone while it times: for the course's binary, the speed
/// point's run and streams' runs (whose feedback shows the overlap), which
/// say when through the timing gate (`run::gate`); for the student's own
/// binary, whose host code could say anything, streams' run whose overlap
/// in time the judge asks (`plan::exercise::overlap_timed_at`), alone for
/// the whole process. The student's binary at streams' other run, 5 GiB
/// of host memory and seconds of process, reads no time and shares the
/// GPU for long, so no run waiting to be alone waits behind it; at the
/// speed point's run it reads no time either (the speed point is the
/// kernel's, in the course's binary) and shares. A run above 2^31
/// elements, which no timed run is, would be alone rather than share the
/// node's memory unreserved; otherwise such a run reserves its memory, and
/// the others share. On the CPU emulator nothing is timed.
pub fn using(exercise: ExerciseId, run: &plan::Run, role: Role, emulate: bool) -> Use {
    let overlap = reads_overlap(exercise);
    let timed = match role {
        Role::KernelInCourseHost => run.timed || overlap,
        Role::StudentHost => crate::plan::exercise::overlap_timed_at(exercise, run.tag),
    };
    if emulate {
        Use::Shared
    } else if timed && role == Role::KernelInCourseHost && run.memory == 0 {
        Use::Gated
    } else if timed {
        Use::Alone
    } else if run.memory > 0 {
        Use::Memory(run.memory)
    } else if overlap && role == Role::StudentHost {
        Use::SharedLong
    } else {
        Use::Shared
    }
}

/// The digest of what an item's grade depends on: the binary as it is now
/// and as it was built, the test plan, what the build found, and the
/// trusted code its runs go through (reference binary, PTX, tracer).
/// `sanitize` and `emulate` are the grading's settings; nothing is run.
pub fn inputs(
    bundle: &Bundle,
    bundle_dir: &Path,
    sanitize: bool,
    emulate: bool,
    item: &Item,
) -> Option<String> {
    let plan = crate::plan::emulated::plan(item.exercise, bundle.seed, emulate).runs;
    let binary = item
        .binary
        .as_ref()
        .map(|b| digest::file(&bundle_dir.join(b)).ok());
    let reference = bundle.reference.get(item.exercise.name());
    Some(digest::bytes(
        format!(
            "{binary:?}\n{:?}\n{plan:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{reference:?}\n{:?}\n{:?}\n\
             sanitize {}\ncanary {:?}",
            item.digest,
            item.build_errors,
            item.refused,
            item.ptx_missing,
            item.absent,
            item.ptx,
            bundle.tracer,
            sanitize,
            item.canary,
        )
        .as_bytes(),
    ))
}

/// The course's reference build for an item's exercise, as the bundle
/// lists it.
fn reference<'a>(context: &Context<'a>, item: &Item) -> Result<&'a Reference, NotStarted> {
    context
        .bundle
        .reference
        .get(item.exercise.name())
        .ok_or_else(|| NotStarted::NoReference {
            exercise: item.exercise.name().to_owned(),
        })
}

/// The reference binary and the student's PTX for an item's kernel runs,
/// each as it was built; else why the kernel cannot be run.
fn kernel_host(context: &Context, item: &Item) -> Result<(PathBuf, Kept), NotStarted> {
    let bundle_dir = context.bundle_dir;
    let reference = reference(context, item)?;
    let ptx = item.ptx.as_ref().ok_or(NotStarted::NoPtx)?;
    let refused = |changed| NotStarted::Refused { changed };
    let binary = reference.binary.check(bundle_dir).map_err(refused)?;
    let path = ptx.check(bundle_dir).map_err(refused)?;
    let course = reference.ptx.check(bundle_dir).map_err(refused)?;
    let read = |p: &Path| {
        ptx_check::read(p).map_err(|error| NotStarted::Unreadable {
            error: error.to_string(),
        })
    };
    if let Some(mismatch) = ptx_check::signature_mismatch(&read(&path)?, &read(&course)?) {
        return Err(NotStarted::Signature { mismatch });
    }
    Ok((
        binary,
        Kept {
            path,
            digest: ptx.digest.clone(),
        },
    ))
}

/// The student's canary build and its PTX, each as built, and the course's
/// binary that runs the PTX for the result to expect; else why the
/// student's host code cannot be run.
fn canary_host(context: &Context, item: &Item) -> Result<(PathBuf, Kept, PathBuf), NotStarted> {
    let canary = item.canary.as_ref().ok_or(NotStarted::NoCanary)?;
    let changed = |changed| NotStarted::CanaryChanged { changed };
    let binary = canary.binary.check(context.bundle_dir).map_err(changed)?;
    let ptx = canary.ptx.check(context.bundle_dir).map_err(changed)?;
    let course = reference(context, item)?
        .binary
        .check(context.bundle_dir)
        .map_err(|changed| NotStarted::Refused { changed })?;
    Ok((
        binary,
        Kept {
            path: ptx,
            digest: canary.ptx.digest.clone(),
        },
        course,
    ))
}

/// A run that found no GPU: the node's doing, not the kernel's, so it
/// withholds no point that needs a correct kernel.
fn no_gpu(verdict: &Verdict) -> bool {
    matches!(verdict, Verdict::CudaError { name: Some(name), .. } if name == "CUDA_ERROR_NO_DEVICE")
}

/// The runs compute-sanitizer goes over: the first planned run, the
/// smallest, and the first after it of moderate size (neither timed nor
/// past 2^31, and made on the CPU emulator too, so seconds of work): an
/// edge shape, where an access one past the end or a race between warps
/// shows that one element does not.
fn sanitized_runs(exercise: ExerciseId, plan: &[plan::Run]) -> Vec<&plan::Run> {
    let moderate = |run: &&plan::Run| {
        let spec = exercise.exercise().run(run.tag);
        !run.timed
            && run.memory == 0
            && spec.is_some_and(|s| !s.past_int && s.emulated == Emulated::Capped)
    };
    plan.iter()
        .take(1)
        .chain(plan.iter().skip(1).find(moderate))
        .collect()
}

/// A planned run that could not be made in `role`, and why.
fn not_run(run: &plan::Run, role: Role, points: u32, reason: NotStarted) -> Run {
    Run::not_made(run, Some(role), Verdict::DidNotStart { reason }, points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_s_run_stands_only_as_a_pass_and_a_remade_one_whatever_it_is() {
        let plan = crate::plan::exercise::plan(ExerciseId::DotSm, 1);
        // A made run stands for its verdict here: Some(failure) or a pass.
        let judged = |failure: Option<Failure>| {
            let mut run = results::skipped(
                "dot-sm",
                &plan[0],
                Skip::Emulator {
                    too_slow: String::new(),
                },
            );
            run.verdict = match failure {
                None => Verdict::Passed,
                Some(failure) => Verdict::Failed { failure },
            };
            run
        };
        let remade = std::cell::Cell::new(0);
        let alone = |failure: Option<Failure>| {
            let remade = &remade;
            move || {
                remade.set(remade.get() + 1);
                failure
            }
        };
        let wrong = || Some(Failure::CpuAnswer);
        // A pass from the batch stands; nothing is made again.
        let run = pass_or_alone(Some(None), judged, alone(wrong()));
        assert_eq!((run.verdict.passed(), remade.get()), (true, 0));
        // A failure from the batch is made again alone, and the remade
        // verdict stands, a pass or a failure.
        let run = pass_or_alone(Some(wrong()), judged, alone(None));
        assert_eq!((run.verdict.passed(), remade.get()), (true, 1));
        let run = pass_or_alone(Some(wrong()), judged, alone(wrong()));
        assert_eq!(
            (run.verdict.clone(), remade.get()),
            (judged(wrong()).verdict, 2)
        );
        // No run from the batch: made alone.
        let run = pass_or_alone(None, judged, alone(None));
        assert_eq!((run.verdict.passed(), remade.get()), (true, 3));
    }

    #[test]
    fn only_endings_a_neighbour_could_cause_are_made_again_alone() {
        let cuda = kernels::exit_code::Exit::CudaError.code();
        assert_eq!(ending(&Ended::Exited(cuda)), Ending::Neighbours);
        assert_eq!(ending(&Ended::TimedOut), Ending::OutOfTime);
        assert_eq!(ending(&Ended::Signalled(9)), Ending::Neighbours);
        assert_eq!(
            ending(&Ended::DidNotStart("slots".into())),
            Ending::Neighbours
        );
        // A wrong answer, or a pass, is the kernel's own.
        assert_eq!(ending(&Ended::Exited(0)), Ending::Own);
        assert_eq!(ending(&Ended::Exited(1)), Ending::Own);
    }

    #[test]
    fn runs_whose_verdict_reads_a_time_have_the_gpu_alone_and_large_runs_reserve_memory() {
        for exercise in kernels::catalogue::EXERCISES {
            let id = ExerciseId::from_name(exercise.name).unwrap();
            // Only streams' runs keep the driver's several work queues.
            assert_eq!(reads_overlap(id), id == ExerciseId::StreamsOverlap, "{id}");
            for run in crate::plan::exercise::plan(id, 7) {
                let overlap = id == ExerciseId::StreamsOverlap;
                // No timed run is above 2^31: the gate would let it share
                // the node's memory unreserved.
                assert!(
                    !(run.timed || overlap) || run.memory == 0,
                    "{id} {}",
                    run.tag
                );
                for role in [Role::KernelInCourseHost, Role::StudentHost] {
                    let want = match role {
                        // The course's binary, alone while it times.
                        Role::KernelInCourseHost if run.timed || overlap => Use::Gated,
                        // The student's, alone throughout where its
                        // overlap is timed: never a gate.
                        Role::StudentHost if overlap && run.tag == plan::Tag::UnevenChunks => {
                            Use::Alone
                        }
                        // Its other run, past the grid: long, untimed.
                        Role::StudentHost if overlap => Use::SharedLong,
                        _ if run.memory > 0 => Use::Memory(run.memory),
                        // The student's binary at the speed point's run too.
                        _ => Use::Shared,
                    };
                    assert_eq!(
                        using(id, &run, role, false),
                        want,
                        "{id} {} {role:?}",
                        run.tag
                    );
                    // Nothing is timed on the emulator.
                    let emulated = using(id, &run, role, true);
                    assert_eq!(emulated, Use::Shared, "{id} {}", run.tag);
                }
            }
        }
    }
}
