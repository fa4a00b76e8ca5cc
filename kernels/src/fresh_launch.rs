//! What the course's host code does around each launch of a student's
//! kernel, so that a launch's answer can only come from that launch:
//!
//! - Every multiprocessor's shared memory is filled with a poison first
//!   (0xff bytes: a float NaN, the int -1). A fresh process's shared
//!   memory happens to start zeroed, which hides a kernel that reads shared
//!   memory it never wrote; after the poison such a read shows as a wrong
//!   answer. (The CPU emulator poisons shared memory itself and reports
//!   the read with its `kernel.cu` line, so nothing is launched there.)
//!   Measured on an H100 (`bench/probes/poison_probe.cu`, each case a
//!   process of its own), the poison reaches every block of kernels with a
//!   little shared memory a block (1 KiB, 4 blocks a multiprocessor: 528 of
//!   528 blocks read only poison), most blocks of others (4 KiB and 1024
//!   threads: 1584 of 2112; 128 B and 32 threads: 8316 of 8448), and only
//!   the first block a multiprocessor of kernels with 32 KiB a block (132
//!   of 528, the rest partly). No compute-sanitizer tool sees such a
//!   read where the poison misses: initcheck watches global memory only
//!   (on an H200 it reported nothing for shared memory no thread wrote,
//!   `bench/probes/initcheck-probe.sh`), and racecheck only accesses of
//!   two threads; the CPU emulator reports every one.
//! - Where the caller names the kernel's output ([`crate::median_ms_checked`]),
//!   the output is filled with NaN before every launch, and after every
//!   launch windows of it at offsets drawn then are read back; once the
//!   last launch is done, every window must hold numbers that agree with
//!   the last launch's output, which the exercise's check reads whole.
//! - Where the caller names the kernel's inputs too
//!   ([`crate::median_ms_fresh`], which vecadd-anyN, the dot family and
//!   matmul call), every launch but the last gets inputs of its own, drawn
//!   from a seed the kernel cannot foresee and written into its input
//!   buffers, and after every launch the whole output is read back and
//!   checked against the host's answer for that launch's inputs
//!   (`crate::fresh_inputs`: vecadd's c and dot-gm's products exactly, the
//!   dot's sum within the exercise's bound of the exact one, matmul's P by
//!   Freivalds' check with weights drawn after the launch); the output is
//!   still filled with NaN first, and no windows are sampled (the launches'
//!   answers differ). The last launch gets back what the host code put in
//!   the buffers, so its output is the one the exercise checks.
//!
//! Threat model: the kernel is the student's; this code and the process's
//! other host code are the course's when the grader runs the student's PTX
//! through the solution binary (the run the speed point times). The kernel
//! can keep state across launches in device memory (a `__device__` flag,
//! a launch counter) and can read the course's source. So it can do its
//! work in some launches only and do nothing, or write anything cheap, in
//! the others. A launch that skips its work leaves the NaN, and one that
//! writes something else disagrees with the checked answer in windows it
//! cannot foresee (drawn after it ends): either fails the run, whichever
//! launches are timed. A kernel that keeps a whole copy of its answer in
//! device memory of its own and copies it out in later launches (issue 52:
//! on an H100 such kernels earned the speed point at 34.8 times the
//! course's speed for matmul-tiled, 10.5 times for dot-atomic) no longer
//! agrees where the inputs are fresh: no two launches ask for the same
//! answer, so the second launch writes the answer to the first's inputs,
//! and the run ends with `stale-launch` naming both launches. A kernel
//! wrong in its last launch too is left to the exercise's check, which
//! says what is wrong (a missing grid-stride loop is wrong in every
//! launch, and is told to loop). In the grader's canary runs (the
//! canary's PTX in this binary, or the student's binary whose broker loads
//! the canary) nothing is judged (`grader_names::CANARY_RUN_ENV`): the
//! canary is the grader's kernel, and its answers are marked, not wrong.
//! Left open: memspace-timing and
//! streams-overlap still time through [`crate::median_ms_checked`] and
//! their own pipelines, with the windows above; the grader's runs above
//! 2^31 elements, whose inputs the course's own kernels make on the GPU
//! (`inputs_on_gpu`), get no fresh inputs either (dot-atomic's `--sweep`
//! does: it runs the same host code once per grid). Freivalds' check weighs each row of P
//! at once, so it tells an answer from the answer to other inputs, not
//! one entry off by a part in a thousand: the exercise's check of the last
//! launch reads every entry.
//!
//! What fresh inputs cost, outside the timed span but with the GPU held
//! alone: per launch, the inputs drawn on the host (on every core above
//! 2^22 elements) and copied in, the output copied back and checked. On
//! the CPU emulator (2 shared cores, `--runs 10 --seed 5`, 11 launches,
//! median of 5 whole runs), at its default sizes: dot-atomic 0.65 → 1.38 s
//! (n = 1,000,003: the exact sum redraws a and b), dot-gm 1.21 → 1.65 s,
//! vecadd-anyN 1.16 → 1.51 s; matmul-tiled at W = 200 within the noise of
//! its 15 to 19 s (2·W² draws and 4·W² multiply-adds a launch).
//! Estimated at the GPU's defaults, a launch copies in 268 MB and back
//! 134 MB (vecadd, n = 2^25 + 3), 134 MB and 67 MB (dot-gm, n = 2^24 + 3),
//! 134 MB and a few bytes (dot-sm, dot-atomic), 8 MB and 4 MB (matmul,
//! W = 1000), and the host draws 2n values and checks n (or 2W² and 4W²):
//! about 0.1 to 0.2 s a launch for vecadd and the dot family on 16 cores,
//! 1 to 2 s a run of 11 launches, and 10 to 20 ms a launch for matmul
//! (not measured on a GPU).

