//! The student's part of a dot exercise and what is around it: the GPU it
//! is given, checked for the block size and the buffers (`prepare`), what
//! it is given ([`Task`]) and gives back ([`GpuOutput`]), and the host's
//! share of the sum and the check after it (`finish_on_host`). Below both
//! the harness (`driver`) and the sweep (`sweep`), which each run it.

use std::time::Instant;

use super::tolerance;
use super::{Exact, Parameters, Results, Values, Variant, golden};
use crate::error::CourseError;
use crate::fresh_inputs::Answers;
use crate::gpu::Gpu;
use crate::protocol::{Check, Real};

/// What the student's GPU code is given.
pub struct Task {
    pub a: Vec<f32>,
    pub b: Vec<f32>,
    /// Launch shape: `blocks` blocks of `threads` threads.
    pub blocks: u32,
    pub threads: u32,
    /// Timed kernel runs to take the median of.
    pub runs: u32,
    /// What the kernel computes and where a and b come from, so that each
    /// timed launch's output can be checked against its own inputs
    /// ([`Answers`]); `params.blocks` and `params.threads` are read from the
    /// fields above.
    pub(crate) variant: Variant,
    pub(crate) params: Parameters,
    /// Each launch's exact dot, computed once per (values, n): the fresh
    /// launches' [`Answers::answer`] and `check` both read it, and at
    /// 2^25 drawn elements one costs a third of a second.
    pub(crate) exacts: ExactDots,
}

/// Exact dots already summed, by the values and n they are of.
pub(crate) type ExactDots = std::sync::Mutex<Vec<((Values, u64), Exact)>>;

impl Task {
    /// The exact dot of a launch with `params`, summed once.
    fn exact(&self, params: &Parameters) -> Exact {
        let key = (params.values(), params.n);
        let mut summed = self.exacts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, exact)) = summed.iter().find(|(k, _)| *k == key) {
            return *exact;
        }
        let exact = key.0.exact(key.1);
        summed.push((key, exact));
        exact
    }

    /// The parameters of a launch with these inputs and this shape.
    fn launch_params(&self, seed: Option<u64>) -> Parameters {
        Parameters {
            n: self.a.len() as u64,
            threads: self.threads,
            blocks: self.blocks,
            seed: seed.or(self.params.seed),
            ..self.params.clone()
        }
    }
}

impl Answers for Task {
    /// a and b drawn from `seed`, as `--seed` draws them.
    fn draw(&self, seed: u64) -> Result<Vec<Vec<f32>>, CourseError> {
        let n = self.a.len() as u64;
        let (a, b) = Values::Drawn { seed }
            .vectors(n)
            .map_err(|err| CourseError::BadArguments(format!("--n {n}: {err}")))?;
        Ok(vec![a, b])
    }

    fn task_inputs(&self) -> Vec<&[f32]> {
        vec![&self.a, &self.b]
    }

    /// dot-sm and dot-atomic: the exact dot, rounded to f32, as the one
    /// partial or the one float (their check allows a bound around it, so
    /// two launches' answers can pass for each other). dot-gm's products
    /// are checked exactly: None.
    fn answer(&self, seed: Option<u64>) -> Option<Vec<f32>> {
        if self.variant == Variant::Gm {
            return None;
        }
        let dot = self.exact(&self.launch_params(seed)).dot_f64() as f32;
        match self.variant {
            Variant::Gm => None,
            Variant::Sm => {
                let mut partials = vec![0.0; self.blocks as usize];
                *partials.first_mut()? = dot;
                Some(partials)
            }
            Variant::Atomic => Some(vec![dot]),
        }
    }

    fn output_len(&self) -> usize {
        match self.variant {
            Variant::Gm => self.a.len(),
            Variant::Sm => self.blocks as usize,
            Variant::Atomic => 1,
        }
    }

