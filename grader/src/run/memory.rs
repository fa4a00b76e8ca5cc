//! Whether a run above 2^31 elements fits on this node: the host's available
//! memory (`/proc/meminfo`) and the GPU's free memory (`nvidia-smi`), read
//! once per grading and GPU before such a run (with several GPUs, the host's
//! from the first GPU's reading), with no run of the grading in flight
//! (`run::lane`), since other graders on the node may hold some. A run that
//! does not fit is skipped with the reason, never failed: a student must
//! not lose a point to the node.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Condvar, Mutex, MutexGuard};

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

/// Bytes held by the runs in flight, against a capacity, given in the order
/// asked: a run waiting for much (a run above 2^31 elements) is not passed
/// by every smaller one that comes after it.
#[derive(Default)]
pub struct Pool {
    state: Mutex<Held>,
    freed: Condvar,
}

#[derive(Default)]
struct Held {
    bytes: u64,
    /// The next ticket to hand out, and the one served next.
    next: u64,
    serving: u64,
}

impl Pool {
    fn state(&self) -> MutexGuard<'_, Held> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes `need` bytes once they fit in `capacity` beside those held,
    /// or at once where nothing is held (a run too large for the room was
    /// skipped before it got here), after every take asked before.
    pub fn take(&self, need: u64, capacity: u64) {
        if need == 0 {
            return;
        }
        let mut held = self.state();
        let ticket = held.next;
        held.next += 1;
        while held.serving != ticket || (held.bytes > 0 && held.bytes + need > capacity) {
            held = self.freed.wait(held).unwrap_or_else(|p| p.into_inner());
        }
        held.bytes += need;
        held.serving += 1;
        self.freed.notify_all();
    }

    /// Gives back `need` bytes taken.
    pub fn give(&self, need: u64) {
        if need == 0 {
            return;
        }
        let mut held = self.state();
        held.bytes -= need;
        self.freed.notify_all();
    }

    /// The bytes held now.
    pub fn held(&self) -> u64 {
        self.state().bytes
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

    #[test]
    fn a_pool_serves_takes_in_the_order_asked() {
        let pool = Pool::default();
        pool.take(6, 10);
        let order = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            // 8 waits for the 6 held; 2, asked after it, would fit beside
            // the 6 but waits its turn.
            // Each waits until the one before holds its ticket (no sleep
            // to guess: a loaded machine made one too short).
            let asked = |tickets: u64| {
                while pool.state().next < tickets {
                    std::thread::yield_now();
                }
            };
            scope.spawn(|| {
                pool.take(8, 10);
                order.lock().unwrap().push(8);
            });
            asked(2);
            scope.spawn(|| {
                pool.take(2, 10);
                order.lock().unwrap().push(2);
            });
            asked(3);
            assert!(order.lock().unwrap().is_empty(), "the 2 passed the 8");
            pool.give(6);
        });
        assert_eq!(order.into_inner().unwrap(), [8, 2]);
        assert_eq!(pool.held(), 10);
        // More than the capacity, with nothing held: at once.
        let empty = Pool::default();
        empty.take(20, 10);
        assert_eq!(empty.held(), 20);
    }

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
