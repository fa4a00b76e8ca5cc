//! Kernels compiled by nvcc 11.8 (ptx/checks.cu) run through the emulator's
//! own API: correct kernels give the values computed here, and each mutant
//! is stopped with the fault it has, its thread and its `checks.cu` line.
//! (The PTX corpus, tests/corpus/, holds the correct kernels the GPU ran.)

mod device;

use std::sync::Arc;

use device::Device;
use emulator::driver::codes;
use emulator::driver::fault::Fault;
use emulator::exec::launch::KEPT_FINDINGS;

const PTX: &str = include_str!("ptx/checks.ptx");

fn fault(result: Result<(), Fault>) -> Fault {
    result.expect_err("the launch must fail")
}

#[test]
fn a_missing_syncthreads_is_a_shared_memory_race_with_its_line() {
    let mut device = Device::new(PTX);
    let a = device.upload(&[1.0f32; 64]);
    let out = device.upload(&[0.0f32; 1]);
    let f = fault(device.launch("shared_race", 1, 64, &[a, out]));
    assert_eq!(f.code, codes::LAUNCH_FAILED);
    assert!(
        f.finding.words.contains("shared-memory race"),
        "{}",
        f.finding.words
    );
    // Thread 0 reads cache[1] (line 13) before thread 1 writes it (line 9).
    assert!(
        f.finding
            .words
            .contains("read it (`ld.shared.f32` at checks.cu:14"),
        "{}",
        f.finding.words
    );
    assert!(
        f.finding
            .words
            .contains("wrote it (`st.shared.f32` at checks.cu:10"),
        "{}",
        f.finding.words
    );
}

#[test]
fn every_block_adding_to_one_word_is_a_global_conflict() {
    let mut device = Device::new(PTX);
    let a = device.upload(&[1.0f32; 4]);
    let c = device.upload(&[0.0f32; 1]);
    let f = fault(device.launch("global_conflict", 4, 32, &[a, c]));
    assert!(
        f.finding.words.contains("global-memory conflict"),
        "{}",
        f.finding.words
    );
    assert!(
        f.finding.words.contains("checks.cu:20"),
        "{}",
        f.finding.words
    );
    // One block alone is fine.
    device.launch("global_conflict", 1, 32, &[a, c]).unwrap();
}

#[test]
fn running_off_the_end_of_an_allocation_is_named() {
    let mut device = Device::new(PTX);
    let a = device.upload(&[1.0f32; 100]);
    let c = device.upload(&[0.0f32; 100]);
    let f = fault(device.launch("out_of_bounds", 1, 128, &[a, c, 100]));
    assert_eq!(f.code, codes::ILLEGAL_ADDRESS);
    assert!(
        f.finding
            .words
            .contains("out-of-bounds global access of 4 bytes"),
        "{}",
        f.finding.words
    );
    assert!(
        f.finding.words.contains("thread (100,0,0)"),
        "{}",
        f.finding.words
    );
    assert!(
        f.finding
            .words
            .contains("400 bytes past the start of a 400-byte"),
        "{}",
        f.finding.words
    );
    assert!(
        f.finding.words.contains("checks.cu:25"),
        "{}",
        f.finding.words
    );
    device
        .launch("out_of_bounds", 1, 100, &[a, c, 100])
        .unwrap();
    assert_eq!(device.download::<f32>(c, 100), vec![101.0; 100]);
}

#[test]
fn a_misaligned_read_is_a_misaligned_address() {
    let mut device = Device::new(PTX);
    let a = device.upload(&[1.0f32; 40]);
    let c = device.upload(&[0.0f32; 32]);
    let f = fault(device.launch("misaligned", 1, 32, &[a, c]));
    assert_eq!(f.code, codes::MISALIGNED_ADDRESS);
    assert!(
        f.finding.words.contains("checks.cu:30"),
        "{}",
        f.finding.words
    );
}

#[test]
fn threads_at_different_barriers_are_reported() {
    let mut device = Device::new(PTX);
    let c = device.upload(&[0.0f32; 64]);
    let f = fault(device.launch("divergent_barrier", 1, 64, &[c]));
    assert!(
        f.finding
            .words
            .contains("barrier not reached by every thread"),
        "{}",
        f.finding.words
    );
    assert!(
        f.finding.words.contains("checks.cu:37") && f.finding.words.contains("checks.cu:40"),
        "{}",
        f.finding.words
    );
}

