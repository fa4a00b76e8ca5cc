//! What the emulator records for a profiler's pictures
//! (`kernels::emulator_accesses`) on kernels whose accesses can be worked
//! out by hand: ptx/counters.cu, each launch recorded through the driver's
//! own `launch::run`. Every expected figure is derived in its comment from
//! the kernel's source, never read off the emulator's output.

mod device;

use device::{Device, counters_cu_line as line_of};
use kernels::emulator_accesses::{Kind, LaunchAccesses, Space, Written};

#[test]
fn a_coalesced_warp_reads_32_consecutive_floats_in_4_sectors() {
    let mut device = Device::counters_kernels();
    let input = device.upload(&[1.0f32; 128]);
    let output = device.allocate(128 * 4);
    let recorded = device
        .recorded("coalesced_copy", 2, 64, &[input, output], None)
        .unwrap();
    assert_eq!(
        (recorded.kernel.as_str(), recorded.grid, recorded.block),
        ("coalesced_copy", [2, 1, 1], [64, 1, 1])
    );
    // One load and one store, both on the copy's line, in that order.
    let line = line_of("out[i] = in[i];");
    assert_eq!(recorded.warp.len(), 2);
    let load = &recorded.warp[0];
    assert_eq!(
        (load.line, load.space, load.kind, load.bytes),
        (Some(line), Space::Global, Kind::Load, 4)
    );
    assert_eq!(recorded.warp[1].kind, Kind::Store);
    // Block 0's warp 0 is threads 0 to 31: lane l reads in[l], at
    // input + 4 l. 32 x 4 bytes = 128 bytes from a 256-byte aligned
    // allocation: sectors input/32 to input/32 + 3, nothing wasted.
    let lanes: Vec<(u8, u64)> = load.lanes.iter().map(|l| (l.lane, l.address)).collect();
    let expected: Vec<(u8, u64)> = (0..32).map(|l| (l, input + 4 * u64::from(l))).collect();
    assert_eq!(lanes, expected);
    assert_eq!(
        load.sectors(),
        (input / 32..input / 32 + 4).collect::<Vec<_>>()
    );
    assert_eq!((load.ideal_sectors(), load.excess()), (4, 0));
    assert!(recorded.output.is_none(), "no output named");
}

#[test]
fn a_strided_warp_touches_a_sector_a_lane() {
    let mut device = Device::counters_kernels();
    let input = device.upload(&vec![1.0f32; 32 * 128]);
    let output = device.allocate(128 * 4);
    let recorded = device
        .recorded("strided_copy", 2, 64, &[input, output], None)
        .unwrap();
    // Lane l reads in[32 l], 128 bytes apart: 32 sectors, where the 128
    // bytes asked for would fit in 4; the picture's load is this one.
    let load = recorded.costliest(Space::Global).unwrap();
    assert_eq!(load.line, Some(line_of("out[i] = in[32 * i];")));
    assert_eq!(load.kind, Kind::Load);
    assert_eq!(load.lanes[31].address, input + 4 * 32 * 31);
    assert_eq!((load.sectors().len(), load.ideal_sectors()), (32, 4));
}

#[test]
fn a_column_of_a_shared_tile_is_every_lane_in_one_bank() {
    let mut device = Device::counters_kernels();
    let output = device.allocate(64 * 4);
    let recorded = device
        .recorded("shared_column", 1, 64, &[output], None)
        .unwrap();
    // Warp 0 reads tile[lane][0]: word 32 lane, bank 0 for every lane, 32
    // different words: 32 wavefronts where one would do.
    let column = recorded.costliest(Space::Shared).unwrap();
    assert_eq!(column.line, Some(line_of("tile[lane][warp % 32];")));
    assert_eq!(column.kind, Kind::Load);
    let offsets: Vec<u64> = column.lanes.iter().map(|l| l.address).collect();
    let base = offsets[0];
    assert_eq!(offsets, (0..32).map(|l| base + 128 * l).collect::<Vec<_>>());
    assert_eq!(column.wavefronts(), (32, 1));
    // The first row's store, lane l to word l: 32 banks, one wavefront.
    let row = recorded
        .warp
        .iter()
        .find(|a| a.space == Space::Shared && a.kind == Kind::Store)
        .unwrap();
    assert_eq!(row.wavefronts(), (1, 1));
    // Padded to 33 words a row, lane l's word 33 l is in bank l.
    let padded = device
        .recorded("shared_padded_column", 1, 64, &[output], None)
        .unwrap();
    assert_eq!(
        padded.costliest(Space::Shared).unwrap().wavefronts(),
        (1, 1)
    );
}

#[test]
fn a_grid_without_a_loop_leaves_every_element_past_it_unwritten() {
    let mut device = Device::counters_kernels();
    let input = device.upload(&[1.0f32; 200]);
    let output = device.allocate(200 * 4);
    // coalesced_copy has no grid-stride loop: 2 blocks of 64 threads write
    // out[0] to out[127], block b elements 64 b to 64 b + 63; elements
    // 128 to 199, past blocks x threads, no thread writes.
    let recorded = device
        .recorded(
            "coalesced_copy",
            2,
            64,
            &[input, output],
            Some((output, 200 * 4)),
        )
        .unwrap();
    let written = recorded.output.as_ref().unwrap();
    assert_eq!((written.elements, written.element_bytes), (200, 4));
    assert_eq!(
        written.runs,
        vec![
            Written {
                from: 0,
                count: 64,
                block: Some(0)
            },
            Written {
                from: 64,
                count: 64,
                block: Some(1)
            },
            Written {
                from: 128,
                count: 72,
                block: None
            },
        ]
    );
    assert_eq!(written.unwritten(), 72);
    // Only the named buffer counts: the loads of `in` mark nothing, and
    // the recording reads back through its lines unchanged.
    assert_eq!(
        LaunchAccesses::parse_all(&recorded.to_string()),
        vec![recorded]
    );
}

#[test]
fn recording_leaves_the_kernel_s_results_as_they_were() {
    let mut device = Device::counters_kernels();
    let input = device.upload(&(0..128).map(|i| i as f32).collect::<Vec<_>>());
    let output = device.allocate(128 * 4);
    device
        .recorded(
            "coalesced_copy",
            2,
            64,
            &[input, output],
            Some((output, 128 * 4)),
        )
        .unwrap();
    let copied: Vec<f32> = device.download(output, 128);
    assert_eq!(copied, (0..128).map(|i| i as f32).collect::<Vec<_>>());
}
