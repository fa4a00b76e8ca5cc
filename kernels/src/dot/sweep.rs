//! dot-atomic `--sweep`: the course's question "which mix of blocks and loops
//! per thread is fastest?", answered on this GPU. Every grid from one block
//! doing all the loops to one loop per thread (powers of two), each checked
//! and timed, the fastest marked.

use std::fmt::Write;

use super::task::{DotOnGpu, Task, finish_on_host, prepare};
use super::{Affine, Parameters, Results, SweepRow, Variant};
use crate::copy_probe;
use crate::error::CourseError;
use crate::gpu;
use crate::protocol::{Report, SCHEMA_VERSION, Throughput, Timing};
use crate::units;

/// The sweep's defaults, from the course notes: 32M elements, 512 threads.
pub const SWEEP_N: u64 = 32 << 20;

/// The sweep's default on the CPU emulator.
pub const EMULATOR_SWEEP_N: u64 = 1 << 20;
pub const SWEEP_THREADS: u32 = 512;

/// 1, 2, 4, ... blocks, up to the grid where each thread loops once.
pub fn grid_sizes(n: u64, threads: u32) -> Vec<u32> {
    let one_loop = n
        .div_ceil(u64::from(threads))
        .min(u64::from(crate::launch::MAX_BLOCKS)) as u32;
    let mut sizes: Vec<u32> = std::iter::successors(Some(1u32), |&b| b.checked_mul(2))
        .take_while(|&b| b < one_loop)
        .collect();
    sizes.push(one_loop);
    sizes
}

/// What a `--sweep` run is asked: the flags it reads, as parsed.
pub struct SweepTask {
    /// Elements in a and b; None: [`SWEEP_N`] ([`EMULATOR_SWEEP_N`] on the
    /// emulator).
    pub n: Option<u64>,
    /// Threads per block; None: [`SWEEP_THREADS`].
    pub threads: Option<u32>,
    /// Refused: the sweep tries every grid.
    pub blocks: Option<u32>,
    pub a: Affine,
    pub b: Affine,
    /// `--seed`: a and b drawn from it in place of `a` and `b`.
    pub seed: Option<u64>,
    /// Timed runs of each grid.
    pub runs: u32,
}

