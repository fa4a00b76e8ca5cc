//! Inputs of its own for every timed launch, and every launch's whole
//! output checked: a kernel cannot keep an answer in device memory and
//! copy it out in a later launch, since no later launch asks for the same
//! answer (the threat model is at the head of `fresh_launch`).
//!
//! Before every launch but the last, `FreshRun` writes values drawn from
//! a seed the kernel cannot foresee (drawn from the OS's hash keys when the
//! run starts, then one per launch) into the kernel's input buffers; after
//! each launch it copies the whole output back and checks it against the
//! host's answer for that launch's inputs ([`Answers::check`], which the
//! exercise's driver defines). Before the last launch it writes back what
//! the input buffers held before the first (what the exercise's host code
//! copied there, read back once), so the last launch's output is the
//! task's answer, which the exercise's check then reads, only if the host
//! code gave the kernel the task's inputs. The copies, the draws and the checks
//! are outside the timed span.
//!
//! What ends the run ([`CourseError::StaleLaunch`]): a launch whose output
//! is the answer to an earlier launch's inputs (a kept answer), or a launch
//! whose output is wrong while the last launch's is right (the kernel
//! computes in some launches only). A kernel whose last launch is wrong too
//! is left to the exercise's check, which says what is wrong with it.
//!
//! Not in a run of the grader's canary ([`CANARY_RUN_ENV`]): its answers
//! are the exercise's moved by a mark, which one launch's bound may take
//! in and the next's not, so there the launches are timed unjudged. The
//! canary replays nothing, and its runs grade host code, not the kernel:
//! the speed point and every kernel run are the student's own kernel in the
//! course's binary, where the variable is never set.

use std::hash::{BuildHasher, Hasher};

use cust::memory::{CopyDestination, DevicePointer, DeviceSlice};
use cust::sys;

use crate::error::CourseError;
use crate::grader_names::CANARY_RUN_ENV;

/// What an exercise's launches compute, so that any launch's output can be
/// checked against the inputs it was given.
pub trait Answers {
    /// The contents of the kernel's input buffers for a launch drawn from
    /// `seed`, in the order the caller passes the buffers.
    fn draw(&self, seed: u64) -> Result<Vec<Vec<f32>>, CourseError>;

    /// The task's own inputs, which the last launch's output is checked
    /// against (it runs on what the host code put in the buffers).
    fn task_inputs(&self) -> Vec<&[f32]>;

    /// The floats of the kernel's output, where the caller gives only its
    /// pointer ([`Output::Pointer`]).
    fn output_len(&self) -> usize;

    /// Whether `output` is the answer to `inputs` (drawn from `seed`, or the
    /// task's own where `seed` is None): `Err` says, for a person, the first
    /// thing found wrong. `salt` is random bits drawn after the launch ended
    /// (for a check that weighs the output at random, such as Freivalds').
    fn check(
        &self,
        seed: Option<u64>,
        inputs: &[&[f32]],
        output: &[f32],
        salt: u64,
    ) -> Result<(), String>;

    /// A right output for the inputs drawn from `seed` (the task's own
    /// where None), where a wrong output can pass the check (a sum within
    /// a bound) and a right one is cheap to make: `FreshRun` draws again a
    /// launch whose answer and the task's would pass for each other's
    /// inputs, so that an answer kept from a drawn launch cannot pass the
    /// last launch by chance. None where answers never pass for each other
    /// (an exact check, or a random weighing).
    fn answer(&self, _seed: Option<u64>) -> Option<Vec<f32>> {
        None
    }
}

/// Seeds a drawn launch tries before the last stands: two random dots
/// within their bounds of each other happen about once in ten draws at a
/// million elements.
const DRAWS: u32 = 16;

/// The kernel's output: its buffer, or a pointer to it where the launch
/// closure needs the buffer itself (dot-atomic's zeroes it), whose length
/// [`Answers::output_len`] gives.
pub enum Output<'a> {
    Slice(&'a DeviceSlice<f32>),
    Pointer(DevicePointer<f32>),
}

impl<'a> From<&'a DeviceSlice<f32>> for Output<'a> {
    fn from(slice: &'a DeviceSlice<f32>) -> Output<'a> {
        Output::Slice(slice)
    }
}

impl<'a> From<&'a cust::memory::DeviceBuffer<f32>> for Output<'a> {
    fn from(buffer: &'a cust::memory::DeviceBuffer<f32>) -> Output<'a> {
        Output::Slice(buffer)
    }
}

impl From<DevicePointer<f32>> for Output<'_> {
    fn from(pointer: DevicePointer<f32>) -> Self {
        Output::Pointer(pointer)
    }
}

