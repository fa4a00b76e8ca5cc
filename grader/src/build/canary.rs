//! The canary: a kernel the grader writes for each student build, with the
//! course kernel's entry names and signatures and a result that differs
//! from the exercise's answer by a mark only its own code knows. The
//! grader compiles it itself ([`compile`]), outside any student's build,
//! and in every run of the student's binary the broker loads it in place
//! of any module that defines the exercise's kernels (`run::brokered`): a
//! host whose report carries the canary's result ran the kernel it
//! launched; one that reports the exercise's exact answer computed it
//! without.
//!
//! Threat model. The student controls every byte of src/*.rs and
//! src/kernel.cu; at build time their code may `include_str!` what the
//! build sandbox shows (never the canary, which is not there), and at run
//! time it can read its own binary and memory (never the canary's PTX,
//! which only the broker holds) and print any report. The grader trusts
//! its own process, the course's code (the reference binaries, the broker,
//! this module's templates in `grader/canary`, never in the student's copy
//! of the course), the sandbox and the driver.
//! The mark is drawn per build from the operating system's randomness (never
//! from the plan's seed, which feedback shows) and baked into the canary as
//! a small random arithmetic program (`canary_mix`): where the result moves
//! and by how much follow from the run's size through that program, so a
//! host must execute the kernel to report the canary's result. The grader
//! never computes the mark itself: it runs the course's reference host code
//! with the same canary PTX and compares (`plan::exercise::canary_agrees`).
//! Residual risk: the canary's results at the positions a program has the
//! canary compute on the GPU are the program's to read; to report the
//! canary's result for a whole run without launching it over the run's
//! input, it would have to invert a ten-step random hash from samples.

use std::io::Read;

use kernels::catalogue::ExerciseId;

/// The canary templates, each the course kernel's contract calling
/// `canary_mix`, in a file named after its exercise (grader/canary/).
const TEMPLATES: [(&str, &str); 8] = [
    ("vecadd-anyN", include_str!("../../canary/vecadd-anyN.cu")),
    ("dot-gm", include_str!("../../canary/dot-gm.cu")),
    ("dot-sm", include_str!("../../canary/dot-sm.cu")),
    ("dot-atomic", include_str!("../../canary/dot-atomic.cu")),
    ("matmul-naive", include_str!("../../canary/matmul-naive.cu")),
    ("matmul-tiled", include_str!("../../canary/matmul-tiled.cu")),
    (
        "memspace-timing",
        include_str!("../../canary/memspace-timing.cu"),
    ),
    (
        "streams-overlap",
        include_str!("../../canary/streams-overlap.cu"),
    ),
];

/// The canary's template for `id` (every exercise of the catalogue has
/// one: a test says so).
fn template(id: ExerciseId) -> &'static str {
    TEMPLATES
        .iter()
        .find(|(name, _)| *name == id.name())
        .map_or("", |(_, text)| text)
}

/// Bytes of the operating system's randomness.
pub(crate) fn os_random(bytes: &mut [u8]) -> std::io::Result<()> {
    std::fs::File::open("/dev/urandom")?.read_exact(bytes)
}

/// One step of the mark's arithmetic on the 64-bit `h`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    XorShift(u32),
    Multiply(u64),
    Add(u64),
    Xor(u64),
    /// `h ^= h << s` (not a rotate: nvcc makes rotates funnel shifts,
    /// which the CPU emulator does not run).
    XorShiftLeft(u32),
}

impl Step {
    fn draw(word: u64) -> Step {
        let constant = word >> 3;
        let shift = 7 + (word >> 3) as u32 % 50;
        match word & 7 {
            0 | 5 => Step::XorShift(shift),
            1 | 6 => Step::Multiply(constant | 1),
            2 => Step::Add(constant),
            3 => Step::Xor(constant),
            _ => Step::XorShiftLeft(shift),
        }
    }

    fn c(self) -> String {
        match self {
            Step::XorShift(s) => format!("    h ^= h >> {s};\n"),
            Step::Multiply(k) => format!("    h *= {k:#x}ull;\n"),
            Step::Add(k) => format!("    h += {k:#x}ull;\n"),
            Step::Xor(k) => format!("    h ^= {k:#x}ull;\n"),
            Step::XorShiftLeft(s) => format!("    h ^= h << {s};\n"),
        }
    }
}