pub(super) fn run(
    asked: &SweepTask,
    dot_on_gpu: DotOnGpu,
) -> Result<(Report<Parameters, Results>, String), CourseError> {
    if asked.blocks.is_some() {
        return Err(CourseError::BadArguments(
            "--blocks does not go with --sweep, which tries every grid from 1 block to one loop per thread"
                .into(),
        ));
    }
    let variant = Variant::Atomic;
    let n = asked
        .n
        .unwrap_or_else(|| gpu::default_size(SWEEP_N, EMULATOR_SWEEP_N));
    let threads = asked.threads.unwrap_or(SWEEP_THREADS);
    let gpu = prepare(variant, n, threads)?;
    let values = match asked.seed {
        Some(seed) => super::Values::Drawn { seed },
        None => super::Values::Affine(super::Inputs {
            a: asked.a,
            b: asked.b,
        }),
    };
    let (a, b) = values
        .vectors(n)
        .map_err(|err| CourseError::BadArguments(format!("--n {n}: {err}")))?;
    let copy_gb_per_s = copy_probe::copy_gb_per_s(&gpu, asked.runs)?;

    let mut task = Task {
        a,
        b,
        blocks: 1,
        threads,
        runs: asked.runs,
        variant,
        params: Parameters {
            n,
            threads,
            blocks: 1,
            runs: asked.runs,
            a: asked.a,
            b: asked.b,
            seed: asked.seed,
        },
        exacts: Default::default(),
    };
    let mut measured = Vec::new();
    for blocks in grid_sizes(n, threads) {
        task.blocks = blocks;
        let params = Parameters {
            n,
            threads,
            blocks,
            runs: asked.runs,
            a: asked.a,
            b: asked.b,
            seed: asked.seed,
        };
        let output = dot_on_gpu(&gpu, &task)?;
        let finished = finish_on_host(variant, &params, &output.values);
        let gb_per_s = (n * variant.bytes_per_element()) as f64 / (output.kernel_ms * 1e6);
        let row = SweepRow {
            blocks,
            loops_per_thread: n.div_ceil(params.grid_threads()),
            kernel_ms: output.kernel_ms,
            gb_per_s,
            passed: finished.check.passed,
        };
        measured.push((row, params, finished));
    }

    // The fastest correct grid; if none is correct, the fastest.
    let key = |i: usize| (measured[i].0.passed, measured[i].0.gb_per_s);
    let best = (0..measured.len())
        .max_by(|&x, &y| {
            key(x)
                .partial_cmp(&key(y))
                .unwrap_or(std::cmp::Ordering::Equal)
        })
        .unwrap_or(0);
    let rows: Vec<SweepRow> = measured.iter().map(|(row, _, _)| row.clone()).collect();
    let table = table(&rows, best, n, threads, asked.runs, copy_gb_per_s);

    let wrong = rows.iter().filter(|row| !row.passed).count() as u64;
    let first_wrong = measured.iter().position(|(row, _, _)| !row.passed);
    let (best_row, best_params, best_finished) = &measured[best];
    // The check shown is the first failing grid's, or the fastest's.
    let mut check = measured[first_wrong.unwrap_or(best)].2.check.clone();
    check.criterion = format!("at every grid size, {}", check.criterion);
    check.compared = rows.len() as u64;
    check.wrong = wrong;
    check.passed = wrong == 0;
    if let (Some(i), Some(failure)) = (first_wrong, check.failures.first_mut()) {
        failure.at = format!("dot with {} blocks", measured[i].0.blocks);
    }
    let mut results = best_finished.results.clone();
    results.sweep = Some(rows);
    let report = Report {
        schema_version: SCHEMA_VERSION,
        exercise: variant.name().to_owned(),
        device: gpu.info().clone(),
        parameters: best_params.clone(),
        results,
        check,
        timings: vec![Timing::new("kernel", best_row.kernel_ms, asked.runs)],
        throughput: Some(Throughput {
            kernel_gb_per_s: best_row.gb_per_s,
            copy_gb_per_s,
            ratio_to_copy: best_row.gb_per_s / copy_gb_per_s,
        }),
        gflop_per_s: None,
        counters: None,
    };
    Ok((report, table))
}

/// The sweep for a person; the report that follows it is the fastest grid's.
fn table(rows: &[SweepRow], best: usize, n: u64, threads: u32, runs: u32, copy: f64) -> String {
    let mut out = format!(
        "blocks versus loops: n = {}, {threads} threads per block, median of {runs} runs each\n\
         {:>10} {:>13} {:>10} {:>9} {:>7}  check\n",
        units::count(n),
        "blocks",
        "loops/thread",
        "kernel ms",
        "GB/s",
        "x copy"
    );
    for (i, row) in rows.iter().enumerate() {
        let _ = writeln!(
            out,
            "{:>10} {:>13} {:>10.3} {:>9.1} {:>7.3}  {}{}",
            row.blocks,
            row.loops_per_thread,
            row.kernel_ms,
            row.gb_per_s,
            row.gb_per_s / copy,
            if row.passed { "PASS" } else { "FAIL" },
            if i == best { "  <- fastest" } else { "" }
        );
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_course_notes_sweep_has_17_grids() {
        let sizes = grid_sizes(SWEEP_N, SWEEP_THREADS);
        assert_eq!(sizes.len(), 17);
        assert_eq!((sizes[0], sizes[16]), (1, 65536));
    }

    #[test]
    fn a_size_that_is_no_power_of_two_ends_at_one_loop_per_thread() {
        assert_eq!(grid_sizes(1000, 256), vec![1, 2, 4]);
        assert_eq!(grid_sizes(1100, 256), vec![1, 2, 4, 5]);
        assert_eq!(grid_sizes(1, 512), vec![1]);
    }

    #[test]
    fn the_table_marks_the_fastest() {
        let row = |blocks, gb_per_s| SweepRow {
            blocks,
            loops_per_thread: 1,
            kernel_ms: 1.0,
            gb_per_s,
            passed: true,
        };
        let text = table(&[row(1, 10.0), row(2, 30.0)], 1, 1024, 512, 5, 100.0);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[2].trim_start().starts_with("1 ") && !lines[2].contains("fastest"));
        assert!(lines[3].ends_with("PASS  <- fastest"), "{text}");
    }
}
