//! The emulator's hardware counters (`kernels::emulator_counters` defines
//! them as Nsight Compute does) on kernels whose counts can be worked out
//! by hand: ptx/counters.cu, compiled by nvcc 11.8, each launch counted
//! through the driver's own `launch::run`. Every expected figure below is
//! derived in its comment from the kernel's access pattern, never read
//! off the emulator's output.

mod device;

use device::{Device, counters_cu_line as line_of};
use kernels::emulator_counters::{LaunchCounters, Traffic};

/// counters.ptx as if nvcc had compiled a `kernel.cu`, so counts have
/// their `kernel.cu` lines.
fn traffic(requests: u64, transactions: u64, ideal: u64) -> Traffic {
    Traffic {
        requests,
        transactions,
        ideal,
    }
}

/// The counts of `kernel.cu` line `line`.
fn at_line(counters: &LaunchCounters, line: u32) -> kernels::emulator_counters::Counts {
    counters
        .lines
        .iter()
        .find(|l| l.line == line)
        .unwrap_or_else(|| panic!("line {line} counted: {counters:?}"))
        .counts
}

#[test]
fn a_coalesced_copy_takes_four_sectors_a_request() {
    let mut device = Device::counters_kernels();
    let input = device.upload(&[1.0f32; 128]);
    let output = device.allocate(128 * 4);
    // 2 blocks of 64 threads: 4 warps, one load and one store each. A
    // warp's 32 consecutive floats are 128 bytes: 4 sectors of 32, the
    // ideal too.
    let counted = device
        .counted("coalesced_copy", 2, 64, &[input, output])
        .unwrap();
    assert_eq!(counted.total.global_load, traffic(4, 16, 16));
    assert_eq!(counted.total.global_store, traffic(4, 16, 16));
    assert_eq!(counted.total.shared(), Traffic::default());
    // Both on the copy's line, every lane active everywhere.
    let copy = at_line(&counted, line_of("out[i] = in[i];"));
    assert_eq!(copy.global_load, traffic(4, 16, 16));
    assert_eq!(counted.total.lanes, 32 * counted.total.inst);
    assert_eq!(counted.costliest(), None);
    assert_eq!((counted.grid, counted.block), ([2, 1, 1], [64, 1, 1]));
}

#[test]
fn a_stride_of_32_words_takes_a_sector_per_lane() {
    let mut device = Device::counters_kernels();
    let input = device.upload(&vec![1.0f32; 32 * 128]);
    let output = device.allocate(128 * 4);
    // Lane i reads word 32 i: 128 bytes apart, so each of a warp's 32
    // lanes touches a sector of its own: 4 warps x 32 = 128 sectors, where
    // the 4 x 128 bytes they read would fit in 4 x 4 = 16. The stores stay
    // coalesced.
    let counted = device
        .counted("strided_copy", 2, 64, &[input, output])
        .unwrap();
    assert_eq!(counted.total.global_load, traffic(4, 128, 16));
    assert_eq!(counted.total.global_store, traffic(4, 16, 16));
    let line = line_of("out[i] = in[32 * i];");
    let (costly, _) = counted.costliest().expect("the strided line costs");
    assert_eq!(costly.line, line);
    assert_eq!(costly.counts.excess(), 128 - 16);
}

#[test]
fn a_float4_copy_takes_sixteen_sectors_a_request() {
    let mut device = Device::counters_kernels();
    let input = device.upload(&[1.0f32; 4 * 64]);
    let output = device.allocate(4 * 64 * 4);
    // 64 threads, 2 warps; a lane's 16 bytes make a warp's 512 bytes, 16
    // sectors: one request each, as one vector instruction.
    let counted = device
        .counted("vector_copy", 1, 64, &[input, output])
        .unwrap();
    assert_eq!(counted.total.global_load, traffic(2, 32, 32));
    assert_eq!(counted.total.global_store, traffic(2, 32, 32));
}

