//! Counters the hardware has, counted by the CPU emulator: one definition
//! for the emulator, which counts a launch and writes it in the line
//! grammar below, and its readers (the exercise binary's `--counters`,
//! `cargo course check`, the bench's comparison with `ncu`), which parse
//! it back. Each counter is defined as Nsight Compute defines the metric
//! it names, so a figure here can be checked against `ncu` on a GPU.
//!
//! # What is counted
//!
//! Warps are a block's threads in linear order (x fastest), 32 to a warp.
//! The emulator runs one thread at a time, so a warp-level instruction is
//! defined as the hardware's would be under lockstep: the k-th execution
//! of one PTX instruction by each lane of a warp is one warp instruction,
//! its lanes those that executed it at least k times (for a loop whose
//! lanes run different trip counts, the lanes still in the loop, as SIMT
//! reconvergence runs it).
//!
//! - `inst`: warp instructions executed (`smsp__inst_executed.sum`), and
//!   `lanes`: the lanes that executed them (`smsp__thread_inst_executed.sum`,
//!   a predicated-off lane counting, as there). lanes / inst is the average
//!   active lanes: 32 without divergence. PTX instructions, not SASS: the
//!   emulator runs PTX, so these are near `ncu`'s, not equal.
//! - Global memory (`ld.global`, `st.global`, and generic accesses that
//!   land in global memory), by loads, stores and atomics (`atom` and
//!   `red` together): `requests`, one per warp instruction with at least
//!   one lane that made the access (`l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum`,
//!   `_st`, `_atom` + `_red`), and `transactions`, the 32-byte sectors its
//!   lanes touch (`l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum` and the
//!   rest). `ideal` is the fewest sectors the distinct bytes they touch
//!   fit in: 4 for 32 lanes reading consecutive 4-byte words, 1 for every
//!   lane reading one word.
//! - Shared memory (`ld.shared`, `st.shared`, generic accesses that land in
//!   it; shared atomics are left out): `requests` as above, and
//!   `transactions`, the wavefronts it takes
//!   (`l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum`, `_st`). 32
//!   banks of 4-byte words; a lane's access of 8 or 16 bytes is the 2 or 4
//!   words it covers, and the warp is served in phases of 16 lanes (8-byte
//!   accesses) or 8 (16-byte), one phase for smaller ones. A phase with
//!   active lanes takes as many wavefronts as the most distinct words any
//!   one bank holds among them (the same word read by several lanes is a
//!   broadcast: one). `ideal` is one wavefront per phase with active lanes,
//!   so transactions − ideal is `l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum`
//!   (`_st`), and transactions / ideal the conflict's ways.
//! - What bounds occupancy, as the launch and the PTX declare it: threads
//!   per block, static and dynamic shared memory per block, and registers
//!   per thread as the PTX's `.reg` declarations count them (32-bit ones
//!   one each, 64-bit two, predicates none). That is an approximation:
//!   ptxas allocates registers itself, usually fewer than the PTX's
//!   virtual registers.
//!
//! # The lines
//!
//! ```text
//! cuda-course counters: launch kernel=dot grid=(64,1,1) block=(256,1,1) shared=1024 dynamic-shared=0 registers=24 inst=9216 lanes=294912 gld=512/2048/2048 gst=0/0/0 gatom=64/64/64 sld=1024/1024/1024 sst=576/576/576
//! cuda-course counters: line kernel=dot line=kernel.cu:41 inst=512 lanes=16384 gld=512/2048/2048 gst=0/0/0 gatom=0/0/0 sld=0/0/0 sst=0/0/0
//! ```
//!
//! After [`COUNTERS_PREFIX`]: `launch` and the launch's totals, then one
//! `line` for each `kernel.cu` line that executed something, in line order.
//! Each traffic field is `requests/transactions/ideal`. The kernel's name
//! is PTX's (mangled for C++), which holds no space. Readers take any text
//! without panicking; a line they cannot read is left out.

use std::fmt;

/// How the emulator starts each line of counters, on stderr where
/// [`COUNTERS_VARIABLE`] is set. Not [`crate::emulator_output::FINDING_PREFIX`]:
/// a reader of findings never reads a counter as one.
pub const COUNTERS_PREFIX: &str = "cuda-course counters: ";

