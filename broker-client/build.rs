//! Names the cdylib `libcuda.so.1` inside (its soname), so the dynamic loader
//! accepts it in place of the driver's library when it is first on
//! `LD_LIBRARY_PATH` under that name.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcuda.so.1");
    println!("cargo:rerun-if-changed=build.rs");
}
