//! Whether a run above 2^31 elements fits on this node: the host's available
//! memory (`/proc/meminfo`) and the GPU's free memory (`nvidia-smi`), read
//! once per grading and GPU before such a run (with several GPUs, the host's
//! from the first GPU's reading), with no run of the grading in flight
//! (`run::lane`), since other graders on the node may hold some. A run that
//! does not fit is skipped with the reason, never failed: a student must
//! not lose a point to the node.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::record::outcome::{Memory, Shortfall};

/// Room left besides what the run asks for: the CUDA context, the
/// process, the grader and whatever else the node runs.
const HEADROOM: u64 = 4 << 30;

/// The memory a node has free, host and GPU, as read at one moment.
#[derive(Clone, Debug)]
pub struct Room {
    host: Result<u64, Shortfall>,
    device: Result<u64, Shortfall>,
}

impl Room {
    /// The host's available memory and GPU `gpu`'s free memory (None: the
    /// least of every GPU's), read now.
    pub fn measure(gpu: Option<u32>) -> Room {
        let host = std::fs::read_to_string("/proc/meminfo")
            .map_err(|err| unread(Memory::Host, format!("/proc/meminfo: {err}")))
            .and_then(|text| mem_available(&text));
        Room {
            host,
            device: gpu_free(gpu),
        }
    }

    /// Why a run of `bytes` in each memory does not fit in this room.
    pub fn shortfall(&self, bytes: u64) -> Option<Shortfall> {
        judge(with_headroom(bytes), self.host.clone(), self.device.clone())
    }

    /// What runs may hold at once, headroom included: the lesser memory
    /// (0 where either could not be read: nothing fits).
    pub fn capacity(&self) -> u64 {
        self.host_capacity().min(self.device_capacity())
    }

    /// The host memory runs may hold at once (0 where it could not be read).
    pub fn host_capacity(&self) -> u64 {
        *self.host.as_ref().unwrap_or(&0)
    }

    /// The GPU memory runs may hold at once (0 where it could not be read).
    pub fn device_capacity(&self) -> u64 {
        *self.device.as_ref().unwrap_or(&0)
    }

    /// This room's GPU memory with `other`'s host memory: each GPU of a
    /// node reads its own GPU's, and all judge host memory by one reading.
    pub fn with_host_of(self, other: &Room) -> Room {
        Room {
            host: other.host.clone(),
            device: self.device,
        }
    }

    /// A room of `host` and `device` bytes, as if read.
    #[cfg(test)]
    pub(crate) fn of(host: u64, device: u64) -> Room {
        Room {
            host: Ok(host),
            device: Ok(device),
        }
    }
}

/// What a run of `bytes` holds, with the headroom its process needs.
pub fn with_headroom(bytes: u64) -> u64 {
    bytes + HEADROOM
}

fn unread(of: Memory, why: String) -> Shortfall {
    Shortfall::Unread { of, why }
}

fn judge(
    need: u64,
    host: Result<u64, Shortfall>,
    device: Result<u64, Shortfall>,
) -> Option<Shortfall> {
    match (host, device) {
        (Err(unread), _) | (_, Err(unread)) => Some(unread),
        (Ok(have), _) if have < need => Some(Shortfall::Short {
            of: Memory::Host,
            need,
            have,
        }),
        (_, Ok(have)) if have < need => Some(Shortfall::Short {
            of: Memory::Gpu,
            need,
            have,
        }),
        _ => None,
    }
}

/// `MemAvailable` of a `/proc/meminfo`, in bytes.
fn mem_available(meminfo: &str) -> Result<u64, Shortfall> {
    meminfo
        .lines()
        .find_map(|line| line.strip_prefix("MemAvailable:"))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|kib| kib.trim().parse::<u64>().ok())
        .map(|kib| kib * 1024)
        .ok_or_else(|| unread(Memory::Host, "no MemAvailable line in /proc/meminfo".into()))
}

/// The free memory of GPU `index` (nvidia-smi's numbering), or the least
/// of every GPU's, in bytes.
fn gpu_free(index: Option<u32>) -> Result<u64, Shortfall> {
    let smi =
        std::env::var_os(crate::run::device::NVIDIA_SMI_ENV).unwrap_or_else(|| "nvidia-smi".into());
    let mut command = Command::new(Path::new(&smi));
    command.args(["--query-gpu=memory.free", "--format=csv,noheader,nounits"]);
    if let Some(index) = index {
        command.arg(format!("--id={index}"));
    }
    let output = command
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|err| unread(Memory::Gpu, format!("nvidia-smi: {err}")))?;
    if !output.status.success() {
        return Err(unread(
            Memory::Gpu,
            format!("nvidia-smi exited with {}", output.status),
        ));
    }
    least_mib(&String::from_utf8_lossy(&output.stdout))
        .map(|mib| mib << 20)
        .ok_or_else(|| unread(Memory::Gpu, "nvidia-smi gave no free memory".into()))
}

/// The least of nvidia-smi's `memory.free` lines (MiB).
fn least_mib(listing: &str) -> Option<u64> {
    listing
        .lines()
        .filter_map(|line| line.trim().parse::<u64>().ok())
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn meminfo_and_nvidia_smi_are_read() {
        let meminfo = "MemTotal:       131072000 kB\nMemFree:         1000 kB\nMemAvailable:   125829120 kB\n";
        assert_eq!(mem_available(meminfo), Ok(120 * GIB));
        assert!(mem_available("MemTotal: 1 kB\n").is_err());
        assert_eq!(least_mib("143000\n80000\n"), Some(80000));
        assert_eq!(least_mib("[N/A]\n"), None);
    }

    #[test]
    fn a_run_that_does_not_fit_is_skipped_saying_which_memory_is_short() {
        assert_eq!(judge(30 * GIB, Ok(100 * GIB), Ok(139 * GIB)), None);
        let host = judge(30 * GIB, Ok(16 * GIB), Ok(139 * GIB)).unwrap();
        assert_eq!(
            host,
            Shortfall::Short {
                of: Memory::Host,
                need: 30 * GIB,
                have: 16 * GIB
            }
        );
        let host = host.to_string();
        assert!(
            host.contains("needs 30.0 GiB of host memory") && host.contains("16.0 GiB available"),
            "{host}"
        );
        let device = judge(30 * GIB, Ok(100 * GIB), Ok(24 * GIB))
            .unwrap()
            .to_string();
        assert!(device.contains("GPU memory"), "{device}");
        let not_found = unread(Memory::Gpu, "nvidia-smi: not found".into());
        let unread = judge(30 * GIB, Ok(100 * GIB), Err(not_found))
            .unwrap()
            .to_string();
        assert!(unread.contains("could not be read (nvidia-smi"), "{unread}");
    }
}
