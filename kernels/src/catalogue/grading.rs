//! What the grader does with each exercise, where it is data: the runs of
//! its test plan by their stable tags ([`RunSpec`]), which of them is timed
//! for the speed point, which pass 2^31 elements, which the CPU emulator
//! leaves out, and the point scale ([`points`]) from which every
//! exercise's maximum follows ([`Exercise::full_marks`]). The sizes each
//! run draws from the seed, and the recheck of its report, are code: the
//! grader's module for the exercise's family.

use super::Exercise;

/// A planned run's stable name: results, feedback and the grader's own
/// test class name runs by it, so a run's description can be reworded
/// without touching them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(
    feature = "protocol",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "kebab-case")
)]
pub enum RunTag {
    /// n = 1.
    OneElement,
    /// Blocks of one thread, a grid smaller than n.
    BlockOfOne,
    /// A block of an odd size (no power of two, a partial last warp).
    OddBlock,
    /// About one wave of blocks over many elements: every thread loops long.
    OneWave,
    /// A small n where one missing element is above float32's resolution.
    OneElementShows,
    /// The largest block and fewer threads in the grid than elements.
    GridSmallerThanN,
    /// A few blocks over millions of elements: every thread loops.
    EveryThreadLoops,
    /// The binary's default grid at a large n.
    DefaultGrid,
    /// The default inputs at a large n.
    DefaultInputs,
    /// Above 2^31 elements: an `int` index overflows before the end.
    PastInt,
    /// A width below every block edge.
    SmallerThanABlock,
    /// A width that leaves partial tiles on the right and bottom.
    PartialTiles,
    /// The largest block the exercise takes.
    LargestBlock,
    /// A large width of whole tiles.
    WholeTiles,
    /// memspace-timing: a small grid, each thread reading its own values.
    PerThreadReads,
    /// memspace-timing: the default grid of the largest blocks, every
    /// thread reading the same values.
    UniformReads,
    /// streams-overlap: uneven chunks over three streams.
    UnevenChunks,
    /// streams-overlap: chunks no grid of 65535 blocks covers without a
    /// grid-stride loop.
    ChunksPastTheGrid,
}

impl RunTag {
    /// The tag as results.json and the feedback write it.
    pub const fn name(self) -> &'static str {
        match self {
            RunTag::OneElement => "one-element",
            RunTag::BlockOfOne => "block-of-one",
            RunTag::OddBlock => "odd-block",
            RunTag::OneWave => "one-wave",
            RunTag::OneElementShows => "one-element-shows",
            RunTag::GridSmallerThanN => "grid-smaller-than-n",
            RunTag::EveryThreadLoops => "every-thread-loops",
            RunTag::DefaultGrid => "default-grid",
            RunTag::DefaultInputs => "default-inputs",
            RunTag::PastInt => "past-int",
            RunTag::SmallerThanABlock => "smaller-than-a-block",
            RunTag::PartialTiles => "partial-tiles",
            RunTag::LargestBlock => "largest-block",
            RunTag::WholeTiles => "whole-tiles",
            RunTag::PerThreadReads => "per-thread-reads",
            RunTag::UniformReads => "uniform-reads",
            RunTag::UnevenChunks => "uneven-chunks",
            RunTag::ChunksPastTheGrid => "chunks-past-the-grid",
        }
    }
}

impl std::fmt::Display for RunTag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A class of launch shapes a kernel must handle. Each exercise lists its
/// classes ([`Exercise::shapes`]) and every grading makes at least one run
/// in each: the seed chooses the values inside a class, never whether a
/// class is covered. The grader reads a run's classes from its arguments
/// (`grader::plan::shapes`) and its tests check the cover at many seeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Shape {
    /// Blocks of one thread.
    BlockOfOne,
    /// Blocks of one warp, 32 threads.
    OneWarp,
    /// Blocks of two warps, 64 threads.
    TwoWarps,
    /// Blocks whose size is no power of two.
    NoPowerOfTwoBlock,
    /// The binary's default block.
    DefaultBlock,
    /// The largest block: 1024 threads (32 × 32 for matmul).
    LargestBlock,
    /// matmul: the smallest block edge the exercise takes.
    SmallestEdge,
    /// n = 1.
    OneElement,
    /// n one off a multiple of the block.
    NearBlockMultiple,
    /// n one off a multiple of the grid's threads.
    NearGridMultiple,
    /// A grid of one block.
    OneBlock,
    /// Fewer threads in the grid than elements: every thread loops.
    FewerThreadsThanElements,
    /// n above 2^31.
    PastInt,
    /// matmul: a width below the block edge.
    WidthBelowEdge,
    /// matmul: a width one past a multiple of the block edge.
    WidthOnePastEdge,
    /// matmul: a width of whole blocks.
    WidthOfWholeEdges,
    /// matmul: the smallest edge at a width of several blocks, the last
    /// partial.
    PartialBlocksOfTheSmallestEdge,
    /// matmul: the largest edge (32) at a width of several blocks, the last
    /// partial.
    PartialBlocksOfTheLargestEdge,
    /// streams-overlap: chunks whose lengths are no multiple of the block.
    ChunksOffTheBlock,
    /// streams-overlap: a chunk longer than 65535 blocks of 1024 threads.
    ChunksPastTheGrid,
}