#[test]
fn shuffles_and_ballots_compute_what_the_warp_would() {
    let mut device = Device::new(PTX);
    let values: Vec<i32> = (0..128).map(|i| i * 3 - 50).collect();
    let a = device.upload(&values);
    let sums = device.upload(&[0i32; 4]);
    let ballots = device.upload(&[0u32; 4]);
    device
        .launch("warp_sum", 2, 64, &[a, sums, ballots])
        .unwrap();
    let expected: Vec<i32> = values.chunks(32).map(|w| w.iter().sum()).collect();
    assert_eq!(device.download::<i32>(sums, 4), expected);
    let expected: Vec<u32> = values
        .chunks(32)
        .map(|w| {
            w.iter()
                .enumerate()
                .filter(|(_, v)| **v % 2 == 1)
                .map(|(l, _)| 1u32 << l)
                .sum()
        })
        .collect();
    assert_eq!(device.download::<u32>(ballots, 4), expected);
}

#[test]
fn atomics_from_every_block_are_not_conflicts() {
    let mut device = Device::new(PTX);
    let values: Vec<i32> = (0..256).map(|i| (i * 37) % 101 - 20).collect();
    let a = device.upload(&values);
    let out = device.upload(&[0, i32::MIN, i32::MAX, 0]);
    device.launch("atomics", 4, 64, &[a, out]).unwrap();
    // A shift by a negative amount is a huge unsigned one in PTX: 0.
    let or = values.iter().fold(0, |acc, v| {
        acc | 1i32.checked_shl((v % 31) as u32).unwrap_or(0)
    });
    let got = device.download::<i32>(out, 4);
    assert_eq!(got, vec![values.iter().sum(), 80, -20, or]);
    assert_eq!(*values.iter().max().unwrap(), 80);
    assert_eq!(*values.iter().min().unwrap(), -20);
}

#[test]
fn float_and_integer_arithmetic_match_rust() {
    let mut device = Device::new(PTX);
    let x: Vec<f32> = vec![1.0, 2.0, 3.5, 0.1, 7.25, 100.0, 1e-3, 9.0];
    let xs = device.upload(&x);
    let out = device.upload(&[0f32; 32]);
    let iout = device.upload(&[0i32; 16]);
    device.launch("math", 1, 8, &[xs, out, iout]).unwrap();
    let got = device.download::<f32>(out, 32);
    let igot = device.download::<i32>(iout, 16);
    for (i, &v) in x.iter().enumerate() {
        assert_eq!(got[4 * i], v.sqrt(), "sqrt {v}");
        let down = got[4 * i + 1];
        assert!(
            f64::from(down) <= 1.0 / f64::from(v)
                && (1.0 / f64::from(v) - f64::from(down)) < 1e-6 / f64::from(v),
            "{v}"
        );
        assert_eq!(got[4 * i + 2], v.min(2.0));
        assert_eq!(got[4 * i + 3], (v as i32) as f32 / 3.0);
        assert_eq!(igot[2 * i], (v as i32) % 7 - (i as i32 >> 1));
        assert_eq!(
            igot[2 * i + 1],
            ((v * 2.5).round_ties_even() as i32) ^ (i.count_ones() as i32)
        );
    }
}

#[test]
fn printf_output_comes_back_in_block_and_thread_order() {
    let mut device = Device::new(PTX);
    let c = device.upload(&[1.5f32]);
    let report = device.run(false, "prints", 2, 3, &[c]).unwrap();
    let text = String::from_utf8(report.printed).unwrap();
    let expected: String = (0..2)
        .flat_map(|_| (0..3).map(|t| format!("hello 1.500000 from {t}\n")))
        .collect();
    assert_eq!(text, expected);
}

#[test]
fn what_the_emulator_cannot_run_is_named_in_cuda_terms_before_it_runs() {
    let device = Device::new(PTX);
    let texture = device.kernel("texture_fetch");
    assert!(
        texture.unsupported[0].starts_with("texture fetches (tex2D(), tex1Dfetch()"),
        "{:?}",
        texture.unsupported
    );
    assert!(
        texture.unsupported_at[0].contains("checks.cu:"),
        "{:?}",
        texture.unsupported_at
    );
    let recursion = device.kernel("recursion");
    assert!(
        recursion
            .unsupported
            .iter()
            .any(|m| m.contains("recursive device functions")),
        "{:?}",
        recursion.unsupported
    );
    // Every kernel that the emulator runs decodes completely.
    for name in ["shared_race", "prints", "asserts", "warp_sum"] {
        assert!(device.kernel(name).unsupported.is_empty(), "{name}");
    }
}

