//! One GPU's lanes, shared by the workers grading on it: most runs share the
//! GPU (correctness runs and compute-sanitizer's tools judge no time, so
//! several processes on one GPU change no verdict), and a run whose verdict
//! reads a time has the GPU alone while it times, waiting for every run in
//! flight to end: no time is taken while another process uses the GPU.
//! While a run waits to be alone no new long run starts (a sanitizer's
//! tool, a run above 2^31 elements), and no short one once no long one is
//! in flight (`run::turns`), so the GPU drains in the time of a short
//! run; the runs waiting to be alone then go one after another. The course's binary (the speed point's runs, the
//! student's kernel and the course's own, and streams' pipelines) says when
//! it times through the timing gate (`run::gate`): it shares the GPU but
//! for its timed launches. The student's own binary, whose host code could
//! say anything, has the GPU alone for its whole process where its verdict
//! reads a time (streams' overlap), as does every run made again alone. A
//! run above 2^31 elements shares the GPU but reserves its memory from the
//! node's capacity, measured once with nothing running, so concurrent large
//! runs never hold more than the node has, and whether such a run fits is
//! the same decision at any `--jobs`.
//!
//! With several GPUs (`--gpus`) their lanes share the node ([`Node`]): its
//! host memory, cores and the copies' path to host memory. A run alone is
//! alone on the node, every GPU drained: streams' overlap times copies to
//! and from host memory, which another GPU's copies and host work slow (a
//! solution's pipeline measured 0.82 of serial beside the other GPU's runs,
//! where alone on the node it measures 0.61 to 0.72, `bench/runs/2026-11-30-h200x2-two-gpus`,
//! 2026-11-30), and a run made again alone is made so that nothing beside it
//! could have made it end. A gated run still has only its own GPU alone
//! while it times: the speed point reads kernel times, taken by events on
//! its GPU, which no other GPU's work enters. Runs above 2^31 elements
//! reserve their host memory from the node and their GPU memory from their
//! GPU, and the room is read with nothing running on the node, so whether
//! such a run fits is the same decision on any GPU.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::record::outcome::Shortfall;
pub use crate::run::budget::Ending;
use crate::run::budget::{self, Budget};
use crate::run::gate::{self, GateEnd};
use crate::run::memory::{self, Pool, Room};
use crate::run::turns::{Shared, Turns};

/// How a run uses its GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Use {
    /// With other runs, briefly (a run, or a batch of an exercise's runs:
    /// about as long beside others): its verdict reads no time.
    Shared,
    /// With other runs, for long (a compute-sanitizer tool: seconds to
    /// tens of seconds): none starts while a run waits to be alone, so
    /// the GPU drains in the time of a short run (`run::turns`).
    SharedLong,
    /// With no other run on the GPU: its verdict reads a time.
    Alone,
    /// With other runs, but alone while it times: its verdict reads a
    /// time, and it is the course's binary, which says when it times
    /// through the gate it is given.
    Gated,
    /// With other runs, holding this many bytes of host and GPU memory.
    Memory(u64),
}

/// A GPU's lanes as one exercise's grading uses them: with its own budget
/// of remakes alone (`run::budget`).
#[derive(Clone, Copy)]
pub struct ExerciseLane<'a> {
    pub lane: &'a Lane,
    pub budget: &'a Budget,
}

/// A run on a lane's timeline: what it was for, when its worker asked for
/// its turn on the GPU, and when it started and ended, in seconds since
/// the lane was made. (A gated run starts at once and waits for the GPU
/// alone inside its process, between `from` and `to`.)
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub phase: &'static str,
    pub asked: f64,
    pub from: f64,
    pub to: f64,
}

/// The timeline's phase for an exercise's whole grading, beside its runs.
pub const EXERCISE_SPAN: &str = "exercise";

/// The timeline's phase for a gated run's time with the GPU alone, inside
/// its run's span: asked when its process asked for it.
pub const ALONE_SPAN: &str = "alone";

/// What the lanes of several GPUs share: the node. Each run takes its turn
/// here with its GPU's, a run alone the node alone; and a run above 2^31
/// elements reserves its host memory here before its GPU memory on its
/// lane, so every run holding GPU memory holds its host memory too, and no
/// run waits for host memory while holding GPU memory.
#[derive(Default)]
pub struct Node {
    turns: Turns,
    host: Pool,
    /// The room the first GPU's lanes read, whose host memory every GPU's
    /// runs are judged and reserved against.
    first_room: OnceLock<Room>,
}

