//! What a profiler's pictures show, recorded by the CPU emulator: one
//! definition for the emulator, which records a launch and writes it in
//! the line grammar below, and its readers (the exercise binary's
//! `--accesses`, which draws it: `crate::access_picture`).
//!
//! # What is recorded
//!
//! - For one warp, warp 0 of block 0 (a block's threads in linear order, x
//!   fastest, 32 to a warp, as `crate::emulator_counters` forms them):
//!   each global and shared memory instruction's first warp instruction
//!   (the first time each lane runs it), lane by lane: the address it
//!   accessed and how many bytes. Global addresses are the device's;
//!   shared ones are offsets in the block's shared memory.
//! - For the kernel's output buffer, where the host names one: the block
//!   that wrote each element (a store or an atomic covering any of its
//!   bytes), the last in the grid's order where several did, and which
//!   elements no thread wrote.
//!
//! # The lines
//!
//! ```text
//! cuda-course accesses: launch kernel=vecadd grid=(2,1,1) block=(128,1,1)
//! cuda-course accesses: warp line=kernel.cu:14 space=global kind=load bytes=4 lanes=0:7f0000001000,1:7f0000001004
//! cuda-course accesses: output elements=1000 element-bytes=4
//! cuda-course accesses: written from=0 count=128 block=0
//! cuda-course accesses: written from=256 count=744 block=-
//! ```
//!
//! After [`ACCESSES_PREFIX`]: `launch`, then a `warp` line for each memory
//! instruction warp 0 ran (`line=-` where it has no `kernel.cu` line;
//! `lanes` are `lane:address`, the address in hexadecimal), then, where an
//! output was named, `output` and its elements in runs of one writer
//! (`block=-`: none). Readers take any text without panicking; a line
//! they cannot read is left out.

use std::fmt;

/// How the emulator starts each line it records. Not the findings' or the
/// counters' prefix: no reader of those reads one of these.
pub const ACCESSES_PREFIX: &str = "cuda-course accesses: ";

/// The emulator's entry point that turns recording on for the launches
/// that follow, naming the output buffer whose writers it records, or off:
/// `extern "C" fn(on: u32, output: u64, output_bytes: u64, element_bytes: u32)`
/// (an output of 0 bytes: none). Found with `dlsym`, as
/// `crate::emulator_counters::COUNT_SYMBOL` is; a GPU's driver has none.
pub const RECORD_SYMBOL: &std::ffi::CStr = c"cuda_course_emulator_record";

/// The emulator's entry point that hands over the lines of the launches
/// recorded since the last call, with the contract of
/// `crate::emulator_counters::COUNTED_SYMBOL`.
pub const RECORDED_SYMBOL: &std::ffi::CStr = c"cuda_course_emulator_recorded";

/// Where an access went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    Global,
    Shared,
}

/// What an access did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Load,
    Store,
    /// `atom` or `red`.
    Atomic,
}

impl Space {
    pub fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Shared => "shared",
        }
    }
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Load => "load",
            Kind::Store => "store",
            Kind::Atomic => "atomic",
        }
    }
}

/// One lane's access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lane {
    pub lane: u8,
    pub address: u64,
}

/// One memory instruction's first warp instruction in warp 0 of block 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarpAccess {
    /// Its `kernel.cu` line, where it has one.
    pub line: Option<u32>,
    pub space: Space,
    pub kind: Kind,
    /// Bytes each lane accessed.
    pub bytes: u32,
    /// The lanes that made it, in lane order.
    pub lanes: Vec<Lane>,
}

/// A global request's 32-byte sectors and 128-byte lines.
pub const SECTOR_BYTES: u64 = 32;
pub const LINE_BYTES: u64 = 128;
/// Shared memory's banks, each 4 bytes wide.
pub const BANKS: u64 = 32;

