//! Build helper: finds `nvcc` and compiles an exercise's `src/kernel.cu` to PTX
//! in `OUT_DIR`. Standard library only, so a build script can use it without
//! linking cust or libcuda.

use std::env;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

/// The virtual architecture the PTX targets unless [`ARCH_ENV`] says otherwise.
/// compute_75 (Turing) is the oldest CUDA 13 accepts; the driver JIT-compiles
/// PTX for it to any newer GPU.
pub const DEFAULT_ARCH: &str = "compute_75";

/// Environment variable that overrides [`DEFAULT_ARCH`], e.g. `compute_90`.
pub const ARCH_ENV: &str = "CUDA_COURSE_ARCH";

/// Environment variables nvcc reads; a change to any of them rebuilds the PTX.
const NVCC_ENV: [&str; 5] = [
    ARCH_ENV,
    "CUDA_PATH",
    "NVCC_PREPEND_FLAGS",
    "NVCC_APPEND_FLAGS",
    "NVCC_CCBIN",
];

/// Folders searched for `bin/nvcc` after `CUDA_PATH` and `PATH`.
const TOOLKIT_DIRS: [&str; 3] = ["/usr/local/cuda", "/usr/lib/cuda", "/opt/cuda"];

/// For `build.rs`: compiles `src/kernel.cu` of the crate being built to
/// `$OUT_DIR/kernel.ptx` and tells cargo when to do it again. On failure it
/// logs why as `cargo::error=` lines: cargo prints those first, as
/// `error: <crate>: <line>`, fails the build, and adds only "build script
/// logged errors" after them, not its block of the build script's output.
/// For a kernel that does not compile, the first nvcc error comes first with
/// its file and line, then one line on what to do.
pub fn build_kernel() {
    if let Err(err) = try_build_kernel() {
        let shown = env::var_os("CARGO_MANIFEST_DIR")
            .map(|dir| shown_source(Path::new(&dir)))
            .unwrap_or_else(|| "src/kernel.cu".to_owned());
        for line in err.student_lines(&shown) {
            println!("cargo::error={line}");
        }
    }
}

/// How to name the kernel for the student: in the course's workspace from
/// its root (`exercises/dot-sm/src/kernel.cu`, where cargo runs); elsewhere
/// (the grader's build of a submission) as nvcc does, `src/kernel.cu`.
fn shown_source(manifest_dir: &Path) -> String {
    let kernel = Path::new("src").join("kernel.cu");
    let parent = manifest_dir.parent().and_then(Path::file_name);
    let shown = match (parent, manifest_dir.file_name()) {
        (Some(parent), Some(folder)) if parent == "exercises" || parent == "solutions" => {
            Path::new(parent).join(folder).join(kernel)
        }
        _ => kernel,
    };
    shown.display().to_string()
}

/// One nvcc error, `src/kernel.cu(20): error: what`, as (20, "error: what").
fn nvcc_error(line: &str) -> Option<(u32, &str)> {
    let (place, rest) = line.split_once("): ")?;
    let (_, number) = place.rsplit_once('(')?;
    let is_error = rest.starts_with("error: ") || rest.starts_with("catastrophic error: ");
    is_error.then_some((number.parse().ok()?, rest.trim()))
}

/// [`build_kernel`] without the exit: returns what went wrong.
pub fn try_build_kernel() -> Result<PathBuf, BuildError> {
    let manifest_dir = env_path("CARGO_MANIFEST_DIR")?;
    let out_dir = env_path("OUT_DIR")?;
    let source = Path::new("src").join("kernel.cu");

    println!("cargo::rerun-if-changed={}", source.display());
    for header in local_includes(&manifest_dir.join(&source))? {
        println!("cargo::rerun-if-changed={}", header.display());
    }
    for var in NVCC_ENV {
        println!("cargo::rerun-if-env-changed={var}");
    }

    // Tests shared word for word by a stub and its solution mark the tests
    // for only one of them with `#[cfg(solution)]` / `#[cfg(not(solution))]`.
    println!("cargo::rustc-check-cfg=cfg(solution)");
    if env::var("CARGO_PKG_NAME").is_ok_and(|name| name.ends_with("-solution")) {
        println!("cargo::rustc-cfg=solution");
    }

    let arch = arch_from_env()?;
    let ptx = out_dir.join("kernel.ptx");
    compile_ptx(&manifest_dir, &source, &ptx, &arch)?;
    Ok(ptx)
}