/// Memory a run holds, host and GPU, given back when dropped (also where
/// the run panicked: a reservation kept would hold off every later run).
struct Reservation<'a> {
    lane: &'a Lane,
    host: u64,
    device: u64,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.lane.device.give(self.device);
        self.lane.host_pool().give(self.host);
    }
}

/// The lanes of one GPU (or of the CPU emulator, where nothing is timed).
pub struct Lane {
    /// Runs at a time on this GPU, as `--jobs` asked.
    jobs: usize,
    /// Who has the GPU: shares, or one run alone.
    turns: Turns,
    /// Runs made and their seconds, by what they were for: where a
    /// grading's time goes.
    spent: Mutex<BTreeMap<&'static str, (u32, f64)>>,
    /// Each run's phase, start and end, since `born`: how many runs were in
    /// flight when, and how long the GPU drained for a run alone.
    timeline: Mutex<Vec<Span>>,
    born: Instant,
    /// Host memory the runs in flight hold, where the lane has no
    /// [`Node`] (the node's otherwise), and GPU memory the large ones hold.
    host: Pool,
    device: Pool,
    /// Each run's memory cap (`confine::sandbox::run_memory`), on the CPU
    /// emulator or a GPU, which every run reserves from the host's room;
    /// None: runs reserve nothing but a large run's data.
    caps: Option<bool>,
    /// The node's free memory, read once with nothing running.
    room: OnceLock<Room>,
    /// The GPU runs are pinned to (nvidia-smi's number), if any.
    index: Option<u32>,
    /// The node, where other GPUs' lanes share it.
    node: Option<Arc<Node>>,
}

impl Lane {
    /// The lanes of GPU `index` (None: every GPU the runs see), for `jobs`
    /// runs at a time.
    pub fn new(jobs: usize, index: Option<u32>) -> Lane {
        Lane {
            jobs: jobs.max(1),
            turns: Turns::with_cap(jobs.max(1)),
            spent: Mutex::new(BTreeMap::new()),
            timeline: Mutex::new(Vec::new()),
            born: Instant::now(),
            host: Pool::default(),
            device: Pool::default(),
            caps: None,
            room: OnceLock::new(),
            index,
            node: None,
        }
    }

    /// The lanes of GPU `index` on `node`, which other GPUs' lanes share.
    pub fn on_node(jobs: usize, index: Option<u32>, node: Arc<Node>) -> Lane {
        Lane {
            node: Some(node),
            ..Lane::new(jobs, index)
        }
    }

    /// These lanes, each run reserving its memory cap from the host's room
    /// before it starts (a run on the CPU emulator: `emulated`): the caps
    /// of the runs in flight never add up to more than the host memory the
    /// node had available, so no run is ever killed for a neighbour's
    /// memory. A run waits for its reservation before it asks for its turn
    /// on the GPU, so a run waiting for memory holds no turn.
    pub fn reserving_caps(self, emulated: bool) -> Lane {
        Lane {
            caps: Some(emulated),
            ..self
        }
    }

    /// The pool the runs' host memory is reserved from: the node's, or this
    /// lane's own.
    fn host_pool(&self) -> &Pool {
        self.node.as_ref().map_or(&self.host, |node| &node.host)
    }

    /// Whether no run of this grading could be in flight beside one of
    /// this lane's: one job, and no other GPU's lane on the node.
    fn without_neighbours(&self) -> bool {
        self.jobs == 1 && self.node.is_none()
    }

    /// A share of the GPU, long or short, with the node's share of the same
    /// length where there is a node. The node's is never held while the
    /// GPU's waits (behind a timed run, say): a run queued on one GPU would
    /// keep a run alone on another waiting for it, and every long run on
    /// the node held off meanwhile.
    fn share(&self, long: bool) -> (Option<Shared<'_>>, Shared<'_>) {
        let Some(node) = &self.node else {
            return (None, self.turns.share(long));
        };
        loop {
            let on_node = node.turns.share(long);
            if let Some(share) = self.turns.try_share(long) {
                return (Some(on_node), share);
            }
            drop(on_node);
            self.turns.until_share(long);
        }
    }

