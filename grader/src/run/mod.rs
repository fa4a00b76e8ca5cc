//! Making the runs: whether the kernels run on a GPU or the CPU emulator
//! ([`device`]), whether a run above 2^31 elements fits the node
//! ([`memory`]), which runs share a GPU and which have it alone ([`lane`],
//! its holds [`turns`], and the timing gate through which the course's
//! binary has it alone only while it times, [`gate`]), what one
//! exercise's runs may take of it beyond their own making ([`budget`]), one job, a planned
//! run made in its role ([`job`]), several of an exercise's runs of the
//! course's binary in one process ([`batch`]), a student's binary through
//! the grader's GPU broker and the broker's record of its driver calls
//! ([`brokered`], [`trace`]), compute-sanitizer over a
//! kernel ([`sanitizer`]), and one exercise's bench, through which the
//! dispatcher (`grade::exercise`) has every one of its processes made
//! ([`mod@bench`]). What comes back is raw; the judge says what it amounts to.

pub mod batch;
pub mod bench;
pub mod brokered;
pub mod budget;
pub mod device;
pub mod gate;
pub mod job;
pub mod lane;
pub mod memory;
pub mod sanitizer;
pub mod trace;
pub mod turns;