impl Output<'_> {
    /// The output as a slice: the caller's, or one of `len` floats at the
    /// pointer.
    pub(crate) fn slice(&self, len: usize) -> DeviceSlice<f32> {
        match self {
            // SAFETY: the same pointer and length as the caller's slice.
            Output::Slice(slice) => unsafe {
                DeviceSlice::from_raw_parts(slice.as_device_ptr(), slice.len())
            },
            // SAFETY: the caller's pointer is to the kernel's output, which
            // holds `len` floats when the caller allocated it as the
            // exercise asks (the course reads and fills no more).
            Output::Pointer(pointer) => unsafe { DeviceSlice::from_raw_parts(*pointer, len) },
        }
    }
}

/// One launch's verdict.
enum Verdict {
    Right,
    /// The output is the answer to launch `.0`'s inputs (0-based).
    Replayed(u32),
    Wrong(String),
}

/// The state of one timed series of launches with fresh inputs.
pub(crate) struct FreshRun<'a> {
    answers: &'a dyn Answers,
    inputs: &'a [&'a DeviceSlice<f32>],
    output: &'a DeviceSlice<f32>,
    launches: u32,
    rng: u64,
    /// The seed of each launch's inputs so far (None: the task's own).
    seeds: Vec<Option<u64>>,
    /// The inputs of the launch in flight, drawn (None: the task's own).
    current: Option<Vec<Vec<f32>>>,
    /// What the input buffers held before the first launch (what the
    /// exercise's host code copied there), written back before the last.
    before_first: Vec<Vec<f32>>,
    verdicts: Vec<Verdict>,
    /// Whether a drawn launch has been searched for a replay yet: only the
    /// first wrong one and the last are (each search redraws the inputs of
    /// every earlier launch).
    searched: bool,
    /// False in a run of the grader's canary ([`CANARY_RUN_ENV`]), whose
    /// answers are off by design: its launches are then timed as they
    /// come, with nothing drawn, read back or judged.
    judged: bool,
}