/// Compiles `source` (relative to `dir`, so nvcc's messages name it the way
/// the student sees it) to PTX for `arch` at `ptx`.
pub fn compile_ptx(dir: &Path, source: &Path, ptx: &Path, arch: &str) -> Result<(), BuildError> {
    let nvcc = find_nvcc().ok_or_else(|| BuildError::NvccMissing {
        install_script: install_script(),
    })?;
    let mut command = Command::new(&nvcc);
    command
        .current_dir(dir)
        .arg("--ptx")
        .arg(format!("-arch={arch}"))
        // Line info lets compute-sanitizer and profilers name source lines.
        .arg("-lineinfo")
        .arg("-std=c++17")
        .arg("-o")
        .arg(ptx)
        .arg(source);
    let output = command
        .output()
        .map_err(|err| BuildError::NvccDidNotStart {
            nvcc: nvcc.clone(),
            reason: err.to_string(),
        })?;
    if output.status.success() {
        return Ok(());
    }
    Err(BuildError::NvccFailed {
        command: format!("{command:?}"),
        status: output.status,
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}

/// The PTX nvcc makes from `source` (an absolute path) for
/// [`DEFAULT_ARCH`], compiled in a scratch folder it removes: for tests of
/// kernels the course writes itself. A scratch folder that cannot be
/// written is a panic, as in any test.
#[cfg(any(test, feature = "testing"))]
pub fn ptx_text(source: &Path) -> Result<String, BuildError> {
    let stem = source.file_stem().unwrap_or_default().to_string_lossy();
    let dir = env::temp_dir().join(format!("{stem}-ptx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ptx = dir.join(format!("{stem}.ptx"));
    let built = compile_ptx(&dir, source, &ptx, DEFAULT_ARCH)
        .map(|()| std::fs::read_to_string(&ptx).unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
    built
}

/// The architecture to compile for: [`ARCH_ENV`] if set, else [`DEFAULT_ARCH`].
pub fn arch_from_env() -> Result<String, BuildError> {
    match env::var(ARCH_ENV) {
        Ok(value) => validate_arch(&value).map(str::to_owned),
        Err(_) => Ok(DEFAULT_ARCH.to_owned()),
    }
}

/// Accepts `compute_NN` or `sm_NN`, with an optional `a`/`f` suffix (Hopper and
/// Blackwell feature sets): the forms nvcc's `-arch` takes for PTX.
pub fn validate_arch(value: &str) -> Result<&str, BuildError> {
    let digits = value
        .strip_prefix("compute_")
        .or_else(|| value.strip_prefix("sm_"))
        .map(|rest| rest.trim_end_matches(['a', 'f']));
    match digits {
        Some(d) if d.len() >= 2 && d.bytes().all(|b| b.is_ascii_digit()) => Ok(value),
        _ => Err(BuildError::BadArch(value.to_owned())),
    }
}

/// Finds nvcc: `$CUDA_PATH/bin`, then `PATH`, then the usual toolkit folders.
pub fn find_nvcc() -> Option<PathBuf> {
    let from_cuda_path = env::var_os("CUDA_PATH").map(|p| PathBuf::from(p).join("bin"));
    let from_path = env::var_os("PATH")
        .map(|p| env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    let toolkit = TOOLKIT_DIRS.iter().map(|d| Path::new(d).join("bin"));
    from_cuda_path
        .into_iter()
        .chain(from_path)
        .chain(toolkit)
        .map(|dir| dir.join("nvcc"))
        .find(|candidate| candidate.is_file())
}

/// The course's set-up script, named in the message when nvcc is missing.
fn install_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or(Path::new("."))
        .join("scripts")
        .join("setup.sh")
}

/// `#include "..."` files next to the kernel, so editing one rebuilds the PTX.
fn local_includes(source: &Path) -> Result<Vec<PathBuf>, BuildError> {
    let text = std::fs::read_to_string(source).map_err(|err| BuildError::Io {
        path: source.to_owned(),
        reason: err.to_string(),
    })?;
    let dir = Path::new("src");
    Ok(text
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("#include"))
        .filter_map(|rest| rest.trim().strip_prefix('"')?.split('"').next())
        .map(|name| dir.join(name))
        .collect())
}

fn env_path(var: &'static str) -> Result<PathBuf, BuildError> {
    env::var_os(var)
        .map(PathBuf::from)
        .ok_or(BuildError::NotInBuildScript(var))
}

/// Why the PTX could not be built. `Display` is the message the student sees.
#[derive(Debug)]
pub enum BuildError {
    /// No nvcc in `CUDA_PATH`, `PATH` or the usual folders.
    NvccMissing { install_script: PathBuf },
    /// nvcc exists but could not be started.
    NvccDidNotStart { nvcc: PathBuf, reason: String },
    /// nvcc ran and rejected the kernel; its output is kept as it was.
    NvccFailed {
        command: String,
        status: ExitStatus,
        stdout: String,
        stderr: String,
    },
    /// `CUDA_COURSE_ARCH` is not an architecture nvcc accepts.
    BadArch(String),
    /// The kernel source could not be read.
    Io { path: PathBuf, reason: String },
    /// Called outside a cargo build script (a variable cargo sets is missing).
    NotInBuildScript(&'static str),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::NvccMissing { install_script } => write!(
                f,
                "error: nvcc, the CUDA compiler, was not found (looked in $CUDA_PATH/bin, \
                 PATH, {}).\n\
                 On Debian or Ubuntu, run {} to install it (and the rest the course needs).\n\
                 Elsewhere, install the CUDA toolkit and put nvcc on PATH or set CUDA_PATH \
                 to the toolkit's folder.",
                TOOLKIT_DIRS.map(|d| format!("{d}/bin")).join(", "),
                install_script.display()
            ),
            BuildError::NvccDidNotStart { nvcc, reason } => {
                write!(f, "error: could not run {}: {reason}", nvcc.display())
            }
            BuildError::NvccFailed {
                command,
                status,
                stdout,
                stderr,
            } => {
                // nvcc's messages first and untouched: they name the file and line.
                write!(f, "{stdout}{stderr}")?;
                write!(
                    f,
                    "error: nvcc could not compile src/kernel.cu ({status}); \
                     fix the errors above.\ncommand: {command}"
                )
            }
            BuildError::BadArch(value) => write!(
                f,
                "error: {ARCH_ENV}={value:?} is not a GPU architecture nvcc knows: \
                 use a form like compute_75 or compute_90 (default {DEFAULT_ARCH})"
            ),
            BuildError::Io { path, reason } => {
                write!(f, "error: could not read {}: {reason}", path.display())
            }
            BuildError::NotInBuildScript(var) => write!(
                f,
                "error: {var} is not set: kernels::nvcc::build_kernel runs from a build.rs"
            ),
        }
    }
}

impl BuildError {
    /// The error as the student should read it, one line each, `shown`
    /// naming the kernel file: for nvcc's errors the first with its file
    /// and line, what to do, then the others; else the message's lines.
    pub fn student_lines(&self, shown: &str) -> Vec<String> {
        let BuildError::NvccFailed { stdout, stderr, .. } = self else {
            return self.to_string().lines().map(str::to_owned).collect();
        };
        let errors: Vec<(u32, &str)> = stdout
            .lines()
            .chain(stderr.lines())
            .filter_map(nvcc_error)
            .collect();
        let Some(&(first_line, _)) = errors.first() else {
            return self.to_string().lines().map(str::to_owned).collect();
        };
        let mut lines: Vec<String> = errors
            .iter()
            .map(|(line, message)| format!("{shown}({line}): {message}"))
            .collect();
        let more = match errors.len() {
            1 => String::new(),
            n => format!(" ({} more below, often caused by the first)", n - 1),
        };
        lines.insert(
            1,
            format!(
                "the kernel does not compile: fix line {first_line} of {shown}, save, and build \
                 again{more}"
            ),
        );
        lines
    }
}

impl std::error::Error for BuildError {}

/// For tests of PTX the course commits beside its source (kernels the
/// course's host code launches itself): the committed PTX has the
/// instructions nvcc makes from `source` for compute_75 (comments, line
/// records and the debug sections after the code aside: their strings
/// hold a hash of the source's path). Passes, saying so, where no nvcc is
/// installed.
#[cfg(test)]
pub(crate) fn assert_ptx_is_nvcc_s(source: &Path, committed: &str) {
    if find_nvcc().is_none() {
        eprintln!("skipped: no nvcc here");
        return;
    }
    let built = ptx_text(source).unwrap();
    let instructions = |text: &str| -> Vec<String> {
        text.lines()
            .map(str::trim)
            .take_while(|l| !l.starts_with(".section"))
            .filter(|l| {
                !l.is_empty()
                    && !l.starts_with("//")
                    && !l.starts_with(".loc")
                    && !l.starts_with(".file")
            })
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(
        instructions(&built),
        instructions(committed),
        "{}",
        source.display()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_forms_nvcc_takes() {
        for arch in [
            "compute_75",
            "compute_90a",
            "sm_90",
            "sm_100f",
            "compute_120",
        ] {
            assert_eq!(validate_arch(arch).unwrap(), arch);
        }
    }

    #[test]
    fn rejects_what_nvcc_would_not_take() {
        for arch in [
            "",
            "75",
            "compute_",
            "compute_7",
            "sm_9x",
            "gfx90a",
            "compute_75 ",
        ] {
            let err = validate_arch(arch).unwrap_err().to_string();
            assert!(err.contains(ARCH_ENV), "{arch:?}: {err}");
        }
    }

    #[test]
    fn missing_nvcc_names_the_install_script() {
        let err = BuildError::NvccMissing {
            install_script: install_script(),
        }
        .to_string();
        assert!(err.contains("scripts/setup.sh"), "{err}");
        assert!(install_script().is_file(), "{}", install_script().display());
    }

    #[test]
    fn nvcc_errors_reach_the_student_unchanged() {
        let dir = std::env::temp_dir().join(format!("kernels-nvcc-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).unwrap();
        let broken = "extern \"C\" __global__ void k(float* c) { c[0] = undefined_name; }\n";
        std::fs::write(dir.join("src/kernel.cu"), broken).unwrap();
        let err = compile_ptx(
            &dir,
            Path::new("src/kernel.cu"),
            &dir.join("kernel.ptx"),
            DEFAULT_ARCH,
        )
        .unwrap_err();
        let shown = err.to_string();
        let BuildError::NvccFailed { stderr, .. } = err else {
            panic!("expected nvcc to fail, got: {shown}");
        };
        // nvcc names the file as the student knows it, with the line number.
        assert!(stderr.contains("src/kernel.cu(1)"), "{stderr}");
        assert!(stderr.contains("undefined_name"), "{stderr}");
        assert!(shown.starts_with(&stderr), "{shown}");
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn the_student_reads_the_first_error_then_what_to_do() {
        let err = BuildError::NvccFailed {
            command: "nvcc".into(),
            status: std::process::Command::new("false").status().unwrap(),
            stdout: String::new(),
            stderr: "src/kernel.cu(20): error: identifier \"x\" is undefined\n\n\
                     src/kernel.cu(23): warning #177-D: variable \"sum\" was declared\n\n\
                     src/kernel.cu(31): error: expected a \";\"\n\n\
                     2 errors detected in the compilation of \"src/kernel.cu\".\n"
                .into(),
        };
        assert_eq!(
            err.student_lines("exercises/dot-sm/src/kernel.cu"),
            [
                "exercises/dot-sm/src/kernel.cu(20): error: identifier \"x\" is undefined",
                "the kernel does not compile: fix line 20 of exercises/dot-sm/src/kernel.cu, \
                 save, and build again (1 more below, often caused by the first)",
                "exercises/dot-sm/src/kernel.cu(31): error: expected a \";\"",
            ]
        );
    }

    #[test]
    fn other_build_errors_keep_their_message() {
        let err = BuildError::BadArch("gfx90a".into());
        assert_eq!(err.student_lines("x"), [err.to_string()]);
    }

    #[test]
    fn the_kernel_is_named_from_the_workspace_root() {
        assert_eq!(
            shown_source(Path::new("/home/me/course/exercises/dot-sm")),
            "exercises/dot-sm/src/kernel.cu"
        );
        // A grader's scratch crate: named as nvcc names it.
        assert_eq!(
            shown_source(Path::new("/tmp/x/dot-sm/nvcc")),
            "src/kernel.cu"
        );
    }

    #[test]
    fn the_arch_reaches_the_ptx() {
        let dir = std::env::temp_dir().join(format!("kernels-arch-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(
            dir.join("src/kernel.cu"),
            "extern \"C\" __global__ void k() {}\n",
        )
        .unwrap();
        for (arch, target) in [
            (DEFAULT_ARCH, ".target sm_75"),
            ("compute_80", ".target sm_80"),
        ] {
            let ptx = dir.join(format!("{arch}.ptx"));
            compile_ptx(&dir, Path::new("src/kernel.cu"), &ptx, arch).unwrap();
            let text = std::fs::read_to_string(&ptx).unwrap();
            assert!(text.contains(target), "{arch}: {text}");
        }
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn includes_in_quotes_are_tracked() {
        let dir = std::env::temp_dir().join(format!("kernels-inc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let source = dir.join("kernel.cu");
        std::fs::write(&source, "#include <cstdio>\n  #include \"tile.cuh\"\n").unwrap();
        assert_eq!(
            local_includes(&source).unwrap(),
            vec![Path::new("src").join("tile.cuh")]
        );
        std::fs::remove_dir_all(dir).ok();
    }
}
