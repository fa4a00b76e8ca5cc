//! PTX an attacker writes (or nvcc writes from a tiny hostile kernel.cu)
//! costs the parser time and memory in proportion to its length, never a
//! stack overflow or an allocation the text does not pay for. Memory is
//! measured by this test program's own allocator: the most bytes live at
//! once while parsing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ptx::parser::{MAX_SCOPE_DEPTH, parse};

/// Counts live bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator, only counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        // SAFETY: the caller's layout, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// One test at a time: the counters are process-wide, and another test's
/// allocations would count in this one's peak.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn alone() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Parses `text` (whose own bytes are not counted), returning the result,
/// the peak of bytes allocated meanwhile and the time taken.
fn measure(text: &str) -> (Result<usize, String>, usize, Duration) {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let started = Instant::now();
    let result = parse(text)
        .map(|module| module.variables.iter().map(|v| v.init.len()).sum::<usize>())
        .map_err(|e| e.to_string());
    let elapsed = started.elapsed();
    (result, PEAK.load(Ordering::Relaxed) - before, elapsed)
}

const HEADER: &str = ".version 7.8\n.target sm_75\n.address_size 64\n";

/// A kernel whose body holds `body`.
fn kernel(body: &str) -> String {
    format!("{HEADER}.visible .entry k()\n{{\n{body}\n\tret;\n}}\n")
}

#[test]
fn nested_braces_in_inline_assembly_are_refused_at_the_limit_not_recursed_into() {
    let _alone = alone();
    // 25,000 nested braces, as nvcc copies an unreachable asm statement.
    let deep = format!(
        "{}mov.u32 %r1, 0;{}",
        "{ ".repeat(25_000),
        " }".repeat(25_000)
    );
    let (result, peak, time) = measure(&kernel(&deep));
    let message = result.unwrap_err();
    assert!(
        message.contains(&format!("more than {MAX_SCOPE_DEPTH} deep")),
        "{message}"
    );
    assert!(peak < 1 << 20, "{peak} bytes");
    assert!(time < Duration::from_secs(2), "{time:?}");
    // Just under the limit, it parses.
    let ok = format!(
        "{}{}",
        "{ ".repeat(MAX_SCOPE_DEPTH - 1),
        " }".repeat(MAX_SCOPE_DEPTH - 1)
    );
    assert!(measure(&kernel(&ok)).0.is_ok());
}

#[test]
fn nested_braces_in_an_operand_or_an_initialiser_are_refused() {
    let _alone = alone();
    let operand = kernel(&format!(
        "mov.b64 %rd1, {}%r1{};",
        "{".repeat(100_000),
        "}".repeat(100_000)
    ));
    let (result, peak, _) = measure(&operand);
    assert!(result.unwrap_err().contains("operands do not nest"));
    assert!(peak < 1 << 20, "{peak} bytes");
    let initialiser = format!(
        "{HEADER}.global .align 4 .b32 x[1] = {}1{};\n",
        "{".repeat(100_000),
        "}".repeat(100_000)
    );
    let (result, _, _) = measure(&initialiser);
    assert!(result.unwrap_err().contains("braces deep"));
    // Skipped sections nest without limit and keep nothing.
    let section = format!(
        "{HEADER}.section .debug_str\n{}{}\n",
        "{".repeat(200_000),
        "}".repeat(200_000)
    );
    let (result, peak, _) = measure(&section);
    assert!(result.is_ok());
    assert!(peak < 1 << 20, "{peak} bytes");
}

#[test]
fn a_huge_initialiser_costs_about_its_bytes_and_linear_time() {
    let _alone = alone();
    // Like nvcc's PTX for a large initialised __device__ array: 8 million
    // one-byte values, about 20 MB of text.
    let values = 8_000_000usize;
    let mut text = format!("{HEADER}.global .align 1 .b8 table[{values}] = {{");
    for i in 0..values {
        text.push_str(&(i % 251).to_string());
        text.push_str(", ");
    }
    text.push_str("0};\n");
    let mut text_too_long = text.clone();
    text.truncate(text.len() - 6);
    text.push_str("};\n");
    let (result, peak, time) = measure(&text);
    assert_eq!(result, Ok(values));
    // The bytes it holds, and a little more: not 23 bytes per PTX byte.
    assert!(
        peak < values * 3,
        "{peak} bytes for {} bytes of PTX",
        text.len()
    );
    assert!(time < Duration::from_secs(20), "{time:?}");
    // One value more than the array holds is refused.
    text_too_long.truncate(text_too_long.len() - 3);
    text_too_long.push_str(", 1};\n");
    let message = measure(&text_too_long).0.unwrap_err();
    assert!(message.contains("more than the 8000000 bytes"), "{message}");
}

#[test]
fn many_statements_cost_memory_in_proportion() {
    let _alone = alone();
    // 200,000 instructions and register declarations.
    let mut body = String::from(".reg .b32 %r<100000>;\n");
    for i in 0..200_000 {
        body.push_str(&format!(
            "add.s32 %r{}, %r{}, 1;\n",
            i % 1000,
            (i + 1) % 1000
        ));
    }
    let text = kernel(&body);
    let (result, peak, time) = measure(&text);
    assert!(result.is_ok());
    // The syntax tree of dense instructions: about 15 bytes a byte
    // (parser.rs's head).
    assert!(
        peak < text.len() * 20,
        "{peak} bytes for {} bytes of PTX",
        text.len()
    );
    assert!(time < Duration::from_secs(20), "{time:?}");
    // A register range is kept as its size, not one name per register.
    let (result, peak, _) = measure(&kernel(".reg .b32 %r<4000000000>;"));
    assert!(result.is_ok());
    assert!(peak < 1 << 20, "{peak} bytes");
}

#[test]
fn text_that_is_not_ptx_names_its_line() {
    let _alone = alone();
    let (result, _, _) = measure(&format!("{HEADER}.visible .entry k()\n{{\n\tret;\n#\n}}"));
    assert!(
        result
            .unwrap_err()
            .starts_with("PTX line 7: text that is not PTX")
    );
}