impl Shape {
    /// What the class is, for the book's list and a test's message.
    pub const fn words(self) -> &'static str {
        match self {
            Shape::BlockOfOne => "blocks of one thread",
            Shape::OneWarp => "blocks of one warp (32 threads)",
            Shape::TwoWarps => "blocks of two warps (64 threads)",
            Shape::NoPowerOfTwoBlock => "a block size that is no power of two",
            Shape::DefaultBlock => "the default block",
            Shape::LargestBlock => "the largest block",
            Shape::SmallestEdge => "the smallest block edge",
            Shape::OneElement => "n = 1",
            Shape::NearBlockMultiple => "n one off a multiple of the block",
            Shape::NearGridMultiple => "n one off a multiple of the grid's threads",
            Shape::OneBlock => "a grid of one block",
            Shape::FewerThreadsThanElements => "fewer threads in the grid than elements",
            Shape::PastInt => "n above 2^31",
            Shape::WidthBelowEdge => "a width below the block edge",
            Shape::WidthOnePastEdge => "a width one past a multiple of the block edge",
            Shape::WidthOfWholeEdges => "a width of whole blocks",
            Shape::PartialBlocksOfTheSmallestEdge => {
                "the smallest block edge at a width of several blocks, the last partial"
            }
            Shape::PartialBlocksOfTheLargestEdge => {
                "the largest block edge at a width of several blocks, the last partial"
            }
            Shape::ChunksOffTheBlock => "chunks whose lengths are no multiple of the block",
            Shape::ChunksPastTheGrid => "a chunk longer than a grid of 65535 blocks covers",
        }
    }
}

/// What an exercise's kernel must be seen doing, beyond its answer: its
/// lesson, which a kernel can skip and still be right (threads that each
/// take a contiguous run, where neighbours should read neighbours; a tiled
/// kernel that reads its operands from global memory anyway). The grader
/// counts it on the CPU emulator, whose counters (`crate::emulator_counters`)
/// are the hardware's as Nsight Compute defines them, at one planned run
/// capped as the emulator caps it, over the kernel's first launch: the
/// kernel in the course's host code, so nothing the student's process says
/// is believed. The exercise's chapter says what is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lesson {
    /// The planned run whose arguments the counted run takes.
    pub run: RunTag,
    pub shows: Behaviour,
}

/// A behaviour the emulator's counters show (see [`Lesson`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    feature = "protocol",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "kebab-case")
)]
pub enum Behaviour {
    /// Neighbouring threads read neighbouring words: the 32-byte sectors
    /// the kernel's global loads touch are at most
    /// [`Behaviour::MAX_SECTORS_OVER_FEWEST`] times the fewest their bytes
    /// fit in, request by request. A grid-stride loop is 1; a thread that
    /// reads up to four neighbouring words at a time (an unrolled loop, a
    /// `float4`) is within it; a thread that walks a contiguous run of its
    /// own, 32 lanes in 32 sectors, is 8.
    CoalescedLoads,
    /// Each warp loads its operands from global memory once a tile: its
    /// global load requests are at most [`Behaviour::MAX_TILED_REQUESTS`]
    /// of the 2·W a naive kernel's warp makes at width W (one row of M and
    /// one column of N, a word a request). Tiles of T make 2·⌈W/T⌉, 1/T of
    /// it (32 tiles: 0.03); a kernel that tiles one operand only makes
    /// about W, half of it.
    TiledLoads,
}

impl Behaviour {
    /// [`Behaviour::CoalescedLoads`]' most sectors over the fewest.
    pub const MAX_SECTORS_OVER_FEWEST: f64 = 4.0;
    /// [`Behaviour::TiledLoads`]' most requests a warp, over a naive
    /// kernel's.
    pub const MAX_TILED_REQUESTS: f64 = 0.25;