    /// dot-gm: every product exactly a\[i]·b\[i] in f32 (one rounding, in
    /// any kernel). dot-sm: the partials' f64 sum, and dot-atomic: the one
    /// float, within the exercise's bound of the exact dot
    /// (`tolerance::check_against`, the check the exercise's own run gets).
    fn check(
        &self,
        seed: Option<u64>,
        inputs: &[&[f32]],
        output: &[f32],
        _salt: u64,
    ) -> Result<(), String> {
        let [a, b] = inputs else {
            return Err("a and b were not given".into());
        };
        let params = self.launch_params(seed);
        let expected_len = match self.variant {
            Variant::Gm => params.n,
            Variant::Sm => u64::from(params.blocks),
            Variant::Atomic => 1,
        };
        if output.len() as u64 != expected_len {
            return Err(format!(
                "{} values where {expected_len} were expected",
                output.len()
            ));
        }
        if self.variant == Variant::Gm {
            let wrong = output
                .iter()
                .zip(a.iter().zip(b.iter()))
                .position(|(c, (a, b))| c.to_bits() != (a * b).to_bits());
            return match wrong {
                None => Ok(()),
                Some(i) => Err(format!(
                    "c[{i}] is {} where a[{i}]·b[{i}] is {}",
                    output[i],
                    a[i] * b[i]
                )),
            };
        }
        let dot = match self.variant {
            Variant::Sm => golden::sum_f64(output),
            _ => f64::from(output[0]),
        };
        let exact = self.exact(&params);
        let check = tolerance::check_against(self.variant, &params, dot, &exact);
        if check.passed {
            Ok(())
        } else {
            Err(format!(
                "the dot is {dot} where the exact one is {}",
                exact.text()
            ))
        }
    }
}

/// What the student's GPU code gives back, and how long each step took.
pub struct GpuOutput {
    /// dot-gm: the n products. dot-sm: one partial sum per block.
    /// dot-atomic: the one float the blocks added into.
    pub values: Vec<f32>,
    pub h2d_ms: f64,
    pub kernel_ms: f64,
    pub d2h_ms: f64,
}

/// The student's part: the GPU's share of the dot product.
pub type DotOnGpu = fn(&Gpu, &Task) -> Result<GpuOutput, CourseError>;

/// Starts the GPU and checks what depends on it: the block size, and that
/// a and b (and dot-gm's c) fit in free memory.
pub(super) fn prepare(variant: Variant, n: u64, threads: u32) -> Result<Gpu, CourseError> {
    if variant.reduces_in_blocks() && !threads.is_power_of_two() {
        return Err(CourseError::BadArguments(format!(
            "--threads {threads} is not a power of two: {}'s tree halves the block each step; \
             use 32, 64, 128, 256, 512 or 1024",
            variant.name()
        )));
    }
    let gpu = Gpu::init()?;
    gpu.check_block(threads)?;
    let buffers = if variant == Variant::Gm {
        "a, b and c"
    } else {
        "a and b"
    };
    gpu.check_fits(
        n.saturating_mul(variant.bytes_per_element()),
        &format!("--n {n} ({buffers})"),
    )?;
    Ok(gpu)
}

/// The host's share of the sum, and the check of the result.
pub(super) struct Finished {
    pub results: Results,
    pub check: Check,
    pub host_sum_ms: Option<f64>,
}

/// Finishes the sum on the host (dot-gm: all n products; dot-sm: one
/// partial per block; dot-atomic: nothing) and checks it.
pub(super) fn finish_on_host(variant: Variant, params: &Parameters, values: &[f32]) -> Finished {
    let exact = params.values().exact(params.n);
    let (expected_len, what) = match variant {
        Variant::Gm => (params.n, "the n products c[i]"),
        Variant::Sm => (u64::from(params.blocks), "one partial sum per block"),
        Variant::Atomic => (1, "the one float the blocks add into"),
    };
    let mut results = Results {
        dot: Real(f64::NAN),
        expected: exact.text(),
        host_f32_sum: None,
        host_f32_relative_error: None,
        sweep: None,
    };
    if values.len() as u64 != expected_len {
        let mut check = tolerance::check_against(variant, params, f64::NAN, &exact);
        check.hint = Some(format!(
            "the GPU part returned {} values; {} returns {what} ({expected_len})",
            values.len(),
            variant.name()
        ));
        return Finished {
            results,
            check,
            host_sum_ms: None,
        };
    }
    let started = Instant::now();
    let dot = match variant {
        Variant::Gm | Variant::Sm => golden::sum_f64(values),
        Variant::Atomic => f64::from(values[0]),
    };
    let host_sum_ms = (variant == Variant::Gm).then(|| started.elapsed().as_secs_f64() * 1e3);
    if variant == Variant::Gm {
        let f32_sum = f64::from(golden::sum_f32(values));
        results.host_f32_sum = Some(Real(f32_sum));
        results.host_f32_relative_error = Some(Real(exact.relative_error(f32_sum)));
    }
    results.dot = Real(dot);
    let mut check = tolerance::check_against(variant, params, dot, &exact);
    if variant == Variant::Gm && dot.is_nan() {
        if let Some(hint) = unwritten_products(params, values) {
            check.hint = Some(hint);
        }
    }
    Finished {
        results,
        check,
        host_sum_ms,
    }
}

