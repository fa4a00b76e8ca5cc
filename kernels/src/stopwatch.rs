//! Timing with CUDA events: the GPU's own clock, so host-side noise between
//! launches does not count.

use cust::event::{Event, EventFlags};
use cust::memory::DeviceSlice;
use cust::stream::Stream;

use crate::accesses::{self, OutputBuffer};
use crate::counters;
use crate::error::CourseError;
use crate::fresh_inputs::{Answers, FreshRun, Output};
use crate::fresh_launch::{SampledOutput, SharedPoison};
use crate::stats;
use crate::timing_gate;

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
/// error or kernel fault ends it with that error. Before each launch every
/// multiprocessor's shared memory is poisoned (`fresh_launch`), so a read of
/// shared memory the kernel never wrote shows. Under the grader, the
/// launches, warm-up included, hold the GPU alone ([`timing_gate`]).
///
/// Kept for host code written before [`median_ms_checked`]; the course's
/// exercises call that one.
pub fn median_ms<E: Into<CourseError>>(
    stream: &Stream,
    runs: u32,
    launch: impl FnMut() -> Result<(), E>,
) -> Result<f64, CourseError> {
    let poison = SharedPoison::new()?;
    let _alone = timing_gate::enter()?;
    let kernel = Some(Kernel {
        poison: poison.as_ref(),
        output: None,
        fresh: None,
    });
    timed_launches("the kernel", stream, runs, kernel, launch)
}

/// [`median_ms`] for a kernel whose answer is `output`: every launch must
/// compute it afresh. The output is filled with NaN before each launch and
/// windows of it are read back after each (`fresh_launch`); a launch that
/// left NaN, or wrote numbers the last launch did not, ends it with
/// [`CourseError::StaleLaunch`]. The last launch's output is the one the
/// exercise then copies back and checks.
pub fn median_ms_checked<E: Into<CourseError>>(
    stream: &Stream,
    runs: u32,
    output: &DeviceSlice<f32>,
    launch: impl FnMut() -> Result<(), E>,
) -> Result<f64, CourseError> {
    let poison = SharedPoison::new()?;
    let mut sampled = SampledOutput::new(output);
    let _alone = timing_gate::enter()?;
    let kernel = Some(Kernel {
        poison: poison.as_ref(),
        output: Some(&mut sampled),
        fresh: None,
    });
    timed_launches("the kernel", stream, runs, kernel, launch)
}

/// [`median_ms_checked`] for a kernel whose inputs are `inputs` (in the
/// order `answers` draws them) and whose answer is `output`: every launch
/// but the last gets inputs of its own, drawn from a seed no kernel can
/// foresee and written into `inputs`, and after each its whole output is
/// read back and checked against `answers`' answer for them; the last gets
/// the task's own inputs back, and its output is the one the exercise
/// then copies back and checks (`fresh_inputs`). A launch that wrote the
/// answer to an earlier launch's inputs, or a wrong answer where the last
/// launch's is right, ends it with [`CourseError::StaleLaunch`]. The output
/// is filled with NaN before each launch and shared memory poisoned, as
/// [`median_ms_checked`] does; the draws, copies and checks are outside the
/// timed span.
///
/// `output` is the output's buffer, or a pointer to it (dot-atomic's launch
/// closure zeroes its buffer, so cannot lend it), whose length `answers`
/// then gives.
pub fn median_ms_fresh<'o, E: Into<CourseError>>(
    stream: &Stream,
    runs: u32,
    answers: &dyn Answers,
    inputs: &[&DeviceSlice<f32>],
    output: impl Into<Output<'o>>,
    launch: impl FnMut() -> Result<(), E>,
) -> Result<f64, CourseError> {
    let output = output.into().slice(answers.output_len());
    let poison = SharedPoison::new()?;
    let mut cleared = SampledOutput::new(&output);
    let mut fresh = FreshRun::new(answers, inputs, &output, WARMUP_RUNS + runs.max(1));
    let _alone = timing_gate::enter()?;
    let kernel = Some(Kernel {
        poison: poison.as_ref(),
        output: Some(&mut cleared),
        fresh: Some(&mut fresh),
    });
    timed_launches("the kernel", stream, runs, kernel, launch)
}

/// [`median_ms`] for any GPU work, named in errors as `work`: nothing is
/// poisoned or sampled (the copy-bandwidth probe), and the GPU is not held
/// alone: no verdict reads these times.
pub fn median_ms_of<E: Into<CourseError>>(
    work: &str,
    stream: &Stream,
    runs: u32,
    launch: impl FnMut() -> Result<(), E>,
) -> Result<f64, CourseError> {
    timed_launches(work, stream, runs, None, launch)
}

/// What timing a student's kernel adds to timing any work: the shared
/// memory poisoned before each launch (None on the emulator, which poisons
/// it itself), the output filled with NaN before each and sampled after
/// it, or, with fresh inputs, each launch's inputs written before it and
/// its whole output checked after it (then nothing is sampled: the
/// launches' answers differ), and `--counters` and `--accesses`.
struct Kernel<'a, 'b> {
    poison: Option<&'a SharedPoison>,
    output: Option<&'a mut SampledOutput<'b>>,
    fresh: Option<&'a mut FreshRun<'b>>,
}

fn timed_launches<E: Into<CourseError>>(
    work: &str,
    stream: &Stream,
    runs: u32,
    kernel: Option<Kernel<'_, '_>>,
    mut launch: impl FnMut() -> Result<(), E>,
) -> Result<f64, CourseError> {
    let is_kernel = kernel.is_some();
    let (poison, mut output, mut fresh) =
        kernel.map_or((None, None, None), |k| (k.poison, k.output, k.fresh));
    let launches = WARMUP_RUNS + runs.max(1);
    // `--accesses` records which block wrote each element of this.
    let named_output = output.as_deref().map(|o| {
        let slice = o.slice();
        OutputBuffer {
            address: slice.as_device_ptr().as_raw(),
            bytes: std::mem::size_of_val(&0f32) as u64 * slice.len() as u64,
            element_bytes: std::mem::size_of_val(&0f32) as u32,
        }
    });
    let mut samples = Vec::with_capacity(runs as usize);
    for run in 0..launches {
        if let Some(fresh) = fresh.as_deref_mut() {
            fresh.before(run)?;
        }
        if let Some(output) = output.as_deref() {
            output.clear(stream)?;
        }
        if let Some(poison) = poison {
            poison.fill(stream)?;
        }
        let mut stopwatch = Stopwatch::start(stream)?;
        let mut run_it = || -> Result<f64, CourseError> {
            launch().map_err(|err| err.into().during(&format!("starting {work}")))?;
            stopwatch.lap(&format!("running {work}"))
        };
        // `--counters` and `--accesses`: the emulator counts and records
        // the first launch (a warm-up, whose time no one reads), after the
        // poison kernel.
        let ms = if run == 0 && is_kernel {
            accesses::recording(named_output, || counters::counting(run_it))?
        } else {
            run_it()?
        };
        if run >= WARMUP_RUNS {
            samples.push(ms);
        }
        if let Some(fresh) = fresh.as_deref_mut() {
            fresh.after(run)?;
        } else if let Some(output) = output.as_deref_mut() {
            output.sample(run)?;
        }
    }
    if let Some(fresh) = fresh {
        fresh.verify()?;
    } else if let Some(output) = output {
        output.verify(launches)?;
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