#[test]
fn an_unsynchronised_warp_tail_is_a_race_and_a_synchronised_one_is_not() {
    let mut device = Device::new(PTX);
    let a = device.upload(&[1.0f32; 64]);
    let out = device.upload(&[0.0f32]);
    let f = fault(device.launch("warp_tail_unsynced", 1, 64, &[a, out]));
    assert!(
        f.finding.words.contains("shared-memory race"),
        "{}",
        f.finding.words
    );
    assert!(
        f.finding.words.contains("checks.cu:91"),
        "{}",
        f.finding.words
    );
    // The same tail with __syncwarp() is the corpus's `syncwarp_tail`,
    // which must match the GPU.
}

#[test]
fn lanes_of_one_warp_adding_into_one_word_conflict() {
    let mut device = Device::new(PTX);
    let a = device.upload(&[1i32; 32]);
    let c = device.upload(&[0i32]);
    let f = fault(device.launch("warp_global_race", 1, 32, &[a, c]));
    assert!(
        f.finding.words.contains("global-memory conflict"),
        "{}",
        f.finding.words
    );
    assert!(
        f.finding.words.contains("checks.cu:99"),
        "{}",
        f.finding.words
    );
}

#[test]
fn uninitialised_shared_memory_reaching_global_memory_is_named() {
    let mut device = Device::new(PTX);
    let a = device.upload(&[1.0f32; 64]);
    let out = device.upload(&[0.0f32]);
    // 64 threads write all 64 elements: fine.
    device
        .launch("unwritten_shared_sum", 1, 64, &[a, out])
        .unwrap();
    assert_eq!(device.download::<f32>(out, 1), vec![64.0]);
    // 32 threads leave cache[32..64] unwritten, and the tree adds them in.
    let f = fault(device.launch("unwritten_shared_sum", 1, 32, &[a, out]));
    assert!(
        f.finding
            .words
            .contains("computed from uninitialised shared memory"),
        "{}",
        f.finding.words
    );
    assert!(
        f.finding.words.contains("checks.cu:110"),
        "the read: {}",
        f.finding.words
    );
    assert!(
        f.finding.words.contains("checks.cu:113"),
        "the store: {}",
        f.finding.words
    );
}

#[test]
fn reading_global_memory_nothing_wrote_is_named() {
    let mut device = Device::new(PTX);
    let a = device.upload(&[1.0f32; 32]);
    let sum = device.allocate(128);
    let f = fault(device.launch("accumulate", 1, 32, &[a, sum]));
    assert!(
        f.finding.words.contains("uninitialised global read"),
        "{}",
        f.finding.words
    );
    assert!(
        f.finding.words.contains("checks.cu:118"),
        "{}",
        f.finding.words
    );
    let zeroed = device.upload(&[0.0f32; 32]);
    device.launch("accumulate", 1, 32, &[a, zeroed]).unwrap();
}

#[test]
fn a_failed_assert_is_a_device_side_assert_with_its_expression() {
    let mut device = Device::new(PTX);
    let a = device.upload(&[1i32, 2, 30, 4]);
    device.launch("asserts", 1, 4, &[a, 50]).unwrap();
    let f = fault(device.launch("asserts", 1, 4, &[a, 10]));
    assert_eq!(f.code, codes::ASSERT);
    assert!(
        f.finding
            .words
            .contains("Assertion `a[threadIdx.x] < n` failed"),
        "{}",
        f.finding.words
    );
    assert!(
        f.finding.words.contains("thread: [2,0,0]"),
        "{}",
        f.finding.words
    );
}

#[test]
fn launch_bounds_refuse_bigger_blocks_as_a_gpu_does() {
    let mut device = Device::new(PTX);
    let out = device.upload(&[0i32; 64]);
    device.launch("bounded", 1, 32, &[out]).unwrap();
    let f = fault(device.launch("bounded", 1, 64, &[out]));
    assert_eq!(f.code, codes::INVALID_VALUE);
    assert!(
        f.finding
            .words
            .contains("__launch_bounds__ allows at most 32"),
        "{}",
        f.finding.words
    );
}

#[test]
fn the_heap_snapshot_keeps_allocations_alive() {
    let device = Device::new(PTX);
    let snapshot = device.heap.snapshot();
    assert!(snapshot.iter().all(|a| Arc::strong_count(a) >= 2));
}

// Carrying on, as the grader's runs do (`exec::memory::carry_on`): past what a GPU
// carries on past, with the findings in the report, and stopped by what
// stops a GPU.