impl WarpAccess {
    /// The 32-byte sectors its lanes touch, in order (global memory).
    pub fn sectors(&self) -> Vec<u64> {
        let mut sectors: Vec<u64> = self
            .lanes
            .iter()
            .flat_map(|l| {
                l.address / SECTOR_BYTES
                    ..=(l.address + u64::from(self.bytes.max(1)) - 1) / SECTOR_BYTES
            })
            .collect();
        sectors.sort_unstable();
        sectors.dedup();
        sectors
    }

    /// The fewest sectors the distinct bytes its lanes touch fit in.
    pub fn ideal_sectors(&self) -> u64 {
        let mut spans: Vec<(u64, u64)> = self
            .lanes
            .iter()
            .map(|l| (l.address, l.address + u64::from(self.bytes.max(1))))
            .collect();
        spans.sort_unstable();
        let (mut distinct, mut reached) = (0, 0);
        for (start, end) in spans {
            let start = start.max(reached);
            if end > start {
                distinct += end - start;
                reached = end;
            }
        }
        distinct.div_ceil(SECTOR_BYTES)
    }

    /// Lanes served together by shared memory: all 32 for accesses of up
    /// to 4 bytes, 16 for 8, 8 for 16.
    pub fn lanes_per_phase(&self) -> u8 {
        match self.bytes {
            0..=4 => 32,
            5..=8 => 16,
            _ => 8,
        }
    }

    /// For each phase with active lanes and each bank, the distinct 4-byte
    /// words its lanes access in that bank (shared memory).
    pub fn words_by_phase_and_bank(&self) -> Vec<[u32; BANKS as usize]> {
        let per_phase = self.lanes_per_phase();
        let mut phases = Vec::new();
        for phase in self
            .lanes
            .chunk_by(|a, b| a.lane / per_phase == b.lane / per_phase)
        {
            let mut words: Vec<u64> = phase
                .iter()
                .flat_map(|l| l.address / 4..=(l.address + u64::from(self.bytes.max(1)) - 1) / 4)
                .collect();
            words.sort_unstable();
            words.dedup();
            let mut banks = [0u32; BANKS as usize];
            for word in words {
                banks[(word % BANKS) as usize] += 1;
            }
            phases.push(banks);
        }
        phases
    }

    /// The wavefronts it takes (shared memory): in each phase, as many as
    /// the most distinct words one bank holds; and the fewest, one a phase.
    pub fn wavefronts(&self) -> (u64, u64) {
        let phases = self.words_by_phase_and_bank();
        let taken = phases
            .iter()
            .map(|banks| u64::from(banks.iter().copied().max().unwrap_or(1).max(1)))
            .sum();
        (taken, phases.len() as u64)
    }

    /// Transactions beyond the fewest: sectors in global memory,
    /// wavefronts in shared.
    pub fn excess(&self) -> u64 {
        match self.space {
            Space::Global => (self.sectors().len() as u64).saturating_sub(self.ideal_sectors()),
            Space::Shared => {
                let (taken, ideal) = self.wavefronts();
                taken.saturating_sub(ideal)
            }
        }
    }

    fn write(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let line = self
            .line
            .map_or("-".to_owned(), |l| format!("kernel.cu:{l}"));
        write!(
            f,
            "{ACCESSES_PREFIX}warp line={line} space={} kind={} bytes={} lanes=",
            self.space.name(),
            self.kind.name(),
            self.bytes
        )?;
        for (i, lane) in self.lanes.iter().enumerate() {
            let comma = if i > 0 { "," } else { "" };
            write!(f, "{comma}{}:{:x}", lane.lane, lane.address)?;
        }
        writeln!(f)
    }

