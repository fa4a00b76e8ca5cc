//! What the broker's record of a student's own binary must show for its
//! passing report to count: the questions each exercise's
//! family demands (`plan::exercise::demands`), asked of the calls the
//! broker made for it and the GPU times it measured (`judge::timeline`).
//! Each answer is Ok, or the [`Evidence`] against the report. The record is
//! written outside the student's process (`run::brokered`): every call in it
//! was made, with the result and, for copies, the host memory it names.
//! That the kernel computed the answer is the canary's to show
//! (`judge::run`).

use std::collections::BTreeSet;

use kernels::catalogue::{ExerciseId, RunTag as Tag};
use kernels::trace_record::{Call, Direction};

use crate::judge::timeline;
use crate::plan::demands::Demand;
use crate::record::outcome::{Evidence, Failure, Overlap};
use crate::run::trace::Trace;

/// Why the run `tag` of `exercise` whose report passed does not count, from
/// the broker's record; None when it shows the work. The overlap in
/// time is asked only on a GPU (`emulated` is the grader's knowledge, never
/// the report's), at the run it is timed at
/// (`plan::exercise::overlap_timed_at`), which had the GPU alone: a run
/// beside others reads no time.
pub fn judge(exercise: ExerciseId, tag: Tag, trace: &Trace, emulated: bool) -> Option<Failure> {
    let demands = crate::plan::exercise::demands(exercise);
    for demand in demands {
        let found = match demand {
            Demand::Launched => launched(trace, exercise),
            Demand::CopiedBack => copied_back(trace, exercise),
            Demand::OverlappedCopies => overlapped_copies(trace),
            // Asked of the report, once the trace shows the copies.
            Demand::OverlapInTime => continue,
        };
        if let Err(evidence) = found {
            return Some(Failure::Trace { evidence });
        }
    }
    if !emulated && crate::plan::exercise::overlap_timed_at(exercise, tag) {
        return hid_work_on_the_gpu(trace)
            .err()
            .map(|overlap| Failure::NoOverlap { overlap });
    }
    None
}

/// The least share of what overlapping could hide that streams-overlap's
/// timed run must hide on the broker's timeline ([`timeline::hidden_share`]).
/// The course's solution hides most of it; a correct pipeline whose
/// overlapped run took 0.84 of its serial one (the least an H100 measured
/// of correct kernels, with the course's host code) hides about a third,
/// a sixth counted beside its serial run; streams one after another hide
/// none.
pub const MIN_HIDDEN: f64 = 0.1;

/// streams-overlap on a GPU: the broker's timeline shows the streams'
/// work hiding behind each other, measured against that run's own copy and
/// kernel times. Threat model: the report's times are the student's
/// process's to write, so they are not read; the timeline is the broker's,
/// from events it records itself around each copy and launch, so only work
/// that did overlap shows overlapping.
pub fn hid_work_on_the_gpu(trace: &Trace) -> Result<(), Overlap> {
    match timeline::hidden_share(trace) {
        Some(share) if share < MIN_HIDDEN => Err(Overlap::NotConcurrent {
            fraction: share,
            limit: MIN_HIDDEN,
        }),
        // Nothing timed to hide: the demands above said what was missing.
        _ => Ok(()),
    }
}

/// Every kernel `exercise` needs was launched, successfully.
pub fn launched(trace: &Trace, exercise: ExerciseId) -> Result<(), Evidence> {
    for names in exercise.exercise().launches {
        let launches: Vec<&Call> = trace
            .calls
            .iter()
            .filter(|c| c.is_launch() && c.kernel.as_deref().is_some_and(|k| names.contains(&k)))
            .collect();
        let kernels = || names.iter().map(|n| n.to_string()).collect();
        if launches.is_empty() {
            return Err(Evidence::NeverLaunched { kernels: kernels() });
        }
        if launches.iter().all(|c| c.result != 0) {
            return Err(Evidence::EveryLaunchFailed {
                kernels: kernels(),
                error: launches[0].result,
            });
        }
    }
    Ok(())
}