    /// What is counted and what passes, for the chapter and the feedback.
    pub const fn words(self) -> &'static str {
        match self {
            Behaviour::CoalescedLoads => {
                "coalesced loads: the 32-byte sectors the kernel's global loads touch, at most 4 \
                 times the fewest their bytes fit in (a grid-stride loop touches the fewest)"
            }
            Behaviour::TiledLoads => {
                "tiled loads: each warp's global load requests, at most a quarter of the 2·W a \
                 naive kernel's warp makes at width W"
            }
        }
    }
}

/// One run of an exercise's plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunSpec {
    pub tag: RunTag,
    /// The speed point compares this run's kernel time with the course's
    /// kernel's.
    pub timed: bool,
    /// Above 2^31 elements: only the kernel's run, in the course's host
    /// code, worth [`points::KERNEL_ONLY`], and made only where the node has
    /// the memory.
    pub past_int: bool,
    /// What the CPU emulator does with it.
    pub emulated: Emulated,
}

/// A run on the CPU emulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Emulated {
    /// Made at sizes a CPU runs in seconds, keeping what it is about.
    Capped,
    /// Left out, no points either way: no size a CPU runs in seconds keeps
    /// what it is about, for this reason.
    TooSlow(&'static str),
}

impl RunSpec {
    /// An ordinary run: both the kernel's and the student's binary's,
    /// capped on the emulator.
    pub const fn plain(tag: RunTag) -> RunSpec {
        RunSpec {
            tag,
            timed: false,
            past_int: false,
            emulated: Emulated::Capped,
        }
    }

    /// The speed point's run.
    pub const fn timed(tag: RunTag) -> RunSpec {
        RunSpec {
            timed: true,
            ..RunSpec::plain(tag)
        }
    }

    /// A run above 2^31 elements.
    pub const fn past_int(tag: RunTag) -> RunSpec {
        RunSpec {
            past_int: true,
            emulated: Emulated::TooSlow("above 2^31 elements a CPU takes minutes"),
            ..RunSpec::plain(tag)
        }
    }

    /// The points of the run when it passes: the kernel's and the host's
    /// shares, or the kernel's alone above 2^31.
    pub const fn points(&self) -> u32 {
        if self.past_int {
            points::KERNEL_ONLY
        } else {
            points::RUN
        }
    }
}

/// The point scale, the same for every exercise.
pub mod points {
    /// The kernel's PTX shows what the exercise is about.
    pub const PTX: u32 = 1;
    /// A planned run that passes, the kernel's share and the host's.
    pub const RUN: u32 = 2;
    /// Of [`RUN`], what the kernel's run in the course's host code earns;
    /// the rest is the student's binary's.
    pub const KERNEL_SHARE: u32 = 1;
    /// A run above 2^31 elements: the kernel's run alone.
    pub const KERNEL_ONLY: u32 = 1;
    /// compute-sanitizer finds nothing in the first run.
    pub const MEMORY_SAFETY: u32 = 1;
    /// The timed run's kernel reaches [`SPEED_FRACTION`] of the course's
    /// kernel's speed.
    pub const SPEED: u32 = 1;
    /// What the kernel does on the CPU emulator shows the exercise's
    /// lesson ([`super::Lesson`]).
    pub const LESSON: u32 = 1;
    /// The fraction of the course's own kernel's speed (its time over the
    /// student's, at the timed run's size, one right after the other on the
    /// same GPU) that earns the speed point: far below what any sound kernel
    /// reaches, far above a kernel that moves its data many times over.
    pub const SPEED_FRACTION: f64 = 0.5;
    /// matmul-tiled's fraction: its lesson is beating the naive kernel,
    /// which reaches about 0.57 of the course's tiled kernel's speed at
    /// W = 1024 on an H100 (bench/runs/2026-11-21-h100-gpu-suite, the matmul table), so
    /// half would pass a kernel that tiles nothing.
    pub const TILED_SPEED_FRACTION: f64 = 0.75;
}