/// Set to `1`, the emulator counts every launch and writes its counters on
/// stderr after [`COUNTERS_PREFIX`]. Counting costs time; unset, nothing is
/// counted.
pub const COUNTERS_VARIABLE: &str = "CUDA_COURSE_EMULATOR_COUNTERS";

/// The emulator's entry point that turns counting on (1) or off (0) for
/// the launches that follow: `extern "C" fn(u32)`. Found with `dlsym`; a
/// GPU's driver has none.
pub const COUNT_SYMBOL: &std::ffi::CStr = c"cuda_course_emulator_count";

/// The emulator's entry point that hands over the lines of the launches
/// counted since the last call: `extern "C" fn(*mut u8, usize) -> usize`
/// writes them to the buffer, and forgets them, when they fit in its
/// length, and returns their length in bytes either way.
pub const COUNTED_SYMBOL: &std::ffi::CStr = c"cuda_course_emulator_counted";

/// Accesses of one kind: warp-level requests, the transactions they took
/// (32-byte sectors for global memory, wavefronts for shared memory), and
/// the fewest transactions the same bytes could take.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "protocol", derive(serde::Serialize, serde::Deserialize))]
pub struct Traffic {
    pub requests: u64,
    pub transactions: u64,
    pub ideal: u64,
}

impl Traffic {
    /// Both added.
    pub fn add(&mut self, other: Traffic) {
        self.requests += other.requests;
        self.transactions += other.transactions;
        self.ideal += other.ideal;
    }

    /// Transactions beyond the ideal: what the access pattern costs.
    pub fn excess(&self) -> u64 {
        self.transactions.saturating_sub(self.ideal)
    }

    fn field(&self) -> String {
        format!("{}/{}/{}", self.requests, self.transactions, self.ideal)
    }

    fn parse(text: &str) -> Option<Traffic> {
        let mut parts = text.split('/').map(|p| p.parse::<u64>().ok());
        let traffic = Traffic {
            requests: parts.next()??,
            transactions: parts.next()??,
            ideal: parts.next()??,
        };
        parts.next().is_none().then_some(traffic)
    }
}

/// What a launch, or one line of its kernel, executed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "protocol", derive(serde::Serialize, serde::Deserialize))]
pub struct Counts {
    /// Warp instructions (`smsp__inst_executed.sum`).
    pub inst: u64,
    /// Their lanes (`smsp__thread_inst_executed.sum`).
    pub lanes: u64,
    pub global_load: Traffic,
    pub global_store: Traffic,
    /// `atom` and `red` on global memory.
    pub global_atomic: Traffic,
    pub shared_load: Traffic,
    pub shared_store: Traffic,
}

impl Counts {
    /// Both added.
    pub fn add(&mut self, other: &Counts) {
        self.inst += other.inst;
        self.lanes += other.lanes;
        self.global_load.add(other.global_load);
        self.global_store.add(other.global_store);
        self.global_atomic.add(other.global_atomic);
        self.shared_load.add(other.shared_load);
        self.shared_store.add(other.shared_store);
    }

    /// Global accesses of every kind together.
    pub fn global(&self) -> Traffic {
        let mut all = self.global_load;
        all.add(self.global_store);
        all.add(self.global_atomic);
        all
    }

    /// Shared accesses of both kinds together.
    pub fn shared(&self) -> Traffic {
        let mut all = self.shared_load;
        all.add(self.shared_store);
        all
    }

    /// Average lanes active per warp instruction, None where none ran.
    pub fn active_lanes(&self) -> Option<f64> {
        (self.inst > 0).then(|| self.lanes as f64 / self.inst as f64)
    }

    /// Memory transactions beyond the ideal, global sectors and shared
    /// wavefronts together: what "costs most" ranks lines by.
    pub fn excess(&self) -> u64 {
        self.global().excess() + self.shared().excess()
    }

    /// Lanes a full warp would have had that sat idle.
    pub fn idle_lanes(&self) -> u64 {
        (self.inst * 32).saturating_sub(self.lanes)
    }

    fn fields(&self) -> String {
        format!(
            "inst={} lanes={} gld={} gst={} gatom={} sld={} sst={}",
            self.inst,
            self.lanes,
            self.global_load.field(),
            self.global_store.field(),
            self.global_atomic.field(),
            self.shared_load.field(),
            self.shared_store.field()
        )
    }