    /// Runs at a time on this GPU.
    pub fn jobs(&self) -> usize {
        self.jobs
    }

    /// Workers grading on this GPU: twice the runs at a time, so that the
    /// workers whose runs wait to be alone leave their shares to others
    /// (the lane never makes more than `jobs` runs at once). On an H200
    /// with one each, a run waiting to time kept its worker idle for as
    /// long as the longest run in flight, up to 183 s, and with every
    /// worker so held the GPU ran only that run (`bench/runs/2026-11-28-h200-steady-state`,
    /// 2026-11-28). One job is one worker: one run at a time, in order.
    pub fn workers(&self) -> usize {
        if self.jobs > 1 { 2 * self.jobs } else { 1 }
    }

    /// Makes a run by `make`, using the GPU as `using` says, its time
    /// counted under `phase`. `make` is given the gate a [`Use::Gated`]
    /// run passes on to its process (None for any other run, or where no
    /// gate could be made: the run then has the GPU alone throughout).
    pub fn run_as<T>(
        &self,
        phase: &'static str,
        using: Use,
        make: impl FnOnce(Option<GateEnd>) -> T,
    ) -> T {
        let asked = Instant::now();
        let timed = |gate| {
            let started = Instant::now();
            let made = make(gate);
            self.count(phase, 1, started.elapsed());
            self.mark(phase, asked, started);
            made
        };
        // Its memory before any turn: a run waiting for memory holds no
        // turn another waits on.
        let data = match using {
            Use::Memory(bytes) => bytes,
            _ => 0,
        };
        let _reserved = self.reserve(data);
        match using {
            Use::Shared => {
                let _shares = self.share(false);
                timed(None)
            }
            Use::SharedLong => {
                let _shares = self.share(true);
                timed(None)
            }
            Use::Alone => {
                // The node alone first: then no run holds this GPU either.
                let _on_node = self.node.as_ref().map(|node| node.turns.alone());
                let _alone = self.turns.alone();
                timed(None)
            }
            Use::Gated => {
                // The GPU's share is the gate's, made alone while it times;
                // with a node, taken with the node's as any share is, and the
                // node's held for the whole process.
                let (_on_node, taken) = match self.node {
                    Some(_) => {
                        let (on_node, share) = self.share(false);
                        (on_node, Some(share))
                    }
                    None => (None, None),
                };
                let (made, served) = gate::hold(&self.turns, taken, timed);
                let (times, alone) = served.alone();
                for window in &served.windows {
                    self.push_span(ALONE_SPAN, window.asked, window.from, window.to);
                }
                if times > 0 {
                    self.count("timed launches alone", times, alone);
                    self.count("waits for the GPU alone", times, served.waited());
                }
                if let Some(byte) = served.out_of_turn {
                    eprintln!(
                        "grader: a run of the course's binary wrote {byte:#04x} out of turn \
                         on the timing gate; it kept the GPU shared from then on"
                    );
                }
                made
            }
            Use::Memory(_) => {
                // Tens of seconds, most of it host memory: long.
                let _shares = self.share(true);
                timed(None)
            }
        }
    }

    /// Makes a run as [`Lane::run_as`] does, within `timeout` (`large`: a
    /// run above 2^31 elements); when it shared the GPU with other runs and
    /// `ended` says it ended as a neighbour could have made it end, makes it
    /// again with the GPU alone, where the exercise's `budget` allows and
    /// within the timeout it gives ([`Budget::remake`]), and only that run
    /// stands: no student loses a run to a classmate graded at the same
    /// time. (With one job and no other GPU there is no neighbour.) Every
    /// run made is counted in the budget. `make` is given the gate and the
    /// timeout.
    pub fn run_confirmed<T>(
        &self,
        phase: &'static str,
        using: Use,
        budget: &Budget,
        (timeout, large): (Duration, bool),
        make: impl Fn(Option<GateEnd>, Duration) -> T,
        ended: impl Fn(&T) -> budget::Ended,
    ) -> T {
        let made = self.run_as(phase, using, |gate| make(gate, timeout));
        let first = ended(&made);
        let alone = using == Use::Alone || self.without_neighbours();
        // Decided before this run counts: it may be a neighbour's doing.
        let again = (!alone)
            .then(|| budget.remake(first.ending, timeout, large))
            .flatten();
        // A run made again is counted by its remake alone: how it ended
        // beside others may be a neighbour's doing, so it must not make
        // the exercise's later runs stop early.
        let Some(timeout) = again else {
            budget.count(first, alone);
            return made;
        };
        let started = Instant::now();
        let made = self.run_as("made again alone", Use::Alone, |gate| make(gate, timeout));
        budget.spend_alone(started.elapsed());
        budget.count(ended(&made), true);
        made
    }

