//! CPU golden models of the three dot kernels: the same float32 arithmetic
//! in the same order as the course's solutions, one thread at a time. The
//! tolerance tests corrupt these (drop an element, a block) to show what the
//! check catches; the grader can use them to explain a result.

/// dot-gm's GPU part: every product, rounded to f32.
pub fn products(a: &[f32], b: &[f32]) -> Vec<f32> {
    a.iter().zip(b).map(|(x, y)| x * y).collect()
}

/// dot-gm's host part: the products summed in f64, in index order.
pub fn sum_f64(values: &[f32]) -> f64 {
    values.iter().map(|&x| f64::from(x)).sum()
}

/// A plain f32 running sum, in index order: what dot-gm shows beside the
/// f64 sum, to make single precision's drift visible.
pub fn sum_f32(values: &[f32]) -> f32 {
    values.iter().sum()
}

/// Each of `grid` threads' f32 running sum over a grid-stride loop: thread t
/// takes elements t, t + grid, t + 2·grid, ...
pub fn thread_sums(a: &[f32], b: &[f32], grid: u64) -> Vec<f32> {
    let grid = grid.max(1) as usize;
    let mut sums = vec![0.0f32; grid.min(a.len()).max(1)];
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        sums[i % grid] += x * y;
    }
    sums.resize(grid, 0.0);
    sums
}

/// Each block's shared-memory tree: halve the live part of the cache each
/// step, the lower half adding the upper half's values. `threads` is a power
/// of two.
pub fn block_partials(thread_sums: &[f32], threads: u32) -> Vec<f32> {
    thread_sums
        .chunks(threads as usize)
        .map(|block| {
            let mut cache = block.to_vec();
            let mut half = cache.len() / 2;
            while half > 0 {
                for t in 0..half {
                    cache[t] += cache[t + half];
                }
                half /= 2;
            }
            cache[0]
        })
        .collect()
}

/// dot-atomic's last step: the partials added one by one into one f32, in
/// block order (the GPU's order varies from run to run).
pub fn atomic_total(partials: &[f32]) -> f32 {
    partials.iter().fold(0.0f32, |total, &p| total + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_adds_every_thread_of_its_block() {
        let sums: Vec<f32> = (1..=8).map(|x| x as f32).collect();
        assert_eq!(block_partials(&sums, 4), vec![10.0, 26.0]);
        assert_eq!(block_partials(&sums, 8), vec![36.0]);
    }

    #[test]
    fn grid_stride_threads_take_every_grid_th_element() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [1.0; 5];
        assert_eq!(thread_sums(&a, &b, 2), vec![9.0, 6.0]);
        assert_eq!(
            thread_sums(&a, &b, 8),
            vec![1.0, 2.0, 3.0, 4.0, 5.0, 0.0, 0.0, 0.0]
        );
    }

    #[test]
    fn f32_running_sums_drift_where_f64_does_not() {
        // 2^24 + 1 ones: an f32 running sum stops growing at 2^24.
        let ones = vec![1.0f32; (1 << 24) + 1];
        assert_eq!(sum_f32(&ones), (1 << 24) as f32);
        assert_eq!(sum_f64(&ones), ((1 << 24) + 1) as f64);
    }
}