use std::hash::{BuildHasher, Hasher};

use cust::device::DeviceAttribute;
use cust::memory::{CopyDestination, DeviceSlice};
use cust::module::Module;
use cust::prelude::*;
use cust::sys;

use crate::error::CourseError;
use crate::grader_names::POISON_KERNEL;
use crate::which_driver;

/// The poison kernel, compiled by nvcc 11.8 for compute_75 from
/// poison_shared.cu beside it (the test below checks it is that file's).
const POISON_PTX: &str = include_str!("fresh_launch/poison_shared.ptx");
/// The shared memory any block may have without opting in to more.
const PLAIN_BLOCK_BYTES: u32 = 48 * 1024;
/// What the driver keeps of a multiprocessor's shared memory per resident
/// block (1 KiB since Ampere; none before, where this only packs looser).
const RESERVED_PER_BLOCK: u32 = 1024;
/// Threads per poison block: few, so that the multiprocessor's thread limit
/// never stops as many blocks as its shared memory holds from being resident
/// together (with 1024 threads, two 48 KiB blocks filled only 98 of an
/// H100's 228 KiB: bench/probes/poison_probe.cu).
const POISON_THREADS: u32 = 128;

/// Elements in a window read back after a launch, and how many windows
/// (the first, the last, the rest drawn).
const WINDOW: usize = 256;
const WINDOWS: usize = 8;
/// How far a launch's window may be from the checked output's, relative to
/// the largest value in the windows: launches of a kernel that sums with
/// atomics differ in the last bits; a value written instead of the answer
/// differs by more.
const AGREEMENT: f32 = 1e-3;

/// Fills shared memory with poison before each launch, on a GPU.
pub(crate) struct SharedPoison {
    module: Module,
    /// k blocks per multiprocessor, twice over, so that every one holds k at
    /// once.
    blocks: u32,
    /// Each block's bytes: k of them, with what the driver keeps per block,
    /// fill the multiprocessor's shared memory.
    bytes: u32,
}

impl SharedPoison {
    /// None on the CPU emulator, which poisons shared memory itself.
    pub(crate) fn new() -> Result<Option<SharedPoison>, CourseError> {
        if which_driver::is_emulator() {
            return Ok(None);
        }
        let module = Module::from_ptx(POISON_PTX, &[])
            .map_err(|err| CourseError::from(err).during("loading the shared-memory poison"))?;
        // GPU 0, the one `Gpu` opens.
        let device = cust::device::Device::get_device(0)?;
        let attribute =
            |which| -> Result<u32, CourseError> { Ok(device.get_attribute(which)?.max(1) as u32) };
        let sms = attribute(DeviceAttribute::MultiprocessorCount)?;
        let capacity = attribute(DeviceAttribute::MaxSharedMemoryPerMultiprocessor)?;
        let (per_sm, bytes) = poison_blocks(capacity);
        Ok(Some(SharedPoison {
            module,
            blocks: sms * per_sm * 2,
            bytes,
        }))
    }

