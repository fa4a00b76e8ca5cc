//! A device for the emulator's tests: a heap, a module of test kernels
//! loaded into it, and launches through the driver's own `launch::run`
//! (shape checked, faults and findings worded), strict or carrying on as
//! the grader's runs do.

#![allow(dead_code, reason = "each test uses its own part of it")]

use emulator::driver::fault::Fault;
use emulator::driver::launch::{self, Launched};
use emulator::exec::launch::Shape;
use emulator::heap::Heap;
use emulator::module::Module;

pub struct Device {
    pub heap: Heap,
    pub module: Module,
}

impl Device {
    /// ptx/counters.cu's kernels, as if nvcc had compiled a `kernel.cu`, so
    /// counts and accesses have their `kernel.cu` lines.
    pub fn counters_kernels() -> Device {
        Device::new(&include_str!("../ptx/counters.ptx").replace("counters.cu\"", "kernel.cu\""))
    }

    pub fn new(ptx: &str) -> Device {
        let mut heap = Heap::default();
        let module = Module::load(ptx, &mut heap).expect("the test's PTX loads");
        Device { heap, module }
    }

    /// A copy of `data` on the device (written, as cuMemcpyHtoD writes).
    pub fn upload<T: Copy>(&mut self, data: &[T]) -> u64 {
        let bytes = std::mem::size_of_val(data) as u64;
        let address = self.heap.allocate(bytes, "test").unwrap();
        let ptr = self.heap.range_to_write(address, bytes).unwrap();
        // SAFETY: `ptr` covers `bytes` bytes of the fresh allocation.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr().cast::<u8>(), ptr, bytes as usize) };
        address
    }

    pub fn download<T: Copy + Default>(&self, address: u64, n: usize) -> Vec<T> {
        let mut out = vec![T::default(); n];
        let bytes = std::mem::size_of_val(&out[..]) as u64;
        let ptr = self.heap.range(address, bytes).unwrap();
        // SAFETY: `ptr` covers `bytes` bytes of a live allocation.
        unsafe {
            std::ptr::copy_nonoverlapping(ptr, out.as_mut_ptr().cast::<u8>(), bytes as usize)
        };
        out
    }

    /// An allocation nothing has written (cuMemAlloc alone).
    pub fn allocate(&mut self, bytes: u64) -> u64 {
        self.heap.allocate(bytes, "cuMemAlloc").unwrap()
    }

    pub fn kernel(&self, name: &str) -> &emulator::ir::Kernel {
        &self.module.kernels[self.module.kernel(name).expect("kernel exists")]
    }

    /// Launches `name` with parameters given as 8-byte values (pointers) or
    /// 4-byte ones (ints), packed by the kernel's own layout.
    pub fn launch(&self, name: &str, grid: u32, block: u32, args: &[u64]) -> Result<(), Fault> {
        self.run(false, name, grid, block, args).map(|_| ())
    }

    /// `launch`, carrying on past what a GPU does, as the grader's runs do
    /// (`exec::memory::carry_on`), with the launch's report.
    pub fn carrying_on(
        &self,
        name: &str,
        grid: u32,
        block: u32,
        args: &[u64],
    ) -> Result<Launched, Fault> {
        self.run(true, name, grid, block, args)
    }

    pub fn run(
        &self,
        carry_on: bool,
        name: &str,
        grid: u32,
        block: u32,
        args: &[u64],
    ) -> Result<Launched, Fault> {
        let kernel = &self.module.kernels[self.module.kernel(name).expect("kernel exists")];
        let mut params = vec![0u8; kernel.param_bytes];
        for (&(offset, size), value) in kernel.params.iter().zip(args) {
            params[offset..offset + size].copy_from_slice(&value.to_le_bytes()[..size]);
        }
        let shape = Shape::linear(grid, block);
        launch::run(
            kernel,
            shape,
            params,
            self.heap.snapshot(),
            carry_on,
            false,
            None,
        )
    }

    /// `launch`, counting what the hardware would, by `kernel.cu` line
    /// (`driver::counters`).
    pub fn counted(
        &self,
        name: &str,
        grid: u32,
        block: u32,
        args: &[u64],
    ) -> Result<kernels::emulator_counters::LaunchCounters, Fault> {
        let kernel = &self.module.kernels[self.module.kernel(name).expect("kernel exists")];
        let mut params = vec![0u8; kernel.param_bytes];
        for (&(offset, size), value) in kernel.params.iter().zip(args) {
            params[offset..offset + size].copy_from_slice(&value.to_le_bytes()[..size]);
        }
        let shape = Shape::linear(grid, block);
        let launched = launch::run(
            kernel,
            shape,
            params,
            self.heap.snapshot(),
            false,
            true,
            None,
        )?;
        let by_pc = launched.counts.expect("a counted launch has counts");
        Ok(emulator::driver::counters::launch_counters(
            kernel, shape, &by_pc,
        ))
    }

    /// `launch`, recording what a profiler's pictures show
    /// (`driver::accesses`), with the writers of `output` (address and
    /// bytes, in 4-byte elements) where one is named.
    pub fn recorded(
        &self,
        name: &str,
        grid: u32,
        block: u32,
        args: &[u64],
        output: Option<(u64, u64)>,
    ) -> Result<kernels::emulator_accesses::LaunchAccesses, Fault> {
        use emulator::exec::schedule::accesses::{Ask, Output};
        let kernel = &self.module.kernels[self.module.kernel(name).expect("kernel exists")];
        let mut params = vec![0u8; kernel.param_bytes];
        for (&(offset, size), value) in kernel.params.iter().zip(args) {
            params[offset..offset + size].copy_from_slice(&value.to_le_bytes()[..size]);
        }
        let shape = Shape::linear(grid, block);
        let ask = Ask {
            output: output.map(|(base, bytes)| Output {
                base,
                bytes,
                element_bytes: 4,
            }),
        };
        let launched = launch::run(
            kernel,
            shape,
            params,
            self.heap.snapshot(),
            false,
            false,
            Some(ask),
        )?;
        let recorded = launched
            .recorded
            .expect("a recorded launch has a recording");
        Ok(emulator::driver::accesses::launch_accesses(
            kernel, shape, &recorded,
        ))
    }
}

/// The line of ptx/counters.cu that holds `text`, 1-based.
pub fn counters_cu_line(text: &str) -> u32 {
    let source = include_str!("../ptx/counters.cu");
    let index = source
        .lines()
        .position(|l| l.contains(text))
        .unwrap_or_else(|| panic!("counters.cu has `{text}`"));
    index as u32 + 1
}
