//! Timing with CUDA events: the GPU's own clock, so host-side noise between
//! launches does not count.

use cust::event::{Event, EventFlags};
use cust::stream::Stream;

use crate::error::CourseError;
use crate::stats;

pub use crate::stats::WARMUP_RUNS;

/// Times consecutive steps on one stream: each lap is the GPU time from the
/// previous mark to now.
pub struct Stopwatch<'a> {
    stream: &'a Stream,
    mark: Event,
}

impl<'a> Stopwatch<'a> {
    /// Marks the start on `stream`.
    pub fn start(stream: &'a Stream) -> Result<Self, CourseError> {
        let mark = record(stream)?;
        Ok(Stopwatch { stream, mark })
    }

    /// Milliseconds since the last mark, once the stream has caught up; the
    /// next lap starts here. A kernel fault surfaces here as an error.
    pub fn lap_ms(&mut self) -> Result<f64, CourseError> {
        self.lap("waiting for the GPU")
    }

    /// [`Stopwatch::lap_ms`], naming what the GPU was doing if it faulted.
    fn lap(&mut self, work: &str) -> Result<f64, CourseError> {
        let now = record(self.stream)?;
        now.synchronize()
            .map_err(|err| CourseError::from(err).during(work))?;
        let ms = now
            .elapsed_time_f32(&self.mark)
            .map_err(|err| CourseError::from(err).during("reading an event timer"))?;
        self.mark = now;
        Ok(f64::from(ms))
    }
}

/// Runs `launch` [`WARMUP_RUNS`] times untimed, then `runs` times timed, each
/// run waited for and checked; returns the median milliseconds. A launch
/// error or kernel fault ends it with that error.
pub fn median_ms<E: Into<CourseError>>(
    stream: &Stream,
    runs: u32,
    launch: impl FnMut() -> Result<(), E>,
) -> Result<f64, CourseError> {
    median_ms_of("the kernel", stream, runs, launch)
}

/// [`median_ms`] for any GPU work, named in errors as `work`.
pub fn median_ms_of<E: Into<CourseError>>(
    work: &str,
    stream: &Stream,
    runs: u32,
    mut launch: impl FnMut() -> Result<(), E>,
) -> Result<f64, CourseError> {
    let mut samples = Vec::with_capacity(runs as usize);
    for run in 0..WARMUP_RUNS + runs.max(1) {
        let mut stopwatch = Stopwatch::start(stream)?;
        launch().map_err(|err| err.into().during(&format!("starting {work}")))?;
        let ms = stopwatch.lap(&format!("running {work}"))?;
        if run >= WARMUP_RUNS {
            samples.push(ms);
        }
    }
    Ok(stats::median(&samples).unwrap_or(f64::NAN))
}

/// An event recorded on `stream` now: the start or end of a timed span.
pub(crate) fn record(stream: &Stream) -> Result<Event, CourseError> {
    let event = Event::new(EventFlags::DEFAULT)
        .map_err(|err| CourseError::from(err).during("creating an event"))?;
    event
        .record(stream)
        .map_err(|err| CourseError::from(err).during("recording an event"))?;
    Ok(event)
}