    /// Adds `runs` and their `time` to `phase`.
    fn count(&self, phase: &'static str, runs: u32, time: Duration) {
        let mut spent = self.spent.lock().unwrap_or_else(|p| p.into_inner());
        let entry = spent.entry(phase).or_default();
        *entry = (entry.0 + runs, entry.1 + time.as_secs_f64());
    }

    /// Runs made so far and their seconds, by phase.
    pub fn spent(&self) -> BTreeMap<&'static str, (u32, f64)> {
        self.spent.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Adds one exercise's grading, from `started` until now, to the
    /// timeline: phase [`EXERCISE_SPAN`], asked when it started. Not a
    /// run: it spans the runs its worker made for it.
    pub fn mark_exercise(&self, started: Instant) {
        self.mark(EXERCISE_SPAN, started, started);
    }

    /// Adds a run of `phase`, asked for at `asked`, from `started` until
    /// now to the timeline.
    fn mark(&self, phase: &'static str, asked: Instant, started: Instant) {
        self.push_span(phase, asked, started, Instant::now());
    }

    fn push_span(&self, phase: &'static str, asked: Instant, from: Instant, to: Instant) {
        let since = |at: Instant| at.saturating_duration_since(self.born).as_secs_f64();
        let span = Span {
            phase,
            asked: since(asked),
            from: since(from),
            to: since(to),
        };
        self.timeline
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(span);
    }

    /// The spans added to the timeline since its first `first`, in the
    /// order they ended.
    pub fn timeline_since(&self, first: usize) -> Vec<Span> {
        let timeline = self.timeline.lock().unwrap_or_else(|p| p.into_inner());
        timeline.get(first..).unwrap_or_default().to_vec()
    }

    /// Why a run of `bytes` does not fit this node, None when it does:
    /// against the room read the first time it is asked, with the GPU alone
    /// (the node alone, with several GPUs: no run in flight holds memory
    /// then), so the answer is the same at any `--jobs`; and with several
    /// GPUs against the host memory the first of them read, the same on
    /// every GPU.
    pub fn shortfall(&self, bytes: u64) -> Option<Shortfall> {
        self.room().shortfall(bytes)
    }

    fn room(&self) -> &Room {
        self.room.get_or_init(|| {
            // With nothing in flight: the node alone, then this GPU.
            let asked = Instant::now();
            let _on_node = self.node.as_ref().map(|node| node.turns.alone());
            let _alone = self.turns.alone();
            let started = Instant::now();
            let read = Room::measure(self.index);
            self.count("memory read", 1, started.elapsed());
            self.mark("memory read", asked, started);
            match &self.node {
                Some(node) => {
                    let first = node.first_room.get_or_init(|| read.clone());
                    read.with_host_of(first)
                }
                None => read,
            }
        })
    }

