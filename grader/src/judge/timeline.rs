//! What the broker's own GPU timeline shows: the start and end of each
//! copy and launch, measured by the broker with events of its own around
//! them (`gpu_start`, `gpu_end` in its record), never by the student's
//! process. From them: whether a copy back ran after the kernel it returns
//! ([`ran_after`]), and how much of the time that streams could hide
//! behind each other they did ([`hidden_share`]).
//!
//! Threat model: the program chooses what it asks the GPU to do and when,
//! so it can make any timeline it can make real work for; it cannot write
//! one. A timeline of concurrent streams is evidence that their work
//! overlapped, whatever the report says of its own times.

use kernels::trace_record::Call;

use crate::run::trace::Trace;

/// How far (ms) a copy may seem to start before the kernel ends and still
/// be after it: events resolve to about half a microsecond.
const ORDER_SLACK_MS: f64 = 0.005;

/// A copy's or a launch's GPU interval, in ms after the broker's base event.
fn interval(call: &Call) -> Option<(f64, f64)> {
    let (start, end) = (call.gpu_start?, call.gpu_end?);
    let (start, end) = (start.ms(), end.ms());
    (call.result == 0 && end >= start).then_some((start, end))
}

/// Whether `later` ran on the GPU after `earlier` ended; None where either
/// has no GPU times (a record of the tracer's, or of a call the broker did
/// not time).
pub fn ran_after(earlier: &Call, later: &Call) -> Option<bool> {
    let (_, ended) = interval(earlier)?;
    let (started, _) = interval(later)?;
    Some(started + ORDER_SLACK_MS >= ended)
}

/// How much of what overlapping could hide was hidden: the GPU time of
/// copies and launches that ran beside another stream's work, over twice
/// the lesser of all copies' and all launches' time (what a pipeline
/// hides at best is the lesser stage behind the greater, and each second
/// of it counts for both). 0 for streams one after another; about 0.5
/// for a perfect pipeline timed beside a serial run of the same work;
/// the share is measured against the run's own stage times, so it holds
/// for any mix of copy and kernel time. None where there is nothing to
/// hide (no timed copy, or no timed launch).
pub fn hidden_share(trace: &Trace) -> Option<f64> {
    let timed = |launch: bool| -> f64 {
        (trace.calls.iter())
            .filter(|c| {
                if launch {
                    c.is_launch()
                } else {
                    c.direction.is_some()
                }
            })
            .filter_map(interval)
            .map(|(start, end)| end - start)
            .sum()
    };
    let hideable = 2.0 * timed(true).min(timed(false));
    let beside = concurrent_fraction(trace)? * (timed(true) + timed(false));
    (hideable > 0.0).then(|| beside / hideable)
}

