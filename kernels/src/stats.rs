//! Summary statistics for repeated timings.

/// Untimed runs before the timed ones: the first launch of a kernel also
/// loads it onto the GPU, which is not the kernel's time.
pub const WARMUP_RUNS: u32 = 1;

/// The median of `samples` (the mean of the middle two for an even count);
/// `None` for no samples. NaNs sort last, so one NaN cannot hide the others.
pub fn median(samples: &[f64]) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    Some(if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn odd_count_takes_the_middle() {
        assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
    }

    #[test]
    fn even_count_averages_the_middle_two() {
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }

    #[test]
    fn one_slow_outlier_does_not_move_it() {
        assert_eq!(median(&[1.0, 1.0, 1.0, 1.0, 90.0]), Some(1.0));
    }

    #[test]
    fn empty_has_none() {
        assert_eq!(median(&[]), None);
    }
}