    /// Reads one `key=value` of [`Counts::fields`]; false for another key.
    fn read(&mut self, key: &str, value: &str) -> Option<bool> {
        let traffic = |slot: &mut Traffic| Traffic::parse(value).map(|t| *slot = t);
        match key {
            "inst" => self.inst = value.parse().ok()?,
            "lanes" => self.lanes = value.parse().ok()?,
            "gld" => traffic(&mut self.global_load)?,
            "gst" => traffic(&mut self.global_store)?,
            "gatom" => traffic(&mut self.global_atomic)?,
            "sld" => traffic(&mut self.shared_load)?,
            "sst" => traffic(&mut self.shared_store)?,
            _ => return Some(false),
        }
        Some(true)
    }
}

/// One line of the student's `kernel.cu` and what its instructions did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "protocol", derive(serde::Serialize, serde::Deserialize))]
pub struct LineCounts {
    pub line: u32,
    pub counts: Counts,
}

/// One launch's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "protocol", derive(serde::Serialize, serde::Deserialize))]
pub struct LaunchCounters {
    /// The kernel's PTX name.
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Static shared memory per block, bytes.
    pub shared: u64,
    /// Dynamic shared memory per block, bytes.
    pub dynamic_shared: u64,
    /// Registers per thread as the PTX declares them (an approximation).
    pub registers: u32,
    pub total: Counts,
    /// By `kernel.cu` line, in line order.
    pub lines: Vec<LineCounts>,
}

/// `(x,y,z)`.
fn triple([x, y, z]: [u32; 3]) -> String {
    format!("({x},{y},{z})")
}

fn read_triple(text: &str) -> Option<[u32; 3]> {
    let inner = text.strip_prefix('(')?.strip_suffix(')')?;
    let mut parts = inner.split(',').map(|p| p.parse::<u32>().ok());
    let value = [parts.next()??, parts.next()??, parts.next()??];
    parts.next().is_none().then_some(value)
}

impl fmt::Display for LaunchCounters {
    /// Its lines, each after [`COUNTERS_PREFIX`] and ending in a line break.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{COUNTERS_PREFIX}launch kernel={} grid={} block={} shared={} dynamic-shared={} \
             registers={} {}",
            self.kernel,
            triple(self.grid),
            triple(self.block),
            self.shared,
            self.dynamic_shared,
            self.registers,
            self.total.fields()
        )?;
        for line in &self.lines {
            writeln!(
                f,
                "{COUNTERS_PREFIX}line kernel={} line=kernel.cu:{} {}",
                self.kernel,
                line.line,
                line.counts.fields()
            )?;
        }
        Ok(())
    }
}

impl LaunchCounters {
    /// Every launch in `text` (a run's stderr, say): the lines after
    /// [`COUNTERS_PREFIX`], in order; anything else is passed over, and so
    /// is a line that does not read.
    pub fn parse_all(text: &str) -> Vec<LaunchCounters> {
        let mut launches: Vec<LaunchCounters> = Vec::new();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix(COUNTERS_PREFIX) else {
                continue;
            };
            if let Some(head) = rest.strip_prefix("launch ") {
                if let Some(launch) = Self::parse_launch(head) {
                    launches.push(launch);
                }
            } else if let Some(head) = rest.strip_prefix("line ")
                && let Some((kernel, line)) = Self::parse_line(head)
                && let Some(last) = launches.last_mut()
                && last.kernel == kernel
            {
                last.lines.push(line);
            }
        }
        launches
    }

    fn parse_launch(head: &str) -> Option<LaunchCounters> {
        let mut launch = LaunchCounters::default();
        for field in head.split(' ').filter(|f| !f.is_empty()) {
            let (key, value) = field.split_once('=')?;
            match key {
                "kernel" => launch.kernel = value.to_owned(),
                "grid" => launch.grid = read_triple(value)?,
                "block" => launch.block = read_triple(value)?,
                "shared" => launch.shared = value.parse().ok()?,
                "dynamic-shared" => launch.dynamic_shared = value.parse().ok()?,
                "registers" => launch.registers = value.parse().ok()?,
                _ => {
                    if !launch.total.read(key, value)? {
                        return None;
                    }
                }
            }
        }
        (!launch.kernel.is_empty()).then_some(launch)
    }

    fn parse_line(head: &str) -> Option<(String, LineCounts)> {
        let mut kernel = None;
        let mut line = None;
        let mut counts = Counts::default();
        for field in head.split(' ').filter(|f| !f.is_empty()) {
            let (key, value) = field.split_once('=')?;
            match key {
                "kernel" => kernel = Some(value.to_owned()),
                "line" => line = Some(value.strip_prefix("kernel.cu:")?.parse().ok()?),
                _ => {
                    if !counts.read(key, value)? {
                        return None;
                    }
                }
            }
        }
        Some((
            kernel?,
            LineCounts {
                line: line?,
                counts,
            },
        ))
    }

    /// The line that costs most: the most memory transactions beyond the
    /// ideal, or where none has any, the most idle lanes; None where no
    /// line wastes either.
    pub fn costliest(&self) -> Option<(&LineCounts, Cost)> {
        let by_excess = self
            .lines
            .iter()
            .filter(|l| l.counts.excess() > 0)
            .max_by_key(|l| (l.counts.excess(), std::cmp::Reverse(l.line)));
        if let Some(line) = by_excess {
            return Some((line, Cost::Transactions(line.counts.excess())));
        }
        self.lines
            .iter()
            .filter(|l| l.counts.idle_lanes() > 0)
            .max_by_key(|l| (l.counts.idle_lanes(), std::cmp::Reverse(l.line)))
            .map(|line| (line, Cost::IdleLanes(line.counts.idle_lanes())))
    }
}