    /// Queues the poison on `stream`, before the student's launch.
    pub(crate) fn fill(&self, stream: &Stream) -> Result<(), CourseError> {
        let function = self.module.get_function(POISON_KERNEL)?;
        let words = self.bytes / 4;
        // SAFETY: the kernel takes one unsigned int, the words of dynamic
        // shared memory to fill, and the launch gives it that many.
        unsafe {
            launch!(function<<<self.blocks, POISON_THREADS, self.bytes, stream>>>(words))
                .map_err(|err| CourseError::from(err).during("poisoning shared memory"))
        }
    }
}

/// How many poison blocks a multiprocessor with `capacity` bytes of shared
/// memory holds at once, and each one's bytes: the fewest blocks of at most
/// [`PLAIN_BLOCK_BYTES`] that, with what the driver keeps per block, fill it
/// (a multiple of 256 bytes, the allocation unit).
fn poison_blocks(capacity: u32) -> (u32, u32) {
    let per_sm = capacity
        .div_ceil(PLAIN_BLOCK_BYTES + RESERVED_PER_BLOCK)
        .max(1);
    let bytes = (capacity / per_sm).saturating_sub(RESERVED_PER_BLOCK) / 256 * 256;
    (per_sm, bytes.clamp(256, PLAIN_BLOCK_BYTES))
}

/// The output of a timed kernel: filled with NaN before each launch,
/// sampled after it.
pub(crate) struct SampledOutput<'a> {
    output: &'a DeviceSlice<f32>,
    /// (launch, offset, values) of every window read.
    windows: Vec<(u32, usize, Vec<f32>)>,
    rng: u64,
}