/// A copy from the GPU to the host succeeded after the last successful
/// launch of the exercise's kernels: the result shown came back from the
/// GPU after the kernel ran.
pub fn copied_back(trace: &Trace, exercise: ExerciseId) -> Result<(), Evidence> {
    let names: Vec<&str> = exercise
        .exercise()
        .launches
        .iter()
        .flat_map(|k| k.iter().copied())
        .collect();
    let last_launch = trace
        .calls
        .iter()
        .filter(|c| c.is_launch() && c.result == 0)
        .filter(|c| c.kernel.as_deref().is_some_and(|k| names.contains(&k)))
        .map(|c| c.seq)
        .max();
    let Some(last_launch) = last_launch else {
        return Err(Evidence::NoLaunchSucceeded {
            kernels: names.iter().map(|n| n.to_string()).collect(),
        });
    };
    let launch = trace.calls.iter().find(|c| c.seq == last_launch);
    // After it in the order the calls returned and, where the broker timed
    // both, on the GPU: a copy on another stream that nothing ordered
    // after the kernel may have read its output before it was written.
    let back = trace.calls.iter().any(|c| {
        c.seq > last_launch
            && c.result == 0
            && c.direction == Some(Direction::DeviceToHost)
            && launch.is_none_or(|l| timeline::ran_after(l, c) != Some(false))
    });
    if back {
        Ok(())
    } else {
        Err(Evidence::NoCopyBack { last_launch })
    }
}

/// streams-overlap's evidence: asynchronous copies to and from page-locked
/// memory, each direction on at least two streams.
pub fn overlapped_copies(trace: &Trace) -> Result<(), Evidence> {
    for direction in [Direction::HostToDevice, Direction::DeviceToHost] {
        let copies: Vec<&Call> = trace
            .calls
            .iter()
            .filter(|c| c.result == 0 && c.direction == Some(direction))
            .collect();
        let async_pinned: BTreeSet<u64> = copies
            .iter()
            .filter(|c| c.is_async() && c.pinned == Some(true))
            .filter_map(|c| c.stream)
            .filter(|&stream| stream != 0)
            .collect();
        if async_pinned.len() >= 2 {
            continue;
        }
        let pageable = copies.iter().filter(|c| c.pinned == Some(false)).count();
        let synchronous = copies.iter().filter(|c| !c.is_async()).count();
        return Err(if pageable > 0 {
            Evidence::Pageable {
                direction,
                copies: pageable,
            }
        } else if synchronous > 0 && async_pinned.is_empty() {
            Evidence::Synchronous { direction }
        } else {
            Evidence::FewStreams {
                direction,
                streams: async_pinned.len(),
            }
        });
    }
    Ok(())
}