/// dot-gm's c is filled with NaN before the kernel runs, so a NaN sum
/// comes from products never written: which ones, and what that says.
fn unwritten_products(params: &Parameters, products: &[f32]) -> Option<String> {
    let first = products.iter().position(|x| x.is_nan())?;
    let unwritten = products.iter().filter(|x| x.is_nan()).count();
    let grid = params.grid_threads();
    let rest_unwritten = first + unwritten == products.len();
    if unwritten == 1 && first + 1 == products.len() && first > 0 {
        return Some(format!(
            "exactly the last product, c[{first}], was never written (still the NaN c is filled \
             with): the loop must run while i < n"
        ));
    }
    if first > 0 && rest_unwritten {
        for (covered, shape) in [
            (grid, "blocks × threads"),
            (4 * grid, "4 × blocks × threads"),
        ] {
            if first as u64 == covered {
                return Some(format!(
                    "every product from c[{first}] on was never written (still the NaN c is \
                     filled with), and {first} = {shape}: each thread must loop, stepping by \
                     the whole grid (blockDim.x * gridDim.x)"
                ));
            }
        }
    }
    Some(format!(
        "{unwritten} of the {} products c[i] still hold the NaN c is filled with (never \
         written), the first c[{first}]: each thread must store a[i] * b[i] into c[i] for every i of its \
         grid-stride loop",
        products.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dot::Affine;

    fn task(variant: Variant, seed: Option<u64>, n: u64, blocks: u32, threads: u32) -> Task {
        let params = Parameters {
            n,
            threads,
            blocks,
            runs: 1,
            a: Affine { p: 0, q: 1 },
            b: Affine { p: 0, q: 2 },
            seed,
        };
        let (a, b) = params.values().vectors(n).unwrap();
        Task {
            a,
            b,
            blocks,
            threads,
            runs: 1,
            variant,
            params,
            exacts: Default::default(),
        }
    }

    fn pairwise(x: &[f32]) -> f32 {
        match x.len() {
            0 => 0.0,
            1 => x[0],
            len => pairwise(&x[..len / 2]) + pairwise(&x[len / 2..]),
        }
    }

    /// Each launch's output is checked as the exercise checks its own: in
    /// any summation order a right sum passes, for drawn launch inputs and
    /// the task's own; the answer to other inputs fails, and so does one
    /// wrong product.
    #[test]
    fn a_launch_s_output_passes_in_any_order_and_a_kept_one_fails() {
        let (n, blocks, threads) = (1000u64, 3u32, 64u32);
        for seed in [None, Some(9u64)] {
            let atomic = task(Variant::Atomic, seed, n, blocks, threads);
            let drawn = atomic.draw(11).unwrap();
            let kept = atomic.draw(12).unwrap();
            for (launch, inputs) in [
                (Some(11), &drawn),
                (None, &vec![atomic.a.clone(), atomic.b.clone()]),
            ] {
                let products: Vec<f32> = inputs[0]
                    .iter()
                    .zip(&inputs[1])
                    .map(|(a, b)| a * b)
                    .collect();
                let slices: Vec<&[f32]> = inputs.iter().map(Vec::as_slice).collect();
                let forward = products.iter().fold(0.0f32, |s, x| s + x);
                let backward = products.iter().rev().fold(0.0f32, |s, x| s + x);
                for sum in [forward, backward, pairwise(&products)] {
                    assert_eq!(atomic.check(launch, &slices, &[sum], 0), Ok(()));
                }
                let gm = task(Variant::Gm, seed, n, blocks, threads);
                assert_eq!(gm.check(launch, &slices, &products, 0), Ok(()));
                let mut wrong = products.clone();
                wrong[n as usize - 1] += 1.0;
                assert!(gm.check(launch, &slices, &wrong, 0).is_err());
                let sm = task(Variant::Sm, seed, n, blocks, threads);
                let chunk = products.len().div_ceil(blocks as usize);
                let partials: Vec<f32> = products.chunks(chunk).map(pairwise).collect();
                assert_eq!(sm.check(launch, &slices, &partials, 0), Ok(()));
            }
            // The answer to other inputs fails.
            let slices: Vec<&[f32]> = drawn.iter().map(Vec::as_slice).collect();
            let old: f32 = kept[0].iter().zip(&kept[1]).map(|(a, b)| a * b).sum();
            assert!(atomic.check(Some(11), &slices, &[old], 0).is_err());
            assert!(atomic.check(Some(11), &slices, &[f32::NAN], 0).is_err());
        }
    }
}
