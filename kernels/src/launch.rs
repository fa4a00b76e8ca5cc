//! Launch shapes: CUDA's limits on blocks and grids, and the default grid size.

/// Threads in one block: the limit on every GPU since compute capability 2.0.
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;

/// Blocks in a one-dimensional grid (gridDim.x): 2^31 − 1.
pub const MAX_BLOCKS: u32 = i32::MAX as u32;

/// Waves in the default grid of kernels that store every element
/// (vecadd-anyN, dot-gm). Grid-stride kernels on an H100 moved data fastest
/// with 8 to 16 resident waves (0.98x the copy bandwidth with 16 against
/// 0.96x with 1: docs/src/vecadd-anyN.md); more blocks than fit at once let
/// the block scheduler even out the SMs' finishing times.
pub const STREAMING_WAVES: u64 = 16;

/// What the GPU holds at once, as far as the default grid cares.
#[derive(Clone, Copy, Debug)]
pub struct Residency {
    pub multiprocessors: u32,
    pub max_threads_per_multiprocessor: u32,
    pub max_blocks_per_multiprocessor: u32,
}

/// Blocks of `threads` threads the GPU holds at once: one wave.
pub fn wave_blocks(threads: u32, gpu: Residency) -> u64 {
    let per_sm = (gpu.max_threads_per_multiprocessor / threads.max(1))
        .min(gpu.max_blocks_per_multiprocessor)
        .max(1);
    u64::from(gpu.multiprocessors.max(1)) * u64::from(per_sm)
}

/// The default grid: `waves` times the blocks the GPU holds at once, but at
/// most half the blocks `n` elements would need at one per thread. So at any
/// `n` above one block, every thread must loop at least twice, and a kernel
/// without a grid-stride loop leaves elements out.
pub fn default_blocks(n: u64, threads: u32, gpu: Residency, waves: u64) -> u32 {
    let half_needed = (n.div_ceil(u64::from(threads.max(1))) / 2).max(1);
    (wave_blocks(threads, gpu) * waves.max(1))
        .min(half_needed)
        .min(u64::from(MAX_BLOCKS)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    const H100: Residency = Residency {
        multiprocessors: 132,
        max_threads_per_multiprocessor: 2048,
        max_blocks_per_multiprocessor: 32,
    };

    #[test]
    fn large_n_gets_sixteen_resident_waves() {
        // H100: 132 SMs, 2048 threads each; 256-thread blocks -> 8 per SM.
        let n = 1 << 28;
        let blocks = default_blocks(n, 256, H100, STREAMING_WAVES);
        assert_eq!(blocks, 16 * 1056);
        assert!(
            u64::from(blocks) * 256 < n,
            "the grid must be smaller than n"
        );
    }

    #[test]
    fn the_grid_never_covers_n_in_one_pass() {
        for n in [
            257,
            1000,
            1025,
            2048,
            1_000_003,
            4_325_376,
            8_650_752,
            1 << 26,
        ] {
            for threads in [32, 96, 256, 1024] {
                let grid = u64::from(default_blocks(n, threads, H100, STREAMING_WAVES))
                    * u64::from(threads);
                if n > u64::from(threads) {
                    assert!(grid < n, "n {n}, {threads} threads: grid {grid}");
                    assert!(
                        2 * grid < n + u64::from(threads),
                        "n {n}, {threads} threads: grid {grid}"
                    );
                }
            }
        }
        assert_eq!(default_blocks(1000, 256, H100, STREAMING_WAVES), 2);
    }

    #[test]
    fn a_tiny_n_still_gets_one_block() {
        assert_eq!(default_blocks(1, 1024, H100, 1), 1);
        assert_eq!(default_blocks(300, 256, H100, 1), 1);
    }

    #[test]
    fn a_block_larger_than_an_sm_holds_still_gets_one_per_sm() {
        let small = Residency {
            multiprocessors: 10,
            max_threads_per_multiprocessor: 768,
            max_blocks_per_multiprocessor: 16,
        };
        assert_eq!(wave_blocks(1024, small), 10);
    }

    #[test]
    fn small_blocks_are_limited_by_the_blocks_an_sm_holds() {
        // 2048 / 32 = 64 blocks of 32 threads would fit, but an SM takes 32.
        assert_eq!(wave_blocks(32, H100), 132 * 32);
        assert_eq!(wave_blocks(256, H100), 132 * 8);
    }
}
