//! Every kernel nvcc made of the course's solutions loads and decodes with
//! no instruction the emulator lacks: the PTX built here (nvcc 11.8, under
//! target/), and PTX from another nvcc when CUDA_COURSE_PTX_DIR names a
//! folder of `.ptx` files (the GPU machine's nvcc 13, brought back).

use std::path::{Path, PathBuf};

use emulator::heap::Heap;
use emulator::module::Module;

fn built_ptx() -> Vec<PathBuf> {
    let exe = std::env::current_exe().expect("test executable path");
    let build = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .join("build");
    let Ok(entries) = std::fs::read_dir(build) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains("-solution-"))
        .map(|e| e.path().join("out/kernel.ptx"))
        .filter(|p| p.exists())
        .collect()
}

fn check(path: &Path) {
    let text = std::fs::read_to_string(path).expect("PTX readable");
    let module = Module::load(&text, &mut Heap::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(!module.kernels.is_empty(), "{}: no kernels", path.display());
    for kernel in &module.kernels {
        assert!(
            kernel.unsupported.is_empty(),
            "{} kernel {}: {:?}",
            path.display(),
            kernel.name,
            kernel.unsupported
        );
    }
}

#[test]
fn the_solutions_ptx_decodes_completely() {
    let mut paths = built_ptx();
    // The solutions as the H100 machine's nvcc 13.0 compiled them
    // (tests/ptx/nvcc13/VERSION): a newer nvcc's PTX must decode too. A
    // student's copy of the course has neither the solutions nor these.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let nvcc13 = root.join("tests/ptx/nvcc13");
    let has_solutions = root.join("../solutions").is_dir();
    if has_solutions {
        let mut newer: Vec<PathBuf> = std::fs::read_dir(&nvcc13)
            .expect("tests/ptx/nvcc13 holds nvcc 13's PTX")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
            .collect();
        assert_eq!(
            newer.len(),
            8,
            "one PTX file per solution in {}",
            nvcc13.display()
        );
        paths.append(&mut newer);
    }
    if let Some(dir) = std::env::var_os("CUDA_COURSE_PTX_DIR") {
        let found: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("CUDA_COURSE_PTX_DIR is a folder")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
            .collect();
        assert!(
            !found.is_empty(),
            "no .ptx files in {}",
            Path::new(&dir).display()
        );
        paths.extend(found);
    }
    for path in &paths {
        check(path);
    }
    eprintln!("{} PTX files decoded", paths.len());
}
