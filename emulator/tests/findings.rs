//! Every kind of finding the wire format names (`kernels::emulator_output`,
//! which the grader reads: its mutants expect races, conflicts,
//! out-of-bounds accesses, barriers and uninitialised memory by kind) is
//! one the emulator makes for a kernel with that bug: each kind is tied to
//! such a kernel (`made`, an exhaustive match, so a new kind cannot go
//! untested), run through the driver as `cuLaunchKernel` runs it, strict
//! and carrying on as the grader's runs do, printed as the emulator prints
//! it and read back by the parser the grader uses. The kernels are
//! checks.ptx's (its file renamed `kernel.cu`, so findings name their
//! line) and two written here.

mod device;

use device::Device;
use emulator::driver::fault;
use emulator::exec::error::{BlockError, ThreadError};
use emulator::exec::launch::{Found, Shape};
use kernels::emulator_output::{ALL_KINDS, FINDING_PREFIX, Finding, FindingKind};

/// checks.ptx as if nvcc had compiled a `kernel.cu`.
fn checks_as_kernel_cu() -> String {
    include_str!("ptx/checks.ptx").replace("checks.cu\"", "kernel.cu\"")
}

/// Kernels checks.cu has no mutant for: a `__trap()`, and lane 0 waiting
/// at `__syncwarp()` for lanes that wait at `__syncthreads()`.
const HERE: &str = r#"
.version 7.8
.target sm_75
.address_size 64

.visible .entry traps()
{
	.loc	1 3 0
	trap;
	ret;
}

.visible .entry lane_waits_alone()
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<2>;

	.loc	1 7 0
	mov.u32 	%r1, %tid.x;
	setp.ne.s32 	%p1, %r1, 0;
	@%p1 bra 	$L__others;
	.loc	1 8 0
	bar.warp.sync 	-1;
	bra.uni 	$L__done;
$L__others:
	.loc	1 10 0
	bar.sync 	0;
$L__done:
	ret;
}
	.file	1 "/home/student/dot-sm/src/kernel.cu"
"#;

