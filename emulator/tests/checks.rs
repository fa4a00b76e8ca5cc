//! Kernels compiled by nvcc 11.8 (ptx/checks.cu) run through the emulator's
//! own API: correct kernels give the values computed here, and each mutant
//! is stopped with the fault it has, its thread and its `checks.cu` line.

use std::sync::Arc;

use emulator::driver::codes;
use emulator::exec::launch::{self, Fault, Shape};
use emulator::memory::Heap;
use emulator::module::Module;

const PTX: &str = include_str!("ptx/checks.ptx");

struct Device {
    heap: Heap,
    module: Module,
}

impl Device {
    fn new() -> Device {
        let mut heap = Heap::default();
        let module = Module::load(PTX, &mut heap).expect("checks.ptx loads");
        Device { heap, module }
    }

    fn upload<T: Copy>(&mut self, data: &[T]) -> u64 {
        let bytes = std::mem::size_of_val(data) as u64;
        let address = self.heap.allocate(bytes, "test").unwrap();
        let ptr = self.heap.range(address, bytes).unwrap();
        // SAFETY: `ptr` covers `bytes` bytes of the fresh allocation.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr().cast::<u8>(), ptr, bytes as usize) };
        address
    }

    fn download<T: Copy + Default>(&self, address: u64, n: usize) -> Vec<T> {
        let mut out = vec![T::default(); n];
        let bytes = std::mem::size_of_val(&out[..]) as u64;
        let ptr = self.heap.range(address, bytes).unwrap();
        // SAFETY: `ptr` covers `bytes` bytes of a live allocation.
        unsafe {
            std::ptr::copy_nonoverlapping(ptr, out.as_mut_ptr().cast::<u8>(), bytes as usize)
        };
        out
    }

    /// Launches `name` with parameters given as 8-byte values (pointers) or
    /// 4-byte ones (ints), packed by the kernel's own layout.
    fn launch(&self, name: &str, grid: u32, block: u32, args: &[u64]) -> Result<(), Fault> {
        let kernel = &self.module.kernels[self.module.kernel(name).expect("kernel exists")];
        let mut params = vec![0u8; kernel.param_bytes];
        for (&(offset, size), value) in kernel.params.iter().zip(args) {
            params[offset..offset + size].copy_from_slice(&value.to_le_bytes()[..size]);
        }
        let shape = Shape {
            grid: [grid, 1, 1],
            block: [block, 1, 1],
            dynamic_shared: 0,
        };
        launch::launch(kernel, shape, params, self.heap.snapshot()).map(|_| ())
    }
}

fn fault(result: Result<(), Fault>) -> Fault {
    result.expect_err("the launch must fail")
}

#[test]
fn a_missing_syncthreads_is_a_shared_memory_race_with_its_line() {
    let mut device = Device::new();
    let a = device.upload(&[1.0f32; 64]);
    let out = device.upload(&[0.0f32; 1]);
    let f = fault(device.launch("shared_race", 1, 64, &[a, out]));
    assert_eq!(f.code, codes::LAUNCH_FAILED);
    assert!(f.message.contains("shared-memory race"), "{}", f.message);
    // Thread 0 reads cache[1] (line 13) before thread 1 writes it (line 9).
    assert!(
        f.message
            .contains("read it (`ld.shared.f32` at checks.cu:13"),
        "{}",
        f.message
    );
    assert!(
        f.message
            .contains("wrote it (`st.shared.f32` at checks.cu:9"),
        "{}",
        f.message
    );
}

#[test]
fn every_block_adding_to_one_word_is_a_global_conflict() {
    let mut device = Device::new();
    let a = device.upload(&[1.0f32; 4]);
    let c = device.upload(&[0.0f32; 1]);
    let f = fault(device.launch("global_conflict", 4, 32, &[a, c]));
    assert!(
        f.message.contains("global-memory conflict"),
        "{}",
        f.message
    );
    assert!(f.message.contains("checks.cu:19"), "{}", f.message);
    // One block alone is fine.
    device.launch("global_conflict", 1, 32, &[a, c]).unwrap();
}

#[test]
fn running_off_the_end_of_an_allocation_is_named() {
    let mut device = Device::new();
    let a = device.upload(&[1.0f32; 100]);
    let c = device.upload(&[0.0f32; 100]);
    let f = fault(device.launch("out_of_bounds", 1, 128, &[a, c, 100]));
    assert_eq!(f.code, codes::ILLEGAL_ADDRESS);
    assert!(
        f.message.contains("out-of-bounds global access of 4 bytes"),
        "{}",
        f.message
    );
    assert!(f.message.contains("thread (100,0,0)"), "{}", f.message);
    assert!(
        f.message.contains("400 bytes past the start of a 400-byte"),
        "{}",
        f.message
    );
    assert!(f.message.contains("checks.cu:24"), "{}", f.message);
    device
        .launch("out_of_bounds", 1, 100, &[a, c, 100])
        .unwrap();
    assert_eq!(device.download::<f32>(c, 100), vec![101.0; 100]);
}

#[test]
fn a_misaligned_read_is_a_misaligned_address() {
    let mut device = Device::new();
    let a = device.upload(&[1.0f32; 40]);
    let c = device.upload(&[0.0f32; 32]);
    let f = fault(device.launch("misaligned", 1, 32, &[a, c]));
    assert_eq!(f.code, codes::MISALIGNED_ADDRESS);
    assert!(f.message.contains("checks.cu:29"), "{}", f.message);
}

#[test]
fn threads_at_different_barriers_are_reported() {
    let mut device = Device::new();
    let c = device.upload(&[0.0f32; 64]);
    let f = fault(device.launch("divergent_barrier", 1, 64, &[c]));
    assert!(
        f.message.contains("barrier not reached by every thread"),
        "{}",
        f.message
    );
    assert!(
        f.message.contains("checks.cu:36") && f.message.contains("checks.cu:39"),
        "{}",
        f.message
    );
}

#[test]
fn shuffles_and_ballots_compute_what_the_warp_would() {
    let mut device = Device::new();
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
    let mut device = Device::new();
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
    let mut device = Device::new();
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
fn an_unsupported_instruction_stops_the_launch_and_is_named() {
    let mut device = Device::new();
    let c = device.upload(&[1.5f32]);
    let f = fault(device.launch("prints", 1, 1, &[c]));
    assert_eq!(f.code, codes::ILLEGAL_INSTRUCTION);
    assert!(
        f.message.contains("is not supported by the CPU emulator"),
        "{}",
        f.message
    );
    assert!(f.message.contains("PTX line"), "{}", f.message);
}

#[test]
fn the_heap_snapshot_keeps_allocations_alive() {
    let device = Device::new();
    let snapshot = device.heap.snapshot();
    assert!(snapshot.iter().all(|a| Arc::strong_count(a) >= 2));
}