    /// Reserves a run's memory once it fits beside the runs in flight (with
    /// none in flight, whatever it needs): its memory cap from the host's
    /// room where the lane reserves caps, and a run above 2^31 elements'
    /// `data` (with the headroom its process needs) from the host's and
    /// this GPU's room; the host's first, so that every run holding GPU
    /// memory holds its host memory too. Nothing where there is nothing to
    /// reserve, and the room is then never read.
    fn reserve(&self, data: u64) -> Reservation<'_> {
        let (host, device) = match self.caps {
            Some(emulated) => (
                crate::confine::sandbox::run_memory(emulated, data),
                if data > 0 {
                    memory::with_headroom(data)
                } else {
                    0
                },
            ),
            None if data > 0 => (memory::with_headroom(data), memory::with_headroom(data)),
            None => (0, 0),
        };
        if host > 0 || device > 0 {
            let room = self.room();
            // A room whose host memory could not be read holds off nothing
            // but the large runs, which it judged not to fit.
            let host_capacity = match room.host_capacity() {
                0 => u64::MAX,
                capacity => capacity,
            };
            self.host_pool().take(host, host_capacity);
            self.device.take(device, room.device_capacity());
        }
        Reservation {
            lane: self,
            host,
            device,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::Duration;

    /// Runs alone that overlapped another run: twelve runs over `lanes`,
    /// every third alone, each a worker of its own.
    fn runs_alone_overlapped(lanes: &[&Lane]) -> usize {
        let in_flight = AtomicUsize::new(0);
        let overlapped = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for i in 0..12 {
                let lane = lanes[i % lanes.len()];
                let (in_flight, overlapped) = (&in_flight, &overlapped);
                scope.spawn(move || {
                    let using = if i % 3 == 0 { Use::Alone } else { Use::Shared };
                    lane.run_as("test", using, |_| {
                        let others = in_flight.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(20));
                        let now = in_flight.load(Ordering::SeqCst);
                        if using == Use::Alone && (others > 0 || now > 1) {
                            overlapped.fetch_add(1, Ordering::SeqCst);
                        }
                        in_flight.fetch_sub(1, Ordering::SeqCst);
                    });
                });
            }
        });
        overlapped.load(Ordering::SeqCst)
    }

    /// The lanes of GPUs 0 and 1 of one node, four jobs each.
    fn two_gpus() -> (Lane, Lane) {
        let node = Arc::new(Node::default());
        (
            Lane::on_node(4, Some(0), node.clone()),
            Lane::on_node(4, Some(1), node),
        )
    }

    #[test]
    fn a_run_alone_never_overlaps_a_shared_one() {
        assert_eq!(runs_alone_overlapped(&[&Lane::new(4, None)]), 0);
    }

    #[test]
    fn a_run_alone_on_one_gpu_overlaps_no_run_on_another_gpu_of_the_node() {
        let (gpu0, gpu1) = two_gpus();
        assert_eq!(runs_alone_overlapped(&[&gpu0, &gpu1]), 0);
        // Lanes of their own (two graders, one GPU each) are alone only on
        // their GPU: what the node is for.
        let (apart0, apart1) = (Lane::new(4, Some(0)), Lane::new(4, Some(1)));
        assert!(runs_alone_overlapped(&[&apart0, &apart1]) > 0);
    }

    #[test]
    fn a_run_queued_on_one_gpu_keeps_no_run_alone_on_another_waiting() {
        let (gpu0, gpu1) = two_gpus();
        // A timed run in flight on GPU 0 holds off its long runs...
        let timing = gpu0.turns.timing();
        let (alone_done, alone_ended) = std::sync::mpsc::channel();
        std::thread::scope(|scope| {
            scope.spawn(|| gpu0.run_as("tool", Use::SharedLong, |_| ()));
            std::thread::sleep(Duration::from_millis(50));
            // ...and a tool queued behind it must not keep GPU 1's run alone
            // waiting until the timed run ends.
            scope.spawn(|| {
                gpu1.run_as("alone", Use::Alone, |_| ());
                alone_done.send(()).unwrap();
            });
            let ended = alone_ended.recv_timeout(Duration::from_secs(5));
            drop(timing);
            assert!(ended.is_ok(), "GPU 1's run alone waited for GPU 0's queue");
        });
    }

    #[test]
    fn every_run_reserves_its_cap_so_the_runs_in_flight_fit_the_host() {
        use crate::confine::sandbox::GPU_RUN_MEMORY;
        // Room on the host for three runs' caps at once, and jobs for 8.
        let lane = Lane::new(8, None).reserving_caps(false);
        let room = 3 * GPU_RUN_MEMORY + GPU_RUN_MEMORY / 2;
        lane.room.set(Room::of(room, 1 << 40)).unwrap();
        let (in_flight, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        std::thread::scope(|scope| {
            for i in 0..12 {
                let (lane, in_flight, most) = (&lane, &in_flight, &most);
                scope.spawn(move || {
                    let using = [Use::Shared, Use::SharedLong][i % 2];
                    lane.run_as("test", using, |_| {
                        let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(30));
                        in_flight.fetch_sub(1, Ordering::SeqCst);
                    });
                });
            }
        });
        assert_eq!(most.load(Ordering::SeqCst), 3);
        assert_eq!(lane.host.held(), 0, "every cap given back");
    }

    #[test]
    fn a_large_run_that_panics_gives_its_memory_back() {
        const GIB: u64 = 1 << 30;
        let node = Arc::new(Node::default());
        let lane = Lane::on_node(2, Some(0), node.clone());
        lane.room.set(Room::of(100 * GIB, 100 * GIB)).unwrap();
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            lane.run_as("test", Use::Memory(8 * GIB), |_| {
                panic!("the run's thread failed")
            })
        }));
        assert!(panicked.is_err());
        assert_eq!((lane.device.held(), node.host.held()), (0, 0));
    }

    #[test]
    fn runs_above_2_31_reserve_host_memory_from_the_node_and_gpu_memory_from_their_gpu() {
        const GIB: u64 = 1 << 30;
        // Runs of 8 GiB (12 with the headroom): `room` fits one at a time.
        let most_at_once = |room: Room| {
            let node = Arc::new(Node::default());
            let lanes = [
                Lane::on_node(4, Some(0), node.clone()),
                Lane::on_node(4, Some(1), node),
            ];
            for lane in &lanes {
                lane.room.set(room.clone()).unwrap();
            }
            let (in_flight, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
            std::thread::scope(|scope| {
                for i in 0..8 {
                    let (lane, in_flight, most) = (&lanes[i % 2], &in_flight, &most);
                    scope.spawn(move || {
                        lane.run_as("test", Use::Memory(8 * GIB), |_| {
                            let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                            most.fetch_max(now, Ordering::SeqCst);
                            std::thread::sleep(Duration::from_millis(20));
                            in_flight.fetch_sub(1, Ordering::SeqCst);
                        });
                    });
                }
            });
            most.load(Ordering::SeqCst)
        };
        // The host holds one such run for the whole node...
        assert_eq!(most_at_once(Room::of(20 * GIB, 100 * GIB)), 1);
        // ...and each GPU one of its own.
        assert_eq!(most_at_once(Room::of(100 * GIB, 20 * GIB)), 2);
    }

    #[test]
    fn a_gated_run_times_alone_and_shares_the_rest_of_its_process() {
        use kernels::timing_gate::{DONE, GO, REQUEST, SHARED};
        use std::io::{Read, Write};
        use std::os::unix::net::UnixStream;

        let lane = Lane::new(4, None);
        let in_flight = AtomicUsize::new(0);
        let overlapped = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        // A stretch of a process's work, in flight beside whatever else is.
        let work = |in_flight: &AtomicUsize, most: &AtomicUsize| {
            let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(10));
            in_flight.fetch_sub(1, Ordering::SeqCst);
        };
        std::thread::scope(|scope| {
            for i in 0..16 {
                let (lane, in_flight, overlapped, most) = (&lane, &in_flight, &overlapped, &most);
                scope.spawn(move || {
                    if i % 2 == 1 {
                        lane.run_as("test", Use::Shared, |_| work(in_flight, most));
                        return;
                    }
                    lane.run_as("test", Use::Gated, |gate| {
                        // The course's binary: set up beside the others,
                        // time alone, check and report beside the others.
                        let mut end = UnixStream::from(gate.expect("a gate").descriptor);
                        work(in_flight, most);
                        end.write_all(&[REQUEST]).unwrap();
                        let mut go = [0u8];
                        end.read_exact(&mut go).unwrap();
                        assert_eq!(go[0], GO);
                        let others = in_flight.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(10));
                        if others > 0 || in_flight.load(Ordering::SeqCst) > 1 {
                            overlapped.fetch_add(1, Ordering::SeqCst);
                        }
                        in_flight.fetch_sub(1, Ordering::SeqCst);
                        // Done, and nothing on the GPU until shared again.
                        end.write_all(&[DONE]).unwrap();
                        end.read_exact(&mut go).unwrap();
                        assert_eq!(go[0], SHARED);
                        work(in_flight, most);
                    });
                });
            }
        });
        assert_eq!(
            overlapped.load(Ordering::SeqCst),
            0,
            "timed beside another run"
        );
        assert!(
            most.load(Ordering::SeqCst) > 1,
            "the gated runs never shared"
        );
        let spent = lane.spent();
        assert_eq!(spent["test"].0, 16);
        assert_eq!(spent["timed launches alone"].0, 8);
        // Each time alone is on the timeline, none beside another.
        let mut alone: Vec<Span> = lane
            .timeline_since(0)
            .into_iter()
            .filter(|s| s.phase == ALONE_SPAN)
            .collect();
        assert_eq!(alone.len(), 8);
        alone.sort_by(|a, b| a.from.total_cmp(&b.from));
        for pair in alone.windows(2) {
            assert!(pair[0].asked <= pair[0].from && pair[0].from < pair[0].to);
            assert!(pair[0].to <= pair[1].from, "{alone:?}");
        }
    }

    /// How a test's run ended: `ending`, failing after `seconds`.
    fn ended_as(ending: Ending, seconds: u64) -> budget::Ended {
        budget::Ended {
            ending,
            failed_after: Some(Duration::from_secs(seconds)),
        }
    }

    const MINUTE: (Duration, bool) = (Duration::from_secs(60), false);

    #[test]
    fn a_troubled_shared_run_is_made_again_alone_and_only_with_neighbours() {
        let made = AtomicUsize::new(0);
        let make = |_: Option<GateEnd>, _| made.fetch_add(1, Ordering::SeqCst);
        let first_troubled = |&k: &usize| {
            if k == 0 {
                ended_as(Ending::Neighbours, 1)
            } else {
                ended_as(Ending::Own, 1)
            }
        };
        let budget = Budget::default();
        // The first run is troubled: made again, alone, and the second stands.
        let lane = Lane::new(2, None);
        let confirmed = |lane: &Lane, using, ended: &dyn Fn(&usize) -> budget::Ended| {
            made.store(0, Ordering::SeqCst);
            lane.run_confirmed("test", using, &budget, MINUTE, make, ended)
        };
        assert_eq!(confirmed(&lane, Use::Shared, &first_troubled), 1);
        assert_eq!(lane.spent()["made again alone"].0, 1);
        assert_eq!(budget.remakes().0, 1);
        // Untroubled, or already alone, or with no neighbour: made once.
        let own = |_: &usize| ended_as(Ending::Own, 1);
        assert_eq!(confirmed(&lane, Use::Shared, &own), 0);
        assert_eq!(confirmed(&lane, Use::Alone, &first_troubled), 0);
        let one = Lane::new(1, None);
        assert_eq!(confirmed(&one, Use::Shared, &first_troubled), 0);
        assert!(!one.spent().contains_key("made again alone"));
        // One job, but another GPU's runs on the node: a neighbour.
        let beside = Lane::on_node(1, Some(0), Arc::new(Node::default()));
        assert_eq!(confirmed(&beside, Use::Shared, &first_troubled), 1);
        assert_eq!(beside.spent()["made again alone"].0, 1);
    }

    #[test]
    fn a_kernel_that_hangs_alone_once_is_not_made_again_alone_for_its_other_runs() {
        let lane = Lane::new(4, None);
        let budget = Budget::default();
        let out_of_time = |_: &()| ended_as(Ending::OutOfTime, 60);
        let timeouts = std::sync::Mutex::new(vec![]);
        let make = |_: Option<GateEnd>, timeout| timeouts.lock().unwrap().push(timeout);
        // The first run out of time beside others: made again alone, the
        // exercise's first remake within the whole timeout, where it runs
        // out of time too.
        lane.run_confirmed("test", Use::Shared, &budget, MINUTE, make, out_of_time);
        assert_eq!(lane.spent()["made again alone"].0, 1);
        // Every later run of the exercise out of time stands as it is.
        for _ in 0..4 {
            let timeout = budget.timeout(MINUTE.0, false);
            lane.run_confirmed(
                "test",
                Use::Shared,
                &budget,
                (timeout, false),
                make,
                out_of_time,
            );
        }
        assert_eq!(lane.spent()["made again alone"].0, 1);
        assert_eq!(lane.spent()["test"].0, 5);
        // Its later runs had AFTER_HOLDING.
        let after = budget::AFTER_HOLDING;
        assert_eq!(
            timeouts.lock().unwrap()[..],
            [MINUTE.0, MINUTE.0, after, after, after, after]
        );
        // Another exercise's first run out of time is made again alone.
        let other = Budget::default();
        lane.run_confirmed("test", Use::Shared, &other, MINUTE, make, out_of_time);
        assert_eq!(lane.spent()["made again alone"].0, 2);
    }

    #[test]
    fn a_host_that_exits_3_every_run_holds_the_gpu_alone_only_within_its_budget() {
        // A CUDA error each run, as a neighbour holding memory could cause:
        // each made again alone while the budget lasts, never past it.
        let lane = Lane::new(4, None);
        let budget = Budget::default();
        let cuda_error = |_: &()| ended_as(Ending::Neighbours, 1);
        let remade = |budget: &Budget| {
            lane.run_confirmed("test", Use::Shared, budget, MINUTE, |_, _| {}, cuda_error);
            budget.remakes().0
        };
        assert_eq!(remade(&budget), 1);
        assert_eq!(remade(&budget), 2);
        // What is left of the budget is one more remake, then none.
        budget.spend_alone(budget::REMAKES_ALONE);
        let before = budget.remakes().0;
        for _ in 0..5 {
            assert_eq!(remade(&budget), before);
        }
        assert_eq!(lane.spent()["made again alone"].0, 2);
        assert_eq!(lane.spent()["test"].0, 7);
    }

    #[test]
    fn shared_runs_do_run_together() {
        let lane = Lane::new(4, None);
        let in_flight = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..4 {
                let (lane, in_flight, most) = (&lane, &in_flight, &most);
                scope.spawn(move || {
                    lane.run_as("test", Use::Shared, |_| {
                        let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(100));
                        in_flight.fetch_sub(1, Ordering::SeqCst);
                    });
                });
            }
        });
        assert!(most.load(Ordering::SeqCst) > 1, "never two at once");
    }

    #[test]
    fn short_runs_go_on_beside_a_long_one_while_a_run_waits_to_be_alone() {
        let lane = Lane::new(4, None);
        let slow_done = AtomicBool::new(false);
        let alone_started = AtomicBool::new(false);
        let shared_made_meanwhile = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            // A long shared run (a sanitizer's tool).
            scope.spawn(|| {
                lane.run_as("test", Use::SharedLong, |_| {
                    std::thread::sleep(Duration::from_millis(400));
                    slow_done.store(true, Ordering::SeqCst);
                })
            });
            std::thread::sleep(Duration::from_millis(50));
            // A run that waits to be alone behind it.
            scope.spawn(|| {
                lane.run_as("test", Use::Alone, |_| {
                    assert!(
                        slow_done.load(Ordering::SeqCst),
                        "alone beside a shared run"
                    );
                    alone_started.store(true, Ordering::SeqCst);
                })
            });
            std::thread::sleep(Duration::from_millis(50));
            // Short shared runs started meanwhile are made, not held off.
            for _ in 0..5 {
                lane.run_as("test", Use::Shared, |_| {
                    if !slow_done.load(Ordering::SeqCst) {
                        shared_made_meanwhile.fetch_add(1, Ordering::SeqCst);
                    }
                });
            }
        });
        assert_eq!(shared_made_meanwhile.load(Ordering::SeqCst), 5);
        assert!(alone_started.load(Ordering::SeqCst));
    }

    #[test]
    fn the_timeline_has_each_run_with_its_phase_start_and_end() {
        let lane = Lane::new(2, None);
        std::thread::scope(|scope| {
            for _ in 0..2 {
                scope.spawn(|| {
                    lane.run_as("short", Use::Shared, |_| {
                        std::thread::sleep(Duration::from_millis(30))
                    })
                });
            }
        });
        lane.run_as("timed", Use::Alone, |_| {
            std::thread::sleep(Duration::from_millis(20))
        });
        let spans = lane.timeline_since(0);
        assert_eq!(
            spans.iter().map(|s| s.phase).collect::<Vec<_>>(),
            ["short", "short", "timed"]
        );
        for span in &spans {
            assert!(span.to - span.from >= 0.019, "{span:?}");
            assert!(span.asked <= span.from, "{span:?}");
        }
        // The two shared runs overlapped; the run alone came after both.
        assert!(
            spans[0].from < spans[1].to && spans[1].from < spans[0].to,
            "{spans:?}"
        );
        assert!(spans[2].from >= spans[0].to.max(spans[1].to), "{spans:?}");
    }
}