/// What one exercise can earn where every point is assessed: on a GPU,
/// with compute-sanitizer, every planned run fitting the node. The book
/// states these numbers, and grader/tests/book.rs checks them against this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FullMarks {
    /// The kernel's PTX shows what the exercise is about.
    pub ptx: u32,
    /// Planned runs made twice, the kernel's and the student's binary's.
    pub runs: usize,
    /// The points each of those earns.
    pub run_points: u32,
    /// Planned runs of the kernel alone (above 2^31 elements).
    pub kernel_runs: usize,
    /// The points each of those earns.
    pub kernel_run_points: u32,
    pub memory_safety: u32,
    /// 0 where the exercise has no timed run.
    pub speed: u32,
    /// 0 where the exercise has no lesson counted ([`Lesson`]).
    pub lesson: u32,
}

impl FullMarks {
    /// Every point together: the maximum a grade is out of.
    pub fn points(&self) -> u32 {
        // Counts of runs are a handful.
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        self.ptx
            + count(self.runs) * self.run_points
            + count(self.kernel_runs) * self.kernel_run_points
            + self.memory_safety
            + self.speed
            + self.lesson
    }
}

impl Exercise {
    /// What the exercise can earn on a GPU with every point assessed: its
    /// PTX, every planned run, memory safety (with any run to check), speed
    /// (with a timed run) and its lesson (where one is counted).
    pub fn full_marks(&self) -> FullMarks {
        let (kernel_only, twice): (Vec<&RunSpec>, Vec<&RunSpec>) =
            self.runs.iter().partition(|run| run.past_int);
        let each = |runs: &[&RunSpec]| runs.first().map_or(0, |run| run.points());
        FullMarks {
            ptx: points::PTX,
            runs: twice.len(),
            run_points: each(&twice),
            kernel_runs: kernel_only.len(),
            kernel_run_points: each(&kernel_only),
            memory_safety: if self.runs.is_empty() {
                0
            } else {
                points::MEMORY_SAFETY
            },
            speed: if self.runs.iter().any(|r| r.timed) {
                points::SPEED
            } else {
                0
            },
            lesson: if self.lesson.is_some() {
                points::LESSON
            } else {
                0
            },
        }
    }

    /// The fraction of the course's own kernel's speed that earns the speed
    /// point: what the exercise's lesson buys.
    pub fn speed_fraction(&self) -> f64 {
        match self.id {
            super::ExerciseId::MatmulTiled => points::TILED_SPEED_FRACTION,
            _ => points::SPEED_FRACTION,
        }
    }

    /// The run of this tag in the exercise's plan.
    pub fn run(&self, tag: RunTag) -> Option<&'static RunSpec> {
        self.runs.iter().find(|r| r.tag == tag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::EXERCISES;

    #[test]
    fn every_plan_has_runs_with_distinct_tags_and_at_most_one_timed() {
        for exercise in EXERCISES {
            assert!(!exercise.runs.is_empty(), "{}", exercise.name);
            let mut tags: Vec<RunTag> = exercise.runs.iter().map(|r| r.tag).collect();
            tags.sort();
            tags.dedup();
            assert_eq!(tags.len(), exercise.runs.len(), "{}", exercise.name);
            assert!(exercise.runs.iter().filter(|r| r.timed).count() <= 1);
            // The first run is the sanitizers': small, never past 2^31.
            assert!(!exercise.runs[0].past_int, "{}", exercise.name);
        }
    }

    #[test]
    fn full_marks_count_each_run_s_points_and_the_checks_it_has() {
        for exercise in EXERCISES {
            let marks = exercise.full_marks();
            let runs: u32 = exercise.runs.iter().map(RunSpec::points).sum();
            let timed = u32::from(exercise.runs.iter().any(|r| r.timed));
            let lesson = u32::from(exercise.lesson.is_some());
            assert_eq!(
                marks.points(),
                points::PTX
                    + runs
                    + points::MEMORY_SAFETY
                    + timed * points::SPEED
                    + lesson * points::LESSON,
                "{}",
                exercise.name
            );
            assert_eq!(marks.runs + marks.kernel_runs, exercise.runs.len());
        }
        // vecadd-anyN by hand: PTX 1, 6 runs of 2, 1 run of the kernel
        // alone of 1, memory safety 1, speed 1, its lesson 1.
        assert_eq!(EXERCISES[0].full_marks().points(), 17);
    }

    #[test]
    fn a_lesson_is_counted_at_a_run_of_its_own_plan_that_the_emulator_makes() {
        for exercise in EXERCISES {
            if let Some(lesson) = exercise.lesson {
                let run = exercise.run(lesson.run).expect("a planned run");
                assert_eq!(run.emulated, Emulated::Capped, "{}", exercise.name);
                assert!(!run.past_int, "{}", exercise.name);
            }
        }
    }
}