#[test]
fn a_column_of_a_shared_tile_is_a_32_way_conflict() {
    let mut device = Device::counters_kernels();
    let output = device.allocate(64 * 4);
    // 64 threads: 2 warps. The rows are written 16 times by each warp, one
    // row a warp instruction, lane i to word i: 32 requests of one
    // wavefront. Then each warp reads tile[lane][warp]: word 32 lane +
    // warp, in bank warp for every lane, 32 distinct words: 32 wavefronts
    // where one would do, a request each.
    let counted = device.counted("shared_column", 1, 64, &[output]).unwrap();
    assert_eq!(counted.total.shared_store, traffic(32, 32, 32));
    assert_eq!(counted.total.shared_load, traffic(2, 64, 2));
    assert_eq!(counted.shared, 32 * 32 * 4);
    let line = line_of("tile[lane][warp % 32];");
    let (costly, _) = counted.costliest().expect("the column costs");
    assert_eq!(
        (costly.line, costly.counts.shared_load.excess()),
        (line, 62)
    );
    // Padded to 33 words a row, word 33 lane + warp is in bank
    // (lane + warp) mod 32: every lane its own bank, one wavefront.
    let padded = device
        .counted("shared_padded_column", 1, 64, &[output])
        .unwrap();
    assert_eq!(padded.total.shared_load, traffic(2, 2, 2));
    assert_eq!(padded.shared, 32 * 33 * 4);
}

#[test]
fn one_shared_word_for_every_lane_is_a_broadcast() {
    let mut device = Device::counters_kernels();
    let output = device.allocate(64 * 4);
    // Only warp 0 stores (threadIdx.x < 32): one request, its 32 words in
    // 32 banks. Both warps read values[5]: one word, one wavefront each.
    let counted = device
        .counted("shared_broadcast", 1, 64, &[output])
        .unwrap();
    assert_eq!(counted.total.shared_store, traffic(1, 1, 1));
    assert_eq!(counted.total.shared_load, traffic(2, 2, 2));
}

#[test]
fn odd_lanes_alone_in_a_loop_run_at_half_a_warp() {
    let mut device = Device::counters_kernels();
    let output = device.allocate(64 * 4);
    // Odd threads loop 8 times, even ones skip it: the loop body's
    // instructions run with 16 lanes of each warp's 32.
    let counted = device.counted("divergent", 1, 64, &[output, 8]).unwrap();
    let body = at_line(&counted, line_of("v = v * 0.5f + 1.0f;"));
    assert!(body.inst > 0);
    assert_eq!(body.lanes, 16 * body.inst, "{body:?}");
    // The store after the branch joins again: all 32 lanes, one request
    // a warp, 4 sectors.
    let store = at_line(&counted, line_of("out[i] = v;"));
    assert_eq!(store.lanes, 32 * store.inst, "{store:?}");
    assert_eq!(store.global_store, traffic(2, 8, 8));
    // Without the loop (0 iterations), no lane idles anywhere.
    let straight = device.counted("divergent", 1, 64, &[output, 0]).unwrap();
    assert_eq!(straight.total.lanes, 32 * straight.total.inst);
    assert!(counted.total.active_lanes().unwrap() < 32.0);
}

#[test]
fn declared_registers_count_32_bit_words_and_no_predicates() {
    let mut device = Device::counters_kernels();
    let output = device.allocate(32 * 4);
    // divergent's PTX declares %p<9>, %f<18>, %r<16> and %rd<5>: 18 + 16
    // + 2 x 5 = 44 words, the predicates none.
    let counted = device.counted("divergent", 1, 32, &[output, 0]).unwrap();
    assert_eq!(counted.registers, 44);
}

#[test]
fn the_lines_round_trip_through_the_wire_grammar() {
    let mut device = Device::counters_kernels();
    let output = device.allocate(64 * 4);
    let counted = device.counted("shared_column", 1, 64, &[output]).unwrap();
    assert_eq!(
        LaunchCounters::parse_all(&counted.to_string()),
        vec![counted]
    );
}