#[test]
fn carrying_on_a_warp_tail_without_syncwarp_gets_the_lockstep_sum_and_keeps_the_race() {
    let mut device = Device::new(PTX);
    let a = device.upload(&[1.0f32; 64]);
    let out = device.upload(&[0.0f32]);
    let report = device
        .carrying_on("warp_tail_unsynced", 1, 64, &[a, out])
        .expect("a GPU carries on");
    // Thread by thread, lane 0 would finish the tail before lane 16 added
    // its part in: 34, not 64. In lockstep, as a warp runs it, 64.
    assert_eq!(device.download::<f32>(out, 1), vec![64.0]);
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.words.contains("shared-memory race") && f.words.contains("checks.cu:91")),
        "{:?}",
        report.findings
    );
}

#[test]
fn carrying_on_a_block_with_no_barrier_at_all_moves_lanes_together_and_warps_apart() {
    let mut device = Device::new(PTX);
    let a = device.upload(&[1.0f32; 64]);
    let out = device.upload(&[0.0f32; 1]);
    // One warp: its lanes store, then add, in step.
    let report = device
        .carrying_on("shared_race", 1, 32, &[a, out])
        .expect("a GPU carries on");
    assert_eq!(device.download::<f32>(out, 1), vec![32.0]);
    assert!(
        report.findings[0].words.contains("shared-memory race"),
        "{:?}",
        report.findings
    );
    // Two: the first adds the second's slots before the second wrote them
    // (still the poison), as warps that drift apart would.
    device
        .carrying_on("shared_race", 1, 64, &[a, out])
        .expect("a GPU carries on");
    assert!(device.download::<f32>(out, 1)[0].is_nan());
}

#[test]
fn carrying_on_a_read_into_an_allocation_s_padding_reads_zero_and_further_faults() {
    let mut device = Device::new(PTX);
    // 400 bytes each, aligned to 256: bytes 400 to 512 are padding, which a
    // GPU has mapped; threads 100 to 127 read and write there.
    let a = device.upload(&[1.0f32; 100]);
    let c = device.upload(&[0.0f32; 100]);
    let report = device
        .carrying_on("out_of_bounds", 1, 128, &[a, c, 100])
        .expect("the padding does not fault");
    assert_eq!(device.download::<f32>(c, 100), vec![101.0; 100]);
    assert!(
        report.findings[0]
            .words
            .contains("out-of-bounds global access of 4 bytes"),
        "{:?}",
        report.findings
    );
    assert!(report.findings.len() <= KEPT_FINDINGS);
    // An access over an allocation's end: its bytes inside are real.
    let a = device.upload(&[0.1f32; 26]);
    let c = device.upload(&[0u8; 102]);
    device
        .carrying_on("out_of_bounds", 1, 26, &[a, c, 0])
        .expect("the padding does not fault");
    let stored = device.download::<u8>(c, 102);
    assert_eq!(
        stored[96..102],
        [0.1f32.to_le_bytes(), 0.1f32.to_le_bytes()].concat()[..6]
    );
    let a = device.upload(&[1.0f32; 100]);
    let c = device.upload(&[0.0f32; 100]);
    // Thread 128 reads byte 512: past the padding, as a GPU would fault.
    let f = device
        .carrying_on("out_of_bounds", 1, 160, &[a, c, 100])
        .expect_err("past the padding");
    assert_eq!(f.code, codes::ILLEGAL_ADDRESS);
    assert!(
        f.findings.iter().all(|x| x.words.contains("out-of-bounds")),
        "{:?}",
        f.findings
    );
}

#[test]
fn carrying_on_stops_at_a_conflict_with_a_read_and_passes_reads_of_unwritten_memory() {
    let mut device = Device::new(PTX);
    let a = device.upload(&[1.0f32; 32]);
    let c = device.upload(&[0.0f32; 1]);
    // What block 1 reads of block 0's store depends on timing.
    let f = device
        .carrying_on("global_conflict", 4, 32, &[a, c])
        .expect_err("a read in the conflict");
    assert!(
        f.finding.words.contains("global-memory conflict"),
        "{}",
        f.finding.words
    );
    // A read of memory nothing wrote reads what is there (zeros here).
    let sum = device.allocate(128);
    let report = device
        .carrying_on("accumulate", 1, 32, &[a, sum])
        .expect("a GPU reads whatever is there");
    assert_eq!(device.download::<f32>(sum, 32), vec![1.0; 32]);
    assert!(
        report.findings[0]
            .words
            .contains("uninitialised global read"),
        "{:?}",
        report.findings
    );
    // The poison of unwritten shared memory reaches the output, named.
    let out = device.upload(&[0.0f32]);
    let report = device
        .carrying_on("unwritten_shared_sum", 1, 32, &[a, out])
        .expect("a GPU stores what shared memory held");
    assert!(device.download::<f32>(out, 1)[0].is_nan());
    assert!(
        report.findings[0]
            .words
            .contains("computed from uninitialised shared memory"),
        "{:?}",
        report.findings
    );
    // A correct kernel carries nothing.
    let a64 = device.upload(&[1.0f32; 64]);
    let report = device
        .carrying_on("unwritten_shared_sum", 1, 64, &[a64, out])
        .unwrap();
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    assert_eq!(device.download::<f32>(out, 1), vec![64.0]);
}