impl<'a> SampledOutput<'a> {
    pub(crate) fn new(output: &'a DeviceSlice<f32>) -> SampledOutput<'a> {
        // Drawn from the OS's hash keys: nothing a kernel can read.
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        SampledOutput {
            output,
            windows: Vec::new(),
            rng: hasher.finish() | 1,
        }
    }

    /// The output buffer itself.
    pub(crate) fn slice(&self) -> &DeviceSlice<f32> {
        self.output
    }

    /// Fills the output with NaN on `stream`, before a launch.
    pub(crate) fn clear(&self, stream: &Stream) -> Result<(), CourseError> {
        if self.output.is_empty() {
            return Ok(());
        }
        // SAFETY: the pointer and length are the output's, which the caller
        // keeps alive through the launches; the fill is queued on the stream
        // the kernel runs on, so it lands before the launch and after the
        // last one's reads of the window copies (those are synchronous).
        let code = unsafe {
            sys::cuMemsetD32Async(
                self.output.as_device_ptr().as_raw(),
                f32::NAN.to_bits(),
                self.output.len(),
                stream.as_inner(),
            )
        };
        result(code).map_err(|err| err.during("filling the output with NaN"))
    }

    /// Reads windows of the output after `launch` has finished.
    pub(crate) fn sample(&mut self, launch: u32) -> Result<(), CourseError> {
        for offset in self.offsets() {
            let values = self.read(offset)?;
            self.windows.push((launch, offset, values));
        }
        Ok(())
    }

    /// After the last launch: every window read must hold numbers that
    /// agree with the output now (the last launch's, which the exercise
    /// checks whole).
    pub(crate) fn verify(&self, launches: u32) -> Result<(), CourseError> {
        let mut now = Vec::with_capacity(self.windows.len());
        for (_, offset, _) in &self.windows {
            now.push(self.read(*offset)?);
        }
        // A first launch that left outputs unwritten which the checked
        // launch left unwritten too made the same mistake as every launch
        // (a grid too small without a loop, a bound one short): the
        // exercise's check of the last launch names it and says why, which
        // a word about stale launches would only hide. This check speaks
        // when launches disagree, its own concern.
        let same_gap = self
            .windows
            .iter()
            .zip(&now)
            .filter(|((launch, _, _), _)| *launch == 0)
            .any(|((_, _, then), now)| then.iter().zip(now).any(|(a, b)| a.is_nan() && b.is_nan()));
        if same_gap {
            return Ok(());
        }
        let scale = now
            .iter()
            .flatten()
            .filter(|v| v.is_finite())
            .fold(0.0f32, |m, v| m.max(v.abs()));
        for ((launch, offset, then), now) in self.windows.iter().zip(&now) {
            let unwritten = then.iter().filter(|v| v.is_nan()).count();
            let far = then
                .iter()
                .zip(now)
                .position(|(a, b)| !a.is_nan() && (a - b).abs() > AGREEMENT * scale);
            let what = if unwritten > 0 {
                format!("left {unwritten} of {} outputs unwritten", then.len())
            } else if let Some(i) = far {
                format!(
                    "wrote {} at output {} where the checked launch wrote {}",
                    then[i],
                    offset + i,
                    now[i]
                )
            } else {
                continue;
            };
            return Err(CourseError::StaleLaunch(format!(
                "launch {} of {launches} of the kernel {what} (read back at offsets drawn \
                 after it ended): the course fills the output with NaN before every launch \
                 and checks the last one's, so every launch must compute the whole answer \
                 from its inputs",
                launch + 1
            )));
        }
        Ok(())
    }

    /// The offsets of this launch's windows: the first, the last, and
    /// ones drawn now; the whole output if it is that small.
    fn offsets(&mut self) -> Vec<usize> {
        let len = self.output.len();
        if len <= WINDOW * WINDOWS {
            return if len == 0 { vec![] } else { vec![0] };
        }
        let last = len - WINDOW;
        let mut offsets = vec![0, last];
        for _ in 2..WINDOWS {
            // xorshift64: enough to draw offsets a kernel cannot foresee.
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            offsets.push((self.rng % (last as u64 + 1)) as usize);
        }
        offsets
    }

    fn read(&self, offset: usize) -> Result<Vec<f32>, CourseError> {
        let len = self.output.len();
        let end = if len <= WINDOW * WINDOWS {
            len
        } else {
            offset + WINDOW
        };
        let mut values = vec![f32::NAN; end - offset];
        self.output
            .index(offset..end)
            .copy_to(&mut values[..])
            .map_err(|err| CourseError::from(err).during("reading the output back"))?;
        Ok(values)
    }
}

fn result(code: sys::CUresult) -> Result<(), CourseError> {
    if code == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(CourseError::from(crate::error::raw_code_error(code)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poison_blocks_fill_each_multiprocessor_s_shared_memory() {
        // H100 228 KiB, A100 164 KiB, RTX 4090 100 KiB, T4 64 KiB.
        for capacity in [228 * 1024, 164 * 1024, 100 * 1024, 64 * 1024] {
            let (k, bytes) = poison_blocks(capacity);
            assert!(
                bytes <= PLAIN_BLOCK_BYTES && bytes % 256 == 0,
                "{capacity}: {bytes}"
            );
            let used = k * (bytes + RESERVED_PER_BLOCK);
            assert!(used <= capacity, "{capacity}: {k} of {bytes} need {used}");
            assert!(
                capacity - used < k * 256 + 256,
                "{capacity}: {k} of {bytes} leave {}",
                capacity - used
            );
            assert!(
                k * POISON_THREADS <= 1024,
                "{capacity}: {k} blocks of {POISON_THREADS}"
            );
        }
        assert_eq!(poison_blocks(228 * 1024), (5, 44 * 1024 + 512));
    }

    /// The committed PTX is nvcc's for the committed source: the same
    /// instructions (comments and line records aside).
    #[test]
    fn the_poison_ptx_is_nvcc_s_for_its_source() {
        let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/fresh_launch/poison_shared.cu");
        crate::nvcc::assert_ptx_is_nvcc_s(&source, POISON_PTX);
        assert!(POISON_PTX.contains(&format!(".entry {POISON_KERNEL}(")));
    }
}