impl<'a> FreshRun<'a> {
    pub(crate) fn new(
        answers: &'a dyn Answers,
        inputs: &'a [&'a DeviceSlice<f32>],
        output: &'a DeviceSlice<f32>,
        launches: u32,
    ) -> FreshRun<'a> {
        // Drawn from the OS's hash keys: nothing a kernel can read.
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        FreshRun {
            answers,
            inputs,
            output,
            launches,
            rng: hasher.finish() | 1,
            seeds: Vec::new(),
            current: None,
            before_first: Vec::new(),
            verdicts: Vec::new(),
            searched: false,
            judged: std::env::var_os(CANARY_RUN_ENV).is_none_or(|value| value != "1"),
        }
    }

    fn next(&mut self) -> u64 {
        // xorshift64, then splitmix's finaliser: seeds no kernel foresees.
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let mut z = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Before launch `run`: its inputs written into the kernel's buffers
    /// (the GPU is idle: the last launch was waited for).
    pub(crate) fn before(&mut self, run: u32) -> Result<(), CourseError> {
        if !self.judged {
            return Ok(());
        }
        if run == 0 {
            self.before_first = self
                .inputs
                .iter()
                .map(|buffer| read(buffer))
                .collect::<Result<_, _>>()?;
        }
        if run + 1 < self.launches {
            let (seed, drawn) = self.distinct_draw()?;
            for (buffer, values) in self.inputs.iter().zip(&drawn) {
                write(buffer, values)?;
            }
            self.seeds.push(Some(seed));
            self.current = Some(drawn);
        } else {
            // What the exercise's host code put there, not the task's
            // inputs: host code that copied them wrong, or not at all, must
            // still fail its check.
            for (buffer, values) in self.inputs.iter().zip(&self.before_first) {
                write(buffer, values)?;
            }
            self.seeds.push(None);
            self.current = None;
        }
        Ok(())
    }

    /// The seed and inputs of the next drawn launch, drawn again (the last
    /// of [`DRAWS`] tries stands) while its answer and the task's pass for
    /// each other's inputs ([`Answers::answer`]). Every drawn answer then
    /// fails the last launch, which runs on the task's inputs, so an
    /// answer kept from any drawn launch fails there.
    fn distinct_draw(&mut self) -> Result<(u64, Vec<Vec<f32>>), CourseError> {
        let mut seed = self.next();
        let mut drawn = self.answers.draw(seed)?;
        for _ in 1..DRAWS {
            if !self.confusable(seed, &drawn) {
                break;
            }
            seed = self.next();
            drawn = self.answers.draw(seed)?;
        }
        Ok((seed, drawn))
    }

    /// Whether the answer to `drawn` (from `seed`) passes for the task's
    /// inputs, or the task's for `drawn`.
    fn confusable(&self, seed: u64, drawn: &[Vec<f32>]) -> bool {
        let answers = self.answers;
        let (Some(answer), Some(task_answer)) = (answers.answer(Some(seed)), answers.answer(None))
        else {
            return false;
        };
        let inputs: Vec<&[f32]> = drawn.iter().map(Vec::as_slice).collect();
        answers.check(Some(seed), &inputs, &task_answer, 0).is_ok()
            || (answers.check(None, &answers.task_inputs(), &answer, 0)).is_ok()
    }

    /// After launch `run` has finished: its whole output read back and
    /// checked against its inputs.
    pub(crate) fn after(&mut self, run: u32) -> Result<(), CourseError> {
        if !self.judged {
            return Ok(());
        }
        let output = read(self.output)?;
        let seed = self.seeds[run as usize];
        let salt = self.next();
        let answers = self.answers;
        let current = self.current.take();
        let inputs: Vec<&[f32]> = match &current {
            Some(drawn) => drawn.iter().map(Vec::as_slice).collect(),
            None => answers.task_inputs(),
        };
        let checked = answers.check(seed, &inputs, &output, salt);
        drop(inputs);
        drop(current);
        let verdict = match checked {
            Ok(()) => Verdict::Right,
            Err(what) => {
                let last = run + 1 == self.launches;
                if last || !self.searched {
                    self.searched |= !last;
                    self.replayed(run, &output)?
                        .map_or(Verdict::Wrong(what), Verdict::Replayed)
                } else {
                    Verdict::Wrong(what)
                }
            }
        };
        self.verdicts.push(verdict);
        Ok(())
    }

    /// The earlier launch whose inputs `output` (launch `run`'s) answers.
    fn replayed(&mut self, run: u32, output: &[f32]) -> Result<Option<u32>, CourseError> {
        for j in 0..run {
            let Some(seed) = self.seeds[j as usize] else {
                continue;
            };
            let drawn = self.answers.draw(seed)?;
            let inputs: Vec<&[f32]> = drawn.iter().map(Vec::as_slice).collect();
            let salt = self.next();
            if self
                .answers
                .check(Some(seed), &inputs, output, salt)
                .is_ok()
            {
                return Ok(Some(j));
            }
        }
        Ok(None)
    }

    /// After the last launch: a kept answer, or a launch wrong where the
    /// last is right, ends the run.
    pub(crate) fn verify(&self) -> Result<(), CourseError> {
        if !self.judged {
            return Ok(());
        }
        let launches = self.launches;
        let must = "the course gives every launch inputs of its own and checks its whole \
                    output, so the kernel must compute every launch from the inputs it is \
                    given, keeping nothing in device memory between launches";
        for (run, verdict) in self.verdicts.iter().enumerate() {
            if let Verdict::Replayed(j) = verdict {
                return Err(CourseError::StaleLaunch(format!(
                    "launch {} of {launches} of the kernel wrote the answer to launch {}'s \
                     inputs: {must}",
                    run + 1,
                    j + 1
                )));
            }
        }
        if !matches!(self.verdicts.last(), Some(Verdict::Right)) {
            // Wrong in the last launch too: the exercise's check says how.
            return Ok(());
        }
        for (run, verdict) in self.verdicts.iter().enumerate() {
            if let Verdict::Wrong(what) = verdict {
                return Err(CourseError::StaleLaunch(format!(
                    "launch {} of {launches} of the kernel wrote an output that is not the \
                     answer to its inputs ({what}), though the last launch's is: {must}",
                    run + 1
                )));
            }
        }
        Ok(())
    }
}

/// The whole of `buffer`, copied back.
fn read(buffer: &DeviceSlice<f32>) -> Result<Vec<f32>, CourseError> {
    let mut values = vec![f32::NAN; buffer.len()];
    if !values.is_empty() {
        buffer
            .copy_to(&mut values[..])
            .map_err(|err| CourseError::from(err).during("reading a buffer back"))?;
    }
    Ok(values)
}

/// Writes `values` into the start of `buffer` (as much as both hold).
fn write(buffer: &DeviceSlice<f32>, values: &[f32]) -> Result<(), CourseError> {
    let len = buffer.len().min(values.len());
    if len == 0 {
        return Ok(());
    }
    // SAFETY: the pointer and length are the buffer's (the caller keeps it
    // alive through the launches), at most `len` floats are copied from a
    // host slice that holds them, and the copy is synchronous: it lands
    // before the next launch is queued.
    let code = unsafe {
        sys::cuMemcpyHtoD_v2(
            buffer.as_device_ptr().as_raw(),
            values.as_ptr().cast(),
            len * std::mem::size_of::<f32>(),
        )
    };
    if code == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(CourseError::from(crate::error::raw_code_error(code))
            .during("writing a launch's inputs"))
    }
}
