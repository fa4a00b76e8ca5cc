//! Where a grading's kernels run: on an NVIDIA GPU when one is usable here
//! (as `scripts/cuda-runner` decides it), else, or with `--emulate`, on the
//! CPU emulator the bundle carries, checked against its digest before any
//! run loads it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::build::bundle::Bundle;
use crate::build::emulator_library;
use crate::error::{Error, Result};

/// The environment variable naming the nvidia-smi binary to ask (tests
/// name a missing one to stand for a machine without a GPU).
pub const NVIDIA_SMI_ENV: &str = "GRADER_NVIDIA_SMI";

/// Whether `nvidia-smi -L` lists a GPU: the test `scripts/cuda-runner` makes
/// ($GRADER_NVIDIA_SMI names another nvidia-smi).
pub fn gpu_usable() -> bool {
    let smi = std::env::var_os(NVIDIA_SMI_ENV).unwrap_or_else(|| "nvidia-smi".into());
    lists_a_gpu(Path::new(&smi))
}

fn lists_a_gpu(smi: &Path) -> bool {
    Command::new(smi)
        .arg("-L")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|out| {
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .any(|l| l.starts_with("GPU "))
        })
}

/// Whether to grade on the emulator: `--emulate`, `--no-emulate`, or (with
/// neither) whenever no GPU is usable. `--no-emulate` without a GPU is an
/// error that says what to do, so nobody is graded zero for want of one.
pub fn choose(emulate: bool, no_emulate: bool) -> Result<bool> {
    decide(emulate, no_emulate, gpu_usable)
}

fn decide(emulate: bool, no_emulate: bool, gpu: impl Fn() -> bool) -> Result<bool> {
    if emulate {
        return Ok(true);
    }
    let gpu = gpu();
    if no_emulate && !gpu {
        return Err(Error::NoDevice(
            "--no-emulate: no NVIDIA GPU is usable here (`nvidia-smi -L` lists none), so every \
             run would fail; grade on a machine with a GPU, or drop --no-emulate to grade on the \
             CPU emulator"
                .to_owned(),
        ));
    }
    Ok(!gpu)
}

/// The emulator library runs load when `emulate`, checked against the
/// bundle's record of it; None on a GPU.
pub fn driver(bundle_dir: &Path, bundle: &Bundle, emulate: bool) -> Result<Option<PathBuf>> {
    if !emulate {
        return Ok(None);
    }
    emulator_library::verified(bundle_dir, bundle.emulator.as_ref()).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_gpu_the_default_is_the_emulator_and_no_emulate_says_what_to_do() {
        assert!(!lists_a_gpu(Path::new("/nonexistent/nvidia-smi")));
        assert!(decide(false, false, || false).unwrap());
        assert!(!decide(false, false, || true).unwrap());
        assert!(decide(true, false, || true).unwrap());
        assert!(!decide(false, true, || true).unwrap());
        let err = decide(false, true, || false).unwrap_err();
        assert!(matches!(err, Error::NoDevice(_)), "{err}");
        let err = err.to_string();
        assert!(
            err.contains("no NVIDIA GPU") && err.contains("drop --no-emulate"),
            "{err}"
        );
    }
}
