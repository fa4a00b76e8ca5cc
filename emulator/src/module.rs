//! A loaded module: its PTX parsed, its `.const` and `.global` variables
//! placed in device memory, its kernels decoded.

use std::collections::HashMap;
use std::sync::Arc;

use crate::decode;
use crate::heap::Heap;
use crate::ir::Kernel;
use ptx::parser;

pub struct Module {
    pub kernels: Vec<Arc<Kernel>>,
    /// Variable name -> (address, bytes): what `cuModuleGetGlobal` answers.
    pub globals: HashMap<String, (u64, u64)>,
}

impl Module {
    /// Parses and decodes `ptx`, allocating its variables in `heap`. The
    /// error names the PTX line.
    pub fn load(ptx: &str, heap: &mut Heap) -> Result<Module, String> {
        let parsed = parser::parse(ptx).map_err(|e| e.to_string())?;
        let mut globals = HashMap::new();
        let mut addresses = HashMap::new();
        for variable in &parsed.variables {
            if !matches!(variable.space.as_str(), "const" | "global") {
                continue;
            }
            let bytes = variable.element * variable.count.unwrap_or(1);
            let address = heap
                .allocate(
                    bytes,
                    &format!("__{}__ variable {}", variable.space, variable.name),
                )
                .ok_or_else(|| format!("no room for variable {}", variable.name))?;
            // Variables are initialised (zero where the PTX gives no
            // values), as the driver loads them.
            heap.range_to_write(address, bytes);
            if let Some(ptr) = heap.range(address, variable.init.len() as u64) {
                // SAFETY: `ptr` covers init.len() bytes of the fresh allocation.
                unsafe {
                    std::ptr::copy_nonoverlapping(variable.init.as_ptr(), ptr, variable.init.len())
                };
            }
            globals.insert(variable.name.clone(), (address, bytes));
            addresses.insert(variable.name.clone(), address);
        }
        let kernels: Vec<Arc<Kernel>> = parsed
            .kernels
            .iter()
            .map(|k| decode::decode_kernel(&parsed, k, &addresses).map(Arc::new))
            .collect::<Result<_, _>>()?;
        // What ptxas refuses when the driver compiles the PTX.
        for kernel in &kernels {
            if kernel.static_shared > u64::from(crate::device::SHARED_PER_BLOCK_OPTIN) {
                return Err(format!(
                    "kernel {} has {} bytes of static shared memory; a block may have at most {}",
                    kernel.name,
                    kernel.static_shared,
                    crate::device::SHARED_PER_BLOCK_OPTIN
                ));
            }
        }
        Ok(Module { kernels, globals })
    }

    pub fn kernel(&self, name: &str) -> Option<usize> {
        self.kernels.iter().position(|k| k.name == name)
    }
}