    fn parse(head: &str) -> Option<WarpAccess> {
        let mut access = WarpAccess {
            line: None,
            space: Space::Global,
            kind: Kind::Load,
            bytes: 0,
            lanes: Vec::new(),
        };
        for field in head.split(' ').filter(|f| !f.is_empty()) {
            let (key, value) = field.split_once('=')?;
            match key {
                "line" if value == "-" => access.line = None,
                "line" => access.line = Some(value.strip_prefix("kernel.cu:")?.parse().ok()?),
                "space" => {
                    access.space = match value {
                        "global" => Space::Global,
                        "shared" => Space::Shared,
                        _ => return None,
                    }
                }
                "kind" => {
                    access.kind = match value {
                        "load" => Kind::Load,
                        "store" => Kind::Store,
                        "atomic" => Kind::Atomic,
                        _ => return None,
                    }
                }
                "bytes" => access.bytes = value.parse().ok()?,
                "lanes" => {
                    for pair in value.split(',').filter(|p| !p.is_empty()) {
                        let (lane, address) = pair.split_once(':')?;
                        let lane: u8 = lane.parse().ok().filter(|&l| l < 32)?;
                        let address = u64::from_str_radix(address, 16).ok()?;
                        access.lanes.push(Lane { lane, address });
                    }
                }
                _ => return None,
            }
        }
        access.lanes.sort_by_key(|l| l.lane);
        Some(access)
    }
}

/// A run of consecutive output elements with one writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    pub from: u64,
    pub count: u64,
    /// The block's linear index in the grid (x fastest); None: no thread.
    pub block: Option<u64>,
}

/// The output buffer and who wrote it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Output {
    pub elements: u64,
    pub element_bytes: u32,
    /// Runs covering elements 0 to `elements`, in order.
    pub runs: Vec<Written>,
}

impl Output {
    /// From each element's writer, in element order.
    pub fn from_writers(element_bytes: u32, writers: &[Option<u64>]) -> Output {
        let mut runs: Vec<Written> = Vec::new();
        for (i, &block) in writers.iter().enumerate() {
            match runs.last_mut() {
                Some(run) if run.block == block => run.count += 1,
                _ => runs.push(Written {
                    from: i as u64,
                    count: 1,
                    block,
                }),
            }
        }
        Output {
            elements: writers.len() as u64,
            element_bytes,
            runs,
        }
    }

    /// Elements no thread wrote.
    pub fn unwritten(&self) -> u64 {
        self.runs
            .iter()
            .filter(|r| r.block.is_none())
            .map(|r| r.count)
            .sum()
    }

    /// The writer of element `i`: Some(None) where no thread wrote it, None
    /// past the end.
    pub fn writer(&self, i: u64) -> Option<Option<u64>> {
        let at = self.runs.partition_point(|r| r.from + r.count <= i);
        self.runs.get(at).filter(|r| r.from <= i).map(|r| r.block)
    }
}

/// One launch's recording.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaunchAccesses {
    /// The kernel's PTX name.
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Warp 0 of block 0's memory instructions, in the kernel's order.
    pub warp: Vec<WarpAccess>,
    /// Where the host named an output buffer.
    pub output: Option<Output>,
}

fn triple([x, y, z]: [u32; 3]) -> String {
    format!("({x},{y},{z})")
}

fn read_triple(text: &str) -> Option<[u32; 3]> {
    let inner = text.strip_prefix('(')?.strip_suffix(')')?;
    let mut parts = inner.split(',').map(|p| p.parse::<u32>().ok());
    let value = [parts.next()??, parts.next()??, parts.next()??];
    parts.next().is_none().then_some(value)
}

impl fmt::Display for LaunchAccesses {
    /// Its lines, each after [`ACCESSES_PREFIX`] and ending in a line break.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{ACCESSES_PREFIX}launch kernel={} grid={} block={}",
            self.kernel,
            triple(self.grid),
            triple(self.block)
        )?;
        for access in &self.warp {
            access.write(f)?;
        }
        if let Some(output) = &self.output {
            writeln!(
                f,
                "{ACCESSES_PREFIX}output elements={} element-bytes={}",
                output.elements, output.element_bytes
            )?;
            for run in &output.runs {
                let block = run.block.map_or("-".to_owned(), |b| b.to_string());
                writeln!(
                    f,
                    "{ACCESSES_PREFIX}written from={} count={} block={block}",
                    run.from, run.count
                )?;
            }
        }
        Ok(())
    }
}

