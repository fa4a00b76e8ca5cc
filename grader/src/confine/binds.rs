//! What a sandbox shows of the machine: the system folders read-only
//! (`/usr`, the top-level links into it, the loader's configuration),
//! `/usr/local` and `/opt` hidden, and from those exactly the folders a
//! build or a run needs, found where this machine keeps them: the CUDA
//! toolkit's for a build (the nvcc the course's build helper would find),
//! the NVIDIA driver's libraries for a run on a GPU (from the loader's
//! cache), compute-sanitizer's for a sanitized run.
//! Everything bound is bound read-only at its own path.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Folders where software is installed by hand, hidden in every sandbox
/// but for what a build or run needs of them.
const HIDDEN: [&str; 2] = ["/usr/local", "/opt"];

/// Files of `/etc` a sandbox sees: the loader's cache (libcuda may live
/// outside /usr/lib), its configuration, the compiler's alternatives and
/// nvcc's profile.
const ETC: [&str; 5] = [
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/nvcc.profile",
];

/// The largest `/usr/local` placeholder: an empty folder.
const HIDDEN_BYTES: &str = "65536";

/// The system, read-only, with `/usr/local` hidden: the first binds of
/// every sandbox. [`finish`] closes what this opens.
pub fn system(command: &mut Command) {
    command.args(["--ro-bind", "/usr", "/usr"]);
    // Merged-/usr systems link these into /usr; older ones have folders.
    for top in ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"] {
        let path = Path::new(top);
        match std::fs::read_link(path) {
            Ok(target) => {
                command.arg("--symlink").arg(target).arg(path);
            }
            Err(_) if path.is_dir() => {
                command.arg("--ro-bind").arg(path).arg(path);
            }
            Err(_) => {}
        }
    }
    for shared in ETC {
        command.args(["--ro-bind-try", shared, shared]);
    }
    // An empty folder over /usr/local: what is bound in it later (a
    // toolkit, the driver) is made on it, and it is read-only at the end.
    if Path::new("/usr/local").is_dir() {
        command.args(["--size", HIDDEN_BYTES, "--tmpfs", "/usr/local"]);
    }
}

/// The last binds of every sandbox: `/usr/local` and the root read-only.
pub fn finish(command: &mut Command) {
    if Path::new("/usr/local").is_dir() {
        command.args(["--remount-ro", "/usr/local"]);
    }
    command.args(["--remount-ro", "/"]);
}

/// Whether `path` is seen in a sandbox where it is on this machine, with
/// no bind of its own: under /usr but not /usr/local, or under one of the
/// top-level links into /usr.
pub fn visible(path: &Path) -> bool {
    let system = [
        "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
    ];
    system.iter().any(|s| path.starts_with(s)) && !HIDDEN.iter().any(|h| path.starts_with(h))
}

/// Binds `folder` read-only at its own path, unless a sandbox sees it
/// already; where it is a link, its target's folder is bound too, so that
/// both names work.
pub fn folder(command: &mut Command, folder: &Path) {
    let real = folder.canonicalize().unwrap_or_else(|_| folder.to_owned());
    for seen in [folder, real.as_path()] {
        if !visible(seen) && seen.is_absolute() && seen.is_dir() {
            command.arg("--ro-bind").arg(seen).arg(seen);
        }
    }
}

/// The CUDA toolkit's `bin` folder a build uses: where the course's build
/// helper finds nvcc with the grader's environment (`CUDA_PATH`, `PATH`,
/// the usual folders). A build is given it on its PATH, and its toolkit
/// (the folder above `bin`) bound when hidden.
pub fn toolkit_bin() -> Option<PathBuf> {
    kernels::nvcc::find_nvcc()?.parent().map(Path::to_owned)
}

/// Binds the toolkit of `bin` (see [`toolkit_bin`]) when it is hidden.
pub fn toolkit(command: &mut Command, bin: &Path) {
    if let Some(root) = bin.parent() {
        folder(command, root);
    }
    // A toolkit reached through a link (/usr/local/cuda -> cuda-12.4).
    if let Some(root) = bin.canonicalize().ok().as_deref().and_then(Path::parent) {
        folder(command, root);
    }
}