/// Steps in the mark's program: each of them changes which output moves.
const STEPS: usize = 10;

/// The canary's CUDA source for `id`, with a mark drawn now from the
/// operating system's randomness.
pub fn source(id: ExerciseId) -> std::io::Result<String> {
    let mut random = [0u8; 8 * (STEPS + 1)];
    os_random(&mut random)?;
    let words: Vec<u64> = random
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    Ok(with_mark(id, &words))
}

/// The canary for `id` with a mark drawn now, compiled to PTX at `ptx`
/// (its source beside it, `.cu`).
pub fn compile(id: ExerciseId, ptx: &std::path::Path) -> crate::error::Result<std::path::PathBuf> {
    let cu = ptx.with_extension("cu");
    let text = source(id).map_err(crate::error::Error::io(std::path::Path::new(
        "/dev/urandom",
    )))?;
    std::fs::write(&cu, text).map_err(crate::error::Error::io(&cu))?;
    let dir = cu.parent().unwrap_or(std::path::Path::new("."));
    let arch =
        kernels::nvcc::arch_from_env().unwrap_or_else(|_| kernels::nvcc::DEFAULT_ARCH.to_owned());
    kernels::nvcc::compile_ptx(dir, &cu, ptx, &arch)
        .map_err(|err| crate::error::Error::Tool(format!("compiling the {id} canary: {err}")))?;
    Ok(ptx.to_owned())
}

/// The canary's source for `id` with the mark that `words` draw: a first
/// word folded into the input, then one step per word, ending in a mix
/// that spreads every bit.
fn with_mark(id: ExerciseId, words: &[u64]) -> String {
    let mut mix = String::from(
        "__device__ __forceinline__ unsigned long long canary_mix(unsigned long long h)\n{\n",
    );
    mix += &format!("    h ^= {:#x}ull;\n", words[0]);
    for &word in &words[1..] {
        mix += &Step::draw(word).c();
    }
    mix += "    h ^= h >> 31;\n    h *= 0x9e3779b97f4a7c15ull;\n    h ^= h >> 29;\n    return h;\n}\n\n";
    mix + template(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::catalogue::ALL_IDS;

    #[test]
    fn every_exercise_has_a_canary_template() {
        for id in ALL_IDS {
            assert!(template(id).contains("canary_mix"), "{id}");
        }
    }

    #[test]
    fn two_builds_get_different_marks() {
        let (a, b) = (
            source(ExerciseId::VecaddAnyN).unwrap(),
            source(ExerciseId::VecaddAnyN).unwrap(),
        );
        assert_ne!(a, b);
        assert!(a.contains("canary_mix(unsigned long long h)"), "{a}");
    }

    /// Each canary compiles, and the course's host code can launch it: its
    /// entries are the course kernel's, parameter for parameter.
    #[test]
    fn every_canary_has_the_course_kernels_signatures() {
        let dir = tempfile::tempdir().unwrap();
        let course = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for id in ALL_IDS {
            let cu = dir.path().join(format!("{id}.cu"));
            let ptx = dir.path().join(format!("{id}.ptx"));
            std::fs::write(&cu, source(id).unwrap()).unwrap();
            let course_ptx = dir.path().join(format!("{id}-course.ptx"));
            for (from, to) in [
                (cu.clone(), ptx.clone()),
                (
                    course
                        .join("solutions")
                        .join(id.name())
                        .join("src/kernel.cu"),
                    course_ptx.clone(),
                ),
            ] {
                let status = std::process::Command::new("nvcc")
                    .args(["--ptx", "-arch=compute_75", "-o"])
                    .arg(&to)
                    .arg(&from)
                    .status()
                    .unwrap();
                assert!(status.success(), "{id}: nvcc failed on {}", from.display());
            }
            let read = |p: &std::path::Path| std::fs::read_to_string(p).unwrap();
            assert_eq!(
                crate::build::ptx_check::signature_mismatch(&read(&ptx), &read(&course_ptx)),
                None,
                "{id}"
            );
        }
    }
}
