//! Launch shapes: CUDA's limits on blocks and grids, and the default grid size.

/// Threads in one block: the limit on every GPU since compute capability 2.0.
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;

/// Blocks in a one-dimensional grid (gridDim.x): 2^31 − 1.
pub const MAX_BLOCKS: u32 = i32::MAX as u32;

/// Waves in the default grid. Grid-stride kernels on an H100 moved data
/// fastest with 8 to 16 resident waves (0.98x the copy bandwidth with 16
/// against 0.96x with 1: scripts/perf/README.md); more blocks than fit at
/// once let the block scheduler even out the SMs' finishing times.
pub const DEFAULT_WAVES: u64 = 16;

/// The default grid: [`DEFAULT_WAVES`] times the blocks the GPU holds at once,
/// but never more blocks than `n` elements need. For large `n` this grid is
/// still far smaller than `n`, so a kernel without a grid-stride loop leaves
/// elements unwritten.
pub fn default_blocks(n: u64, threads: u32, multiprocessors: u32, max_threads_per_sm: u32) -> u32 {
    let threads = threads.max(1);
    let per_sm = (max_threads_per_sm / threads).max(1);
    let resident = u64::from(multiprocessors.max(1)) * u64::from(per_sm);
    let needed = n.div_ceil(u64::from(threads)).max(1);
    (resident * DEFAULT_WAVES)
        .min(needed)
        .min(u64::from(MAX_BLOCKS)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_n_gets_sixteen_resident_waves() {
        // H100: 132 SMs, 2048 threads each; 256-thread blocks -> 8 per SM.
        let n = 1 << 28;
        let blocks = default_blocks(n, 256, 132, 2048);
        assert_eq!(blocks, 16 * 1056);
        assert!(
            u64::from(blocks) * 256 < n,
            "the grid must be smaller than n"
        );
    }

    #[test]
    fn small_n_gets_only_the_blocks_it_needs() {
        assert_eq!(default_blocks(1000, 256, 132, 2048), 4);
        assert_eq!(default_blocks(1, 1024, 132, 2048), 1);
    }

    #[test]
    fn a_block_larger_than_an_sm_holds_still_gets_one_per_sm() {
        assert_eq!(default_blocks(1 << 30, 1024, 10, 768), 10 * 16);
    }
}