/// What a line costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cost {
    /// Memory transactions beyond the ideal.
    Transactions(u64),
    /// Lanes of its warp instructions that sat idle.
    IdleLanes(u64),
}

/// `a / b` to one decimal, or "-" where b is 0.
fn ratio(a: u64, b: u64) -> String {
    if b == 0 {
        "-".to_owned()
    } else {
        format!("{:.1}", a as f64 / b as f64)
    }
}

/// The table a person reads: for each launch (one of each kernel: the
/// same kernel's later launches repeat it), the launch's shape and
/// resources, then each kind of access that happened, per request, beside
/// the ideal; the average active lanes; the line that costs most.
pub fn table(launches: &[LaunchCounters]) -> String {
    use fmt::Write;
    let mut out = String::new();
    let mut seen: Vec<&str> = Vec::new();
    for launch in launches {
        if seen.contains(&launch.kernel.as_str()) {
            continue;
        }
        seen.push(&launch.kernel);
        let threads: u64 = launch.block.iter().map(|&d| u64::from(d)).product();
        let blocks: u64 = launch.grid.iter().map(|&d| u64::from(d)).product();
        let _ = writeln!(
            out,
            "kernel `{}`: {blocks} blocks of {threads} threads, {} B shared memory a block \
             ({} static, {} dynamic), {} registers a thread as its PTX declares them \
             (ptxas allocates its own, usually fewer)",
            launch.kernel,
            launch.shared + launch.dynamic_shared,
            launch.shared,
            launch.dynamic_shared,
            launch.registers
        );
        let total = &launch.total;
        let kinds = [
            ("global loads", total.global_load, "sectors"),
            ("global stores", total.global_store, "sectors"),
            ("global atomics", total.global_atomic, "sectors"),
            ("shared loads", total.shared_load, "wavefronts"),
            ("shared stores", total.shared_store, "wavefronts"),
        ];
        for (name, traffic, unit) in kinds {
            if traffic.requests == 0 {
                continue;
            }
            let note = if unit == "wavefronts" && traffic.excess() > 0 {
                format!(
                    ": {}-way bank conflicts",
                    ratio(traffic.transactions, traffic.ideal)
                )
            } else if unit == "sectors" && traffic.excess() > 0 {
                ": uncoalesced".to_owned()
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "  {name:<15} {} requests, {} {unit} a request (ideal {}){note}",
                crate::units::count(traffic.requests),
                ratio(traffic.transactions, traffic.requests),
                ratio(traffic.ideal, traffic.requests),
            );
        }
        if let Some(lanes) = total.active_lanes() {
            let _ = writeln!(
                out,
                "  {:<15} {lanes:.1} of 32 on average, over {} warp instructions",
                "active lanes",
                crate::units::count(total.inst)
            );
        }
        let costs = match launch.costliest() {
            Some((line, Cost::Transactions(n))) => format!(
                "kernel.cu:{}: {} memory transactions beyond the ideal",
                line.line,
                crate::units::count(n)
            ),
            Some((line, Cost::IdleLanes(n))) => format!(
                "kernel.cu:{}: {} lanes idle in its warps",
                line.line,
                crate::units::count(n)
            ),
            None => {
                "no line: every access as few transactions as it can take, no lane idle".to_owned()
            }
        };
        let _ = writeln!(out, "  {:<15} {costs}", "costs most");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch() -> LaunchCounters {
        let counts = Counts {
            inst: 100,
            lanes: 3000,
            global_load: Traffic {
                requests: 8,
                transactions: 256,
                ideal: 32,
            },
            global_store: Traffic {
                requests: 8,
                transactions: 32,
                ideal: 32,
            },
            global_atomic: Traffic::default(),
            shared_load: Traffic {
                requests: 4,
                transactions: 128,
                ideal: 4,
            },
            shared_store: Traffic::default(),
        };
        LaunchCounters {
            kernel: "_Z4copyPfS_i".to_owned(),
            grid: [2, 1, 1],
            block: [128, 2, 1],
            shared: 1024,
            dynamic_shared: 16,
            registers: 12,
            total: counts,
            lines: vec![
                LineCounts { line: 7, counts },
                LineCounts {
                    line: 9,
                    counts: Counts {
                        inst: 3,
                        lanes: 48,
                        ..Counts::default()
                    },
                },
            ],
        }
    }

    #[test]
    fn a_launch_round_trips_through_its_lines() {
        let text = format!("noise\n{}other\n{}", launch(), launch());
        assert_eq!(LaunchCounters::parse_all(&text), vec![launch(), launch()]);
    }

    #[test]
    fn lines_that_do_not_read_are_passed_over() {
        let text = format!(
            "{COUNTERS_PREFIX}launch kernel=k grid=(1,1) block=(1,1,1)\n\
             {COUNTERS_PREFIX}line kernel=k line=kernel.cu:3 inst=1\n\
             {COUNTERS_PREFIX}launch kernel=k inst=x\n\
             {COUNTERS_PREFIX}launch kernel=k gld=1/2\n\
             {COUNTERS_PREFIX}launch kernel=k what=1\n\
             {COUNTERS_PREFIX}launch kernel=k inst=2 lanes=64\n\
             {COUNTERS_PREFIX}line kernel=other line=kernel.cu:3 inst=1\n\
             {COUNTERS_PREFIX}line kernel=k line=main.cu:3 inst=1\n"
        );
        let launches = LaunchCounters::parse_all(&text);
        assert_eq!(launches.len(), 1);
        assert_eq!((launches[0].total.inst, launches[0].total.lanes), (2, 64));
        assert!(launches[0].lines.is_empty());
    }

    #[test]
    fn the_costliest_line_wastes_transactions_or_else_lanes() {
        let mut launch = launch();
        let (line, cost) = launch.costliest().unwrap();
        assert_eq!((line.line, cost), (7, Cost::Transactions(224 + 124)));
        launch.lines[0].counts = Counts::default();
        let (line, cost) = launch.costliest().unwrap();
        assert_eq!((line.line, cost), (9, Cost::IdleLanes(48)));
        launch.lines.clear();
        assert_eq!(launch.costliest(), None);
    }

    #[test]
    fn the_table_gives_each_kind_per_request_beside_the_ideal() {
        let table = table(&[launch(), launch()]);
        assert_eq!(table.matches("kernel `").count(), 1, "{table}");
        assert!(
            table.contains("2 blocks of 256 threads, 1040 B shared memory"),
            "{table}"
        );
        assert!(
            table.contains(
                "global loads    8 requests, 32.0 sectors a request (ideal 4.0): uncoalesced"
            ),
            "{table}"
        );
        assert!(
            table.contains("shared loads    4 requests, 32.0 wavefronts a request (ideal 1.0): 32.0-way bank conflicts"),
            "{table}"
        );
        assert!(table.contains("30.0 of 32 on average"), "{table}");
        assert!(table.contains("kernel.cu:7: 348 memory"), "{table}");
        assert!(!table.contains("global atomics"), "{table}");
    }
}