#[test]
fn carrying_on_still_stops_at_threads_waiting_at_different_barriers() {
    let mut device = Device::new(PTX);
    let c = device.upload(&[0.0f32; 64]);
    let f = device
        .carrying_on("divergent_barrier", 1, 64, &[c])
        .expect_err("undefined: an H100 deadlocks on some such kernels");
    assert!(
        f.finding
            .words
            .contains("barrier not reached by every thread"),
        "{}",
        f.finding.words
    );
}

#[test]
fn carrying_on_threads_storing_one_value_to_one_word_and_stopping_at_different_values() {
    let mut device = Device::new(PTX);
    let c = device.upload(&[0.0f32]);
    // Redundant work: the word holds 1 whatever the order.
    let report = device
        .carrying_on("one_word", 2, 32, &[c, 0])
        .expect("one value, any order");
    assert_eq!(device.download::<f32>(c, 1), vec![1.0]);
    assert!(
        report.findings[0].words.contains("global-memory conflict")
            && report.findings[0].words.contains("checks.cu:138"),
        "{:?}",
        report.findings
    );
    // Which thread's value stays depends on the order.
    let f = device
        .carrying_on("one_word", 1, 32, &[c, 1])
        .expect_err("different values");
    assert!(
        f.finding.words.contains("global-memory conflict"),
        "{}",
        f.finding.words
    );
    // Strict, even one value stops it.
    let f = fault(device.launch("one_word", 1, 32, &[c, 0]));
    assert!(
        f.finding.words.contains("global-memory conflict"),
        "{}",
        f.finding.words
    );
}

#[test]
fn carrying_on_a_barrier_inside_an_if_goes_through_as_on_a_gpu_and_one_in_each_branch_stops() {
    let mut device = Device::new(PTX);
    let a = device.upload(&[1.0f32; 64]);
    let out = device.upload(&[0.0f32]);
    let f = fault(device.launch("barrier_in_if", 1, 64, &[a, out]));
    assert!(
        f.finding
            .words
            .contains("barrier not reached by every thread"),
        "{}",
        f.finding.words
    );
    // Two warps (the first alone in the if once half < 32), and one.
    for threads in [64, 32] {
        let report = device
            .carrying_on("barrier_in_if", 1, threads, &[a, out])
            .expect("an H200 runs it");
        assert_eq!(device.download::<f32>(out, 1), vec![threads as f32]);
        assert!(
            report.findings[0]
                .words
                .contains("barrier not reached by every thread"),
            "{:?}",
            report.findings
        );
    }
    // One barrier in each branch: an H200 deadlocks (the test above).
}

#[test]
fn a_race_through_a_generic_address_of_shared_memory_is_a_shared_memory_race() {
    let mut device = Device::new(PTX);
    let a = device.upload(&[1.0f32; 64]);
    let out = device.upload(&[0.0f32]);
    let elsewhere = device.upload(&[0.0f32; 64]);
    let f = fault(device.launch("generic_warp_tail", 1, 64, &[a, out, elsewhere, 1]));
    assert!(
        f.finding.words.contains("shared-memory race"),
        "{}",
        f.finding.words
    );
    assert!(
        f.finding.words.contains("checks.cu:170"),
        "{}",
        f.finding.words
    );
    // So carrying on, the block runs again with the warp's lanes in step.
    let report = device
        .carrying_on("generic_warp_tail", 1, 64, &[a, out, elsewhere, 1])
        .expect("a GPU carries on");
    assert_eq!(device.download::<f32>(out, 1), vec![64.0]);
    assert!(
        report.findings[0].words.contains("shared-memory race"),
        "{:?}",
        report.findings
    );
}