/// The folders of the NVIDIA driver's libraries (libcuda and what it
/// loads: the PTX JIT compiler, NVML, the debugger compute-sanitizer
/// uses) that a sandbox hides, found once in the loader's cache, which is
/// where a run finds the driver (never the grader's `LD_LIBRARY_PATH`,
/// which may name the instructor's folders). A run on a GPU gets them
/// bound and first on its library path.
pub fn driver_folders() -> &'static [PathBuf] {
    static FOUND: OnceLock<Vec<PathBuf>> = OnceLock::new();
    FOUND.get_or_init(|| {
        let cache = ["/sbin/ldconfig", "/usr/sbin/ldconfig"]
            .iter()
            .find(|l| Path::new(l).is_file())
            .and_then(|ldconfig| Command::new(ldconfig).arg("-p").output().ok())
            .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
            .unwrap_or_default();
        let mut folders: Vec<PathBuf> = driver_libraries(&cache)
            .into_iter()
            .flat_map(|library| {
                let real = library.canonicalize().ok();
                [
                    library.parent().map(Path::to_owned),
                    real.and_then(|r| r.parent().map(Path::to_owned)),
                ]
            })
            .flatten()
            .filter(|folder| !visible(folder))
            .collect();
        folders.sort();
        folders.dedup();
        folders
    })
}

/// The driver's libraries an `ldconfig -p` listing names, for this
/// machine's word size.
fn driver_libraries(listing: &str) -> Vec<PathBuf> {
    let ours = if cfg!(target_pointer_width = "64") {
        "64"
    } else {
        "libc6)"
    };
    listing
        .lines()
        .filter_map(|line| {
            let (name, path) = line.trim().split_once(" => ")?;
            let driver = ["libcuda.", "libnvidia-", "libcudadebugger."]
                .iter()
                .any(|prefix| name.starts_with(prefix));
            (driver && name.contains(ours)).then(|| PathBuf::from(path))
        })
        .collect()
}

/// How a sandbox reaches a wrapper tool (compute-sanitizer): where it is,
/// if the sandbox sees it or gets its folders bound (a tool installed
/// under /usr/local or /opt); None for a tool elsewhere, which is copied
/// in like the binary.
pub fn tool(command: &mut Command, tool: &Path) -> Option<PathBuf> {
    if !tool.is_absolute() {
        return None;
    }
    if visible(tool) {
        return Some(tool.to_owned());
    }
    if !HIDDEN.iter().any(|h| tool.starts_with(h)) {
        return None;
    }
    // Its own folder and its target's: compute-sanitizer keeps its
    // libraries beside it, and bin/ may hold only a link to it.
    if let Some(parent) = tool.parent() {
        folder(command, parent);
    }
    if let Some(parent) = tool.canonicalize().ok().as_deref().and_then(Path::parent) {
        folder(command, parent);
    }
    Some(tool.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usr_is_seen_and_usr_local_and_opt_are_not() {
        assert!(visible(Path::new("/usr/lib/x86_64-linux-gnu/libc.so.6")));
        assert!(visible(Path::new("/lib64/ld-linux-x86-64.so.2")));
        assert!(!visible(Path::new("/usr/local/nvidia/lib64")));
        assert!(!visible(Path::new("/opt/cuda/bin")));
        assert!(!visible(Path::new("/home/instructor")));
    }

    #[test]
    fn the_drivers_libraries_are_read_from_the_loaders_cache() {
        let listing = "\
1234 libs found in cache `/etc/ld.so.cache'
\tlibnvidia-ptxjitcompiler.so.1 (libc6,x86-64) => /usr/local/nvidia/lib64/libnvidia-ptxjitcompiler.so.1
\tlibcudart.so.12 (libc6,x86-64) => /usr/local/cuda/lib64/libcudart.so.12
\tlibcuda.so.1 (libc6,x86-64) => /usr/local/nvidia/lib64/libcuda.so.1
\tlibcuda.so.1 (libc6) => /usr/lib32/libcuda.so.1
\tlibc.so.6 (libc6,x86-64, OS ABI: Linux 3.2.0) => /lib/x86_64-linux-gnu/libc.so.6
";
        assert_eq!(
            driver_libraries(listing),
            [
                PathBuf::from("/usr/local/nvidia/lib64/libnvidia-ptxjitcompiler.so.1"),
                PathBuf::from("/usr/local/nvidia/lib64/libcuda.so.1"),
            ]
        );
    }

    #[test]
    fn a_tool_under_a_hidden_folder_gets_its_folders_and_one_elsewhere_is_copied() {
        let mut command = Command::new("bwrap");
        assert_eq!(
            tool(&mut command, Path::new("/usr/bin/true")),
            Some(PathBuf::from("/usr/bin/true"))
        );
        assert_eq!(tool(&mut command, Path::new("/tmp/wrapper.sh")), None);
        assert_eq!(command.get_args().count(), 0);
    }
}
