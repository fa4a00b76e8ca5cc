//! Compiles src/kernel.cu to PTX in OUT_DIR; src/main.rs embeds it.
fn main() {
    kernels::nvcc::build_kernel();
}