/// The share of the copies' and launches' GPU time during which work of
/// another stream ran too: 0 for work one stream after another, towards 1
/// for streams that overlap completely. None where no work has GPU times.
pub fn concurrent_fraction(trace: &Trace) -> Option<f64> {
    let work: Vec<(u64, f64, f64)> = trace
        .calls
        .iter()
        .filter(|c| c.is_launch() || c.direction.is_some())
        .filter_map(|c| interval(c).map(|(start, end)| (c.stream.unwrap_or(0), start, end)))
        .filter(|&(_, start, end)| end > start)
        .collect();
    let total: f64 = work.iter().map(|(_, start, end)| end - start).sum();
    if total <= 0.0 {
        return None;
    }
    // Each piece of work's time beside another stream's work: sweep the
    // other streams' intervals, merged, against it.
    let mut beside = 0.0;
    for &(stream, start, end) in &work {
        let mut others: Vec<(f64, f64)> = work
            .iter()
            .filter(|w| w.0 != stream && w.1 < end && w.2 > start)
            .map(|w| (w.1.max(start), w.2.min(end)))
            .collect();
        others.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut covered_to = start;
        for (from, to) in others {
            let from = from.max(covered_to);
            if to > from {
                beside += to - from;
                covered_to = to;
            }
        }
    }
    Some(beside / total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::trace_record::parse_line;

    /// A record of `name` on `stream` that the broker timed from `start`
    /// to `end` ms.
    fn timed(seq: u64, name: &str, stream: u64, start: f64, end: f64) -> Call {
        let direction = match name {
            "cuMemcpyHtoDAsync_v2" => " bytes=4 dir=htod pinned=1",
            "cuMemcpyDtoHAsync_v2" => " bytes=4 dir=dtoh pinned=1",
            _ => " kernel=transform",
        };
        parse_line(&format!(
            "{seq} 7 {name} 0 stream={stream:#x}{direction} gpu_start={start} gpu_end={end}"
        ))
        .unwrap()
    }

    #[test]
    fn work_one_stream_after_another_is_not_concurrent_and_overlapping_work_is() {
        // Three stages of two chunks, one after another on two streams.
        let serial = Trace {
            calls: vec![
                timed(1, "cuMemcpyHtoDAsync_v2", 1, 0.0, 1.0),
                timed(2, "cuLaunchKernel", 1, 1.0, 2.0),
                timed(3, "cuMemcpyDtoHAsync_v2", 1, 2.0, 3.0),
                timed(4, "cuMemcpyHtoDAsync_v2", 2, 3.0, 4.0),
                timed(5, "cuLaunchKernel", 2, 4.0, 5.0),
                timed(6, "cuMemcpyDtoHAsync_v2", 2, 5.0, 6.0),
            ],
        };
        assert_eq!(concurrent_fraction(&serial), Some(0.0));
        // The second chunk one stage behind the first: its copy in beside
        // the first's kernel, its kernel beside the first's copy back.
        let pipelined = Trace {
            calls: vec![
                timed(1, "cuMemcpyHtoDAsync_v2", 1, 0.0, 1.0),
                timed(2, "cuLaunchKernel", 1, 1.0, 2.0),
                timed(3, "cuMemcpyDtoHAsync_v2", 1, 2.0, 3.0),
                timed(4, "cuMemcpyHtoDAsync_v2", 2, 1.0, 2.0),
                timed(5, "cuLaunchKernel", 2, 2.0, 3.0),
                timed(6, "cuMemcpyDtoHAsync_v2", 2, 3.0, 4.0),
            ],
        };
        // 4 of the 6 ms of work ran beside the other stream's.
        let fraction = concurrent_fraction(&pipelined).unwrap();
        assert!((fraction - 4.0 / 6.0).abs() < 1e-9, "{fraction}");
        // Work on one stream that overlaps itself (the broker's times of
        // calls it could not order) is never counted.
        let same = Trace {
            calls: vec![
                timed(1, "cuLaunchKernel", 1, 0.0, 2.0),
                timed(2, "cuLaunchKernel", 1, 1.0, 3.0),
            ],
        };
        assert_eq!(concurrent_fraction(&same), Some(0.0));
        assert_eq!(concurrent_fraction(&Trace { calls: vec![] }), None);
        // Against what could be hidden: 2 ms of launches, 4 of copies; at
        // best 2 ms hidden, counted for both sides, and 4 ms were.
        assert!((hidden_share(&pipelined).unwrap() - 1.0).abs() < 1e-9);
        assert_eq!(hidden_share(&serial), Some(0.0));
        assert_eq!(hidden_share(&same), None);
    }

    #[test]
    fn a_short_copy_hidden_behind_a_long_kernel_is_all_that_could_be() {
        // Kernels of 10 ms, copies of 1 ms: the second chunk's copy in
        // runs beside the first chunk's kernel.
        let trace = Trace {
            calls: vec![
                timed(1, "cuMemcpyHtoDAsync_v2", 1, 0.0, 1.0),
                timed(2, "cuLaunchKernel", 1, 1.0, 11.0),
                timed(3, "cuMemcpyHtoDAsync_v2", 2, 1.0, 2.0),
                timed(4, "cuLaunchKernel", 2, 11.0, 21.0),
            ],
        };
        // 2 ms beside of 24: a small fraction of the work, but all that
        // a second copy of 1 ms could hide (2 of 2 x 2 ms).
        assert!(concurrent_fraction(&trace).unwrap() < 0.1);
        assert!((hidden_share(&trace).unwrap() - 0.5).abs() < 1e-9);
    }

    #[test]
    fn a_copy_runs_after_a_kernel_only_once_the_kernel_ended() {
        let kernel = timed(1, "cuLaunchKernel", 1, 1.0, 2.0);
        let after = timed(2, "cuMemcpyDtoHAsync_v2", 1, 2.0, 3.0);
        let during = timed(2, "cuMemcpyDtoHAsync_v2", 2, 1.5, 2.5);
        assert_eq!(ran_after(&kernel, &after), Some(true));
        assert_eq!(ran_after(&kernel, &during), Some(false));
        let untimed = parse_line("3 7 cuMemcpyDtoH_v2 0 bytes=4 dir=dtoh pinned=0").unwrap();
        assert_eq!(ran_after(&kernel, &untimed), None);
    }
}