/// Chunks the run the overlap is timed at has at least: with k equal
/// chunks of three stages a pipeline can hide up to (2k - 2) / 3k of the
/// serial time, a half at k = 4.
pub const OVERLAP_CHUNKS: u64 = 4;

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// A trace of process 7 from `body`, one record per line with the
    /// sequence numbers and pid filled in.
    fn trace(body: &[&str]) -> Trace {
        let text: String = body
            .iter()
            .enumerate()
            .map(|(seq, line)| format!("{seq} 7 {line}\n"))
            .collect();
        Trace::parse(&format!("# cuda-course-trace 1\n{text}"), 7).unwrap()
    }

    const DOT_RUN: &[&str] = &[
        "cuModuleGetFunction 0 kernel=dot",
        "cuMemcpyHtoD_v2 0 stream=0x0 bytes=4000 dir=htod pinned=0",
        "cuLaunchKernel 0 stream=0x5a kernel=dot grid=4,1,1 block=256,1,1",
        "cuMemcpyDtoH_v2 0 stream=0x0 bytes=16 dir=dtoh pinned=0",
    ];

    #[test]
    fn a_run_that_launched_and_copied_back_passes() {
        let t = trace(DOT_RUN);
        assert_eq!(t.calls.len(), 4);
        assert_eq!(t.calls[3].direction, Some(Direction::DeviceToHost));
        assert_eq!(t.calls[2].stream, Some(0x5a));
        assert_eq!(launched(&t, ExerciseId::DotSm), Ok(()));
        assert_eq!(copied_back(&t, ExerciseId::DotSm), Ok(()));
    }

    #[test]
    fn a_result_without_a_launch_says_which_kernel_is_missing() {
        let t = trace(&[DOT_RUN[0], DOT_RUN[1], DOT_RUN[3]]);
        let err = launched(&t, ExerciseId::DotGm).unwrap_err().to_string();
        assert!(err.contains("never launched `dot`"), "{err}");
        assert!(
            copied_back(&t, ExerciseId::DotGm)
                .unwrap_err()
                .to_string()
                .contains("no launch")
        );
        // Another exercise's kernel is not this one's.
        let err = launched(&trace(DOT_RUN), ExerciseId::VecaddAnyN)
            .unwrap_err()
            .to_string();
        assert!(err.contains("`vecadd`"), "{err}");
    }

    #[test]
    fn failed_launches_do_not_count() {
        let t = trace(&[
            "cuLaunchKernel 1 stream=0x0 kernel=dot grid=0,1,1 block=256,1,1",
            "cuMemcpyDtoH_v2 0 stream=0x0 bytes=16 dir=dtoh pinned=0",
        ]);
        let err = launched(&t, ExerciseId::DotAtomic).unwrap_err().to_string();
        assert!(err.contains("CUDA error 1"), "{err}");
        assert!(copied_back(&t, ExerciseId::DotAtomic).is_err());
    }

    #[test]
    fn a_copy_back_before_the_last_launch_is_not_the_result() {
        let t = trace(&[DOT_RUN[0], DOT_RUN[3], DOT_RUN[2]]);
        let err = copied_back(&t, ExerciseId::DotSm).unwrap_err().to_string();
        assert!(err.contains("after the last launch"), "{err}");
        // A failed copy back does not count either.
        let failed = trace(&[
            DOT_RUN[2],
            "cuMemcpyDtoH_v2 700 stream=0x0 bytes=16 dir=dtoh pinned=0",
        ]);
        assert!(copied_back(&failed, ExerciseId::DotSm).is_err());
    }

    #[test]
    fn every_exercise_s_kernels_are_the_solution_s_kernels() {
        let course = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for exercise in kernels::catalogue::EXERCISES {
            let needs = exercise.launches;
            assert!(!needs.is_empty(), "{}", exercise.name);
            let cu = course
                .join("solutions")
                .join(exercise.name)
                .join("src/kernel.cu");
            let source = std::fs::read_to_string(&cu).unwrap();
            for name in needs.iter().flat_map(|k| k.iter()) {
                assert!(
                    source.contains(&format!("__global__ void {name}(")),
                    "{}: no kernel {name}",
                    cu.display()
                );
            }
        }
    }

    #[test]
    fn memspace_needs_all_four_kernels_and_matmul_tiled_either_tile() {
        let three: Vec<String> = ["sum_global", "sum_constant", "sum_register"]
            .iter()
            .map(|k| format!("cuLaunchKernel 0 stream=0x0 kernel={k}"))
            .collect();
        let three: Vec<&str> = three.iter().map(String::as_str).collect();
        let err = launched(&trace(&three), ExerciseId::MemspaceTiming)
            .unwrap_err()
            .to_string();
        assert!(err.contains("`sum_shared`"), "{err}");
        let tiled = trace(&["cuLaunchKernel 0 stream=0x0 kernel=matmul_tiled_32"]);
        assert_eq!(launched(&tiled, ExerciseId::MatmulTiled), Ok(()));
    }

    /// streams-overlap's copies: `pinned` and `async` for every copy, on
    /// streams 0xa and 0xb.
    fn streams_run(pinned: u8, copy: &str) -> Trace {
        let lines: Vec<String> = [0xa, 0xb, 0xa, 0xb]
            .iter()
            .flat_map(|stream| {
                [
                    format!(
                        "cuMemcpyHtoD{copy} 0 stream={stream:#x} bytes=64 dir=htod pinned={pinned}"
                    ),
                    format!("cuLaunchKernel 0 stream={stream:#x} kernel=transform"),
                    format!(
                        "cuMemcpyDtoH{copy} 0 stream={stream:#x} bytes=64 dir=dtoh pinned={pinned}"
                    ),
                ]
            })
            .collect();
        trace(&lines.iter().map(String::as_str).collect::<Vec<_>>())
    }

    #[test]
    fn streams_overlap_needs_pinned_async_copies_on_two_streams() {
        let good = streams_run(1, "Async_v2");
        assert_eq!(overlapped_copies(&good), Ok(()));
        assert_eq!(launched(&good, ExerciseId::StreamsOverlap), Ok(()));
        assert_eq!(copied_back(&good, ExerciseId::StreamsOverlap), Ok(()));

        let err = overlapped_copies(&streams_run(0, "Async_v2"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("pageable"), "{err}");
        let err = overlapped_copies(&streams_run(1, "_v2"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("synchronous"), "{err}");

        // Everything on one stream.
        let one = trace(&[
            "cuMemcpyHtoDAsync_v2 0 stream=0xa bytes=64 dir=htod pinned=1",
            "cuMemcpyDtoHAsync_v2 0 stream=0xa bytes=64 dir=dtoh pinned=1",
        ]);
        let err = overlapped_copies(&one).unwrap_err().to_string();
        assert!(err.contains("1 stream(s)"), "{err}");
    }

    fn pid_2(lines: &[&str]) -> Trace {
        let text: String = lines
            .iter()
            .enumerate()
            .map(|(seq, line)| format!("{seq} 2 {line}\n"))
            .collect();
        Trace::parse_first(&format!("# cuda-course-trace 1\n{text}")).unwrap()
    }

    #[test]
    fn a_report_without_a_launch_or_a_copy_back_does_not_count() {
        let launched = "cuLaunchKernel 0 stream=0x5a kernel=vecadd grid=4,1,1 block=256,1,1";
        let back = "cuMemcpyDtoH_v2 0 stream=0x0 bytes=16 dir=dtoh pinned=0";
        assert_eq!(
            judge(
                ExerciseId::VecaddAnyN,
                Tag::OneElement,
                &pid_2(&[launched, back]),
                false
            ),
            None
        );
        let never = judge(
            ExerciseId::VecaddAnyN,
            Tag::OneElement,
            &pid_2(&[back]),
            false,
        )
        .unwrap();
        assert!(
            matches!(&never, Failure::Trace { evidence: Evidence::NeverLaunched { kernels } } if kernels == &["vecadd"]),
            "{never:?}"
        );
        let before = judge(
            ExerciseId::VecaddAnyN,
            Tag::OneElement,
            &pid_2(&[back, launched]),
            false,
        )
        .unwrap();
        assert!(
            matches!(
                before,
                Failure::Trace {
                    evidence: Evidence::NoCopyBack { .. }
                }
            ),
            "{before:?}"
        );
    }

    #[test]
    fn streams_overlap_needs_page_locked_copies_on_two_streams() {
        let lines = [
            "cuMemcpyHtoD_v2 0 stream=0x0 bytes=16 dir=htod pinned=0",
            "cuLaunchKernel 0 stream=0x5a kernel=transform grid=4,1,1 block=256,1,1",
            "cuMemcpyDtoH_v2 0 stream=0x0 bytes=16 dir=dtoh pinned=0",
        ];
        let why = judge(
            ExerciseId::StreamsOverlap,
            Tag::UnevenChunks,
            &pid_2(&lines),
            false,
        )
        .unwrap();
        assert!(
            matches!(
                why,
                Failure::Trace {
                    evidence: Evidence::Pageable {
                        direction: Direction::HostToDevice,
                        copies: 1
                    }
                }
            ),
            "{why:?}"
        );
    }

    #[test]
    fn overlap_in_time_is_asked_only_on_a_gpu_at_the_run_it_is_timed_at() {
        // Whatever the report says of its times, only the timeline is read.
        let judged =
            |tag, trace: &Trace, emulated| judge(ExerciseId::StreamsOverlap, tag, trace, emulated);
        let (overlapped, serial) = (timed_streams(1.0), timed_streams(3.0));
        assert_eq!(judged(Tag::UnevenChunks, &overlapped, false), None);
        assert!(
            matches!(
                judged(Tag::UnevenChunks, &serial, false),
                Some(Failure::NoOverlap {
                    overlap: Overlap::NotConcurrent { .. }
                })
            ),
            "{:?}",
            judged(Tag::UnevenChunks, &serial, false)
        );
        // Made beside other runs, the run past the grid reads no time; on
        // the emulator, as the grader knows it, no time is asked.
        assert_eq!(judged(Tag::ChunksPastTheGrid, &serial, false), None);
        assert_eq!(judged(Tag::UnevenChunks, &serial, true), None);
    }

    /// A streams run whose copies and kernels the broker timed: two
    /// streams, each chunk's three stages `lag` ms behind the other's.
    fn timed_streams(lag: f64) -> Trace {
        let mut lines = Vec::new();
        for (stream, offset) in [(0xa, 0.0), (0xb, lag)] {
            for (stage, name) in [
                "cuMemcpyHtoDAsync_v2",
                "cuLaunchKernel",
                "cuMemcpyDtoHAsync_v2",
            ]
            .iter()
            .enumerate()
            {
                let what = match stage {
                    0 => "bytes=64 dir=htod pinned=1",
                    1 => "kernel=transform",
                    _ => "bytes=64 dir=dtoh pinned=1",
                };
                let start = offset + stage as f64;
                lines.push(format!(
                    "{name} 0 stream={stream:#x} {what} gpu_start={start} gpu_end={}",
                    start + 1.0
                ));
            }
        }
        pid_2(&lines.iter().map(String::as_str).collect::<Vec<_>>())
    }

    #[test]
    fn a_copy_back_the_gpu_ran_before_the_kernel_ended_is_no_copy_back() {
        let launched = "cuLaunchKernel 0 stream=0xa kernel=vecadd gpu_start=1.0 gpu_end=2.0";
        let racing = "cuMemcpyDtoHAsync_v2 0 stream=0xb bytes=16 dir=dtoh pinned=1 gpu_start=1.5 gpu_end=1.6";
        let ordered = "cuMemcpyDtoHAsync_v2 0 stream=0xa bytes=16 dir=dtoh pinned=1 gpu_start=2.0 gpu_end=2.1";
        let judged = |lines: &[&str]| {
            judge(
                ExerciseId::VecaddAnyN,
                Tag::OneElement,
                &pid_2(lines),
                false,
            )
        };
        assert_eq!(judged(&[launched, ordered]), None);
        assert!(
            matches!(
                judged(&[launched, racing]),
                Some(Failure::Trace {
                    evidence: Evidence::NoCopyBack { .. }
                })
            ),
            "{:?}",
            judged(&[launched, racing])
        );
    }

    #[test]
    fn the_run_the_overlap_is_timed_at_has_chunks_enough_to_be_asked() {
        for seed in 0..50 {
            let runs = crate::plan::exercise::plan(ExerciseId::StreamsOverlap, seed);
            let timed: Vec<_> = runs
                .iter()
                .filter(|r| {
                    crate::plan::exercise::overlap_timed_at(ExerciseId::StreamsOverlap, r.tag)
                })
                .collect();
            assert_eq!(timed.len(), 1, "seed {seed}");
            assert!(timed[0].arg("chunks").unwrap() >= OVERLAP_CHUNKS);
        }
        // No other exercise's run is.
        for exercise in kernels::catalogue::EXERCISES {
            let id = ExerciseId::from_name(exercise.name).unwrap();
            if id != ExerciseId::StreamsOverlap {
                let plan = crate::plan::exercise::plan(id, 7);
                assert!(
                    plan.iter()
                        .all(|r| !crate::plan::exercise::overlap_timed_at(id, r.tag))
                );
            }
        }
    }
}