impl LaunchAccesses {
    /// Every launch in `text`: the lines after [`ACCESSES_PREFIX`], in
    /// order; anything else is passed over, and so is a line that does not
    /// read.
    pub fn parse_all(text: &str) -> Vec<LaunchAccesses> {
        let mut launches: Vec<LaunchAccesses> = Vec::new();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix(ACCESSES_PREFIX) else {
                continue;
            };
            if let Some(head) = rest.strip_prefix("launch ") {
                if let Some(launch) = Self::parse_launch(head) {
                    launches.push(launch);
                }
                continue;
            }
            let Some(last) = launches.last_mut() else {
                continue;
            };
            if let Some(head) = rest.strip_prefix("warp ") {
                if let Some(access) = WarpAccess::parse(head) {
                    last.warp.push(access);
                }
            } else if let Some(head) = rest.strip_prefix("output ") {
                last.output = Self::parse_output(head);
            } else if let Some(head) = rest.strip_prefix("written ")
                && let Some(output) = last.output.as_mut()
                && let Some(run) = Self::parse_run(head)
                && run.from == output.runs.last().map_or(0, |r| r.from + r.count)
                && run.from + run.count <= output.elements
            {
                output.runs.push(run);
            }
        }
        launches
    }

    fn parse_launch(head: &str) -> Option<LaunchAccesses> {
        let mut launch = LaunchAccesses::default();
        for field in head.split(' ').filter(|f| !f.is_empty()) {
            let (key, value) = field.split_once('=')?;
            match key {
                "kernel" => launch.kernel = value.to_owned(),
                "grid" => launch.grid = read_triple(value)?,
                "block" => launch.block = read_triple(value)?,
                _ => return None,
            }
        }
        (!launch.kernel.is_empty()).then_some(launch)
    }

    fn parse_output(head: &str) -> Option<Output> {
        let mut output = Output::default();
        for field in head.split(' ').filter(|f| !f.is_empty()) {
            let (key, value) = field.split_once('=')?;
            match key {
                "elements" => output.elements = value.parse().ok()?,
                "element-bytes" => output.element_bytes = value.parse().ok()?,
                _ => return None,
            }
        }
        Some(output)
    }

    fn parse_run(head: &str) -> Option<Written> {
        let (mut from, mut count, mut block) = (None, None, None);
        for field in head.split(' ').filter(|f| !f.is_empty()) {
            let (key, value) = field.split_once('=')?;
            match key {
                "from" => from = Some(value.parse().ok()?),
                "count" => count = Some(value.parse().ok().filter(|&c| c > 0)?),
                "block" if value == "-" => block = Some(None),
                "block" => block = Some(Some(value.parse().ok()?)),
                _ => return None,
            }
        }
        Some(Written {
            from: from?,
            count: count?,
            block: block?,
        })
    }

    /// The access a picture shows for `space`: the load that costs most
    /// (transactions beyond the fewest), the first such in the kernel's
    /// order; where the warp made no load there, any access that costs
    /// most; None where it made none there.
    pub fn costliest(&self, space: Space) -> Option<&WarpAccess> {
        let in_space: Vec<&WarpAccess> = self.warp.iter().filter(|a| a.space == space).collect();
        let loads: Vec<&WarpAccess> = in_space
            .iter()
            .copied()
            .filter(|a| a.kind == Kind::Load)
            .collect();
        let candidates = if loads.is_empty() { in_space } else { loads };
        // max_by_key keeps the last of equals: reversed, the first.
        candidates.into_iter().rev().max_by_key(|a| a.excess())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warp(space: Space, bytes: u32, at: impl Fn(u64) -> u64) -> WarpAccess {
        WarpAccess {
            line: Some(12),
            space,
            kind: Kind::Load,
            bytes,
            lanes: (0..32)
                .map(|l| Lane {
                    lane: l as u8,
                    address: at(l),
                })
                .collect(),
        }
    }

    #[test]
    fn sectors_and_wavefronts_are_the_counters_definitions() {
        // 32 consecutive floats: 128 bytes, 4 sectors, none wasted.
        let coalesced = warp(Space::Global, 4, |l| 0x1000 + 4 * l);
        assert_eq!(coalesced.sectors(), vec![0x80, 0x81, 0x82, 0x83]);
        assert_eq!((coalesced.ideal_sectors(), coalesced.excess()), (4, 0));
        // A stride of 32 floats: a sector a lane, 28 beyond the fewest.
        let strided = warp(Space::Global, 4, |l| 0x1000 + 128 * l);
        assert_eq!((strided.sectors().len(), strided.excess()), (32, 28));
        // A column of a 32x32 tile: 32 words in bank 0.
        let column = warp(Space::Shared, 4, |l| 128 * l);
        assert_eq!(column.wavefronts(), (32, 1));
        assert_eq!(column.words_by_phase_and_bank()[0][0], 32);
        // 16 bytes a lane, consecutive: four phases of one wavefront.
        let quads = warp(Space::Shared, 16, |l| 16 * l);
        assert_eq!((quads.wavefronts(), quads.excess()), ((4, 4), 0));
    }

    fn launch() -> LaunchAccesses {
        let mut second = warp(Space::Global, 4, |l| 0x2000 + 128 * l);
        second.line = None;
        second.kind = Kind::Store;
        LaunchAccesses {
            kernel: "vecadd".to_owned(),
            grid: [2, 1, 1],
            block: [128, 1, 1],
            warp: vec![warp(Space::Global, 4, |l| 0x1000 + 4 * l), second],
            output: Some(Output::from_writers(
                4,
                &[Some(0), Some(0), Some(1), None, None],
            )),
        }
    }

    #[test]
    fn a_launch_round_trips_through_its_lines() {
        let text = format!("noise\n{}other\n{}", launch(), launch());
        assert_eq!(LaunchAccesses::parse_all(&text), vec![launch(), launch()]);
    }

    #[test]
    fn runs_say_who_wrote_each_element() {
        let output = launch().output.unwrap();
        assert_eq!(output.runs.len(), 3);
        assert_eq!(output.unwritten(), 2);
        assert_eq!(output.writer(2), Some(Some(1)));
        assert_eq!(output.writer(4), Some(None));
        assert_eq!(output.writer(5), None);
    }

    #[test]
    fn lines_that_do_not_read_are_passed_over() {
        let text = format!(
            "{ACCESSES_PREFIX}warp line=kernel.cu:3 space=global kind=load bytes=4 lanes=0:10\n\
             {ACCESSES_PREFIX}launch kernel=k grid=(1,1,1) block=(32,1,1)\n\
             {ACCESSES_PREFIX}warp line=kernel.cu:3 space=local kind=load bytes=4 lanes=0:10\n\
             {ACCESSES_PREFIX}warp line=kernel.cu:3 space=global kind=load bytes=4 lanes=40:10\n\
             {ACCESSES_PREFIX}warp line=kernel.cu:4 space=shared kind=store bytes=4 lanes=1:zz\n\
             {ACCESSES_PREFIX}written from=0 count=1 block=0\n\
             {ACCESSES_PREFIX}output elements=2 element-bytes=4\n\
             {ACCESSES_PREFIX}written from=1 count=1 block=0\n\
             {ACCESSES_PREFIX}written from=0 count=3 block=0\n\
             {ACCESSES_PREFIX}written from=0 count=2 block=x\n"
        );
        let launches = LaunchAccesses::parse_all(&text);
        assert_eq!(launches.len(), 1);
        assert!(launches[0].warp.is_empty());
        assert_eq!(launches[0].output.as_ref().unwrap().runs, vec![]);
    }

    #[test]
    fn the_costliest_load_is_shown_and_the_first_of_equals() {
        let mut launch = launch();
        assert_eq!(launch.costliest(Space::Global).unwrap().line, Some(12));
        launch.warp[1].kind = Kind::Load;
        assert_eq!(launch.costliest(Space::Global).unwrap().line, None);
        launch.warp[0] = launch.warp[1].clone();
        launch.warp[0].line = Some(3);
        assert_eq!(launch.costliest(Space::Global).unwrap().line, Some(3));
        assert!(launch.costliest(Space::Shared).is_none());
    }
}