/// One way to launch a test kernel: its name, grid, block and arguments,
/// on a device it may fill first.
type Case = (&'static str, u32, u32, Vec<u64>);

/// The findings a launch of `case` on `device` gives, strict or carrying
/// on: the one that stopped it and those before it.
fn findings(device: &Device, case: &Case, carry_on: bool) -> Vec<Finding> {
    let (name, grid, block, args) = case;
    match device.run(carry_on, name, *grid, *block, args) {
        Ok(launched) => launched.findings,
        Err(fault) => {
            let mut all = fault.findings;
            all.push(*fault.finding);
            all
        }
    }
}

/// The findings the emulator makes for a kernel with bug `kind`, in each
/// mode; for the kinds no test kernel can make, the driver's own words for
/// them. None: the emulator never writes the kind.
fn made(kind: FindingKind) -> Option<Vec<Finding>> {
    let mut checks = Device::new(&checks_as_kernel_cu());
    let a = checks.upload(&[1.0f32; 100]);
    let c = checks.upload(&[0.0f32; 100]);
    let case: Case = match kind {
        FindingKind::SharedMemoryRace => ("shared_race", 1, 64, vec![a, c]),
        FindingKind::GlobalMemoryConflict => ("global_conflict", 4, 32, vec![a, c]),
        // Thread 128 reads past a's 256-byte padding.
        FindingKind::OutOfBounds => ("out_of_bounds", 1, 160, vec![a, c, 100]),
        FindingKind::Misaligned => ("misaligned", 1, 32, vec![a, c]),
        FindingKind::Barrier => ("divergent_barrier", 1, 64, vec![c]),
        FindingKind::Uninitialised => {
            let unwritten = checks.allocate(128);
            ("accumulate", 1, 32, vec![a, unwritten])
        }
        FindingKind::Assert => {
            let big = checks.upload(&[99i32; 4]);
            ("asserts", 1, 4, vec![big, 10])
        }
        FindingKind::Unsupported => ("texture_fetch", 1, 32, vec![0, c]),
        FindingKind::RefusedLaunch => ("bounded", 1, 64, vec![c]),
        FindingKind::Trap | FindingKind::Deadlock => {
            let here = Device::new(HERE);
            let name = if kind == FindingKind::Trap {
                "traps"
            } else {
                "lane_waits_alone"
            };
            let case = (name, 1, 32, vec![]);
            return Some([false, true].map(|m| findings(&here, &case, m)).concat());
        }
        // 2^34 instructions: a minute of a CPU. The driver's words for
        // what the thread interpreter returns then.
        FindingKind::Runaway => {
            let kernel = checks.kernel("math");
            let found = Found {
                ctaid: [1, 0, 0],
                error: BlockError::Thread(3, 2, ThreadError::Runaway),
            };
            return Some(vec![fault::finding(kernel, Shape::linear(2, 32), &found)]);
        }
        FindingKind::UnloadablePtx => {
            let mut heap = emulator::heap::Heap::default();
            let message = emulator::module::Module::load("this is not PTX {", &mut heap)
                .err()
                .expect("half a PTX does not load");
            return Some(vec![fault::unloadable(&message)]);
        }
        // A panic in the driver: no kernel makes one, or it is fixed.
        FindingKind::Internal => return Some(vec![fault::internal("cuLaunchKernel")]),
        FindingKind::Other => return None,
    };
    let strict = findings(&checks, &case, false);
    let carrying_on = findings(&checks, &case, true);
    // Both modes must make it: the student's runs and the grader's.
    for (mode, found) in [("strict", &strict), ("carrying on", &carrying_on)] {
        assert!(
            found.iter().any(|f| f.kind == kind),
            "{kind} ({mode}): {found:#?}"
        );
    }
    Some([strict, carrying_on].concat())
}

#[test]
fn every_kind_is_made_by_a_kernel_with_that_bug_and_read_back_as_the_grader_reads_it() {
    for kind in ALL_KINDS {
        let Some(found) = made(kind) else {
            continue;
        };
        let ours: Vec<&Finding> = found.iter().filter(|f| f.kind == kind).collect();
        assert!(!ours.is_empty(), "{kind}: {found:#?}");
        for finding in found {
            // As the emulator prints it and the grader reads it.
            let printed = format!("{FINDING_PREFIX}{finding}");
            let read = printed
                .strip_prefix(FINDING_PREFIX)
                .map(Finding::parse)
                .expect("the prefix")
                .unwrap_or_else(|e| panic!("{printed}: {e}"));
            assert_eq!(read, finding, "{printed}");
            assert_ne!(read.kind, FindingKind::Other, "{printed}");
        }
    }
}

#[test]
fn a_thread_s_finding_names_its_block_thread_address_and_kernel_cu_line() {
    let found = made(FindingKind::OutOfBounds).unwrap();
    let first = &found[0];
    assert_eq!(first.kind, FindingKind::OutOfBounds);
    // Strict, the first past a's 100 floats: thread 100 reading a[100] in
    // c[i] = a[i] + n, line 25.
    assert_eq!(
        (first.block, first.thread, first.line),
        (Some([0, 0, 0]), Some([100, 0, 0]), Some(25)),
        "{first:#?}"
    );
    let a = first.address.expect("an access's address");
    assert!(
        first.words.contains(&format!("{a:#x}")) && first.words.contains("kernel.cu:25"),
        "{first:#?}"
    );
    // A race is the later access's: its thread and line.
    let race = &made(FindingKind::SharedMemoryRace).unwrap()[0];
    assert!(
        race.thread.is_some() && race.line.is_some() && race.address.is_some(),
        "{race:#?}"
    );
    let words = format!("at kernel.cu:{}", race.line.unwrap());
    assert!(race.words.contains(&words), "{race:#?}");
}

#[test]
fn findings_without_a_thread_name_only_what_they_have() {
    for kind in [FindingKind::RefusedLaunch, FindingKind::UnloadablePtx] {
        for finding in made(kind).unwrap() {
            assert_eq!(
                (finding.block, finding.thread, finding.address, finding.line),
                (None, None, None, None),
                "{finding:#?}"
            );
        }
    }
}
