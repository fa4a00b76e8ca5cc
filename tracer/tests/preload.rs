//! The tracer really preloaded: a fake `libcuda.so.1` and a small C program
//! calling it, built here with `cc`, run with `LD_PRELOAD` and the trace's
//! descriptor on a pipe this test owns, set up by the grader's own
//! `trace::Pipe`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use grader::judge::evidence;
use grader::run::trace::{self, Trace};
use kernels::catalogue::ExerciseId;

/// A driver that does nothing but hand out handles and fill copies back
/// with 7s; a launch with an empty grid fails with error 1.
const FAKE_DRIVER: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef unsigned int CUresult;
typedef unsigned long long CUdeviceptr;
static unsigned long next_stream = 0x5000;
CUresult cuModuleGetFunction(void **f, void *m, const char *name) { *f = (void *)(0x1000 + strlen(name)); return 0; }
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, void *s, void **p, void **e) { return gx == 0 ? 1 : 0; }
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t n) { return 0; }
CUresult cuMemcpyDtoH_v2(void *h, CUdeviceptr d, size_t n) { memset(h, 7, n); return 0; }
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *h, size_t n, void *s) { return 0; }
CUresult cuMemcpyDtoHAsync_v2(void *h, CUdeviceptr d, size_t n, void *s) { memset(h, 7, n); return 0; }
CUresult cuMemAllocHost_v2(void **p, size_t n) { *p = malloc(n); return *p ? 0 : 2; }
CUresult cuMemFreeHost(void *p) { fprintf(stderr, "driver freed host\n"); free(p); return 0; }
CUresult cuStreamCreate(void **s, unsigned flags) { next_stream += 0x10; *s = (void *)next_stream; return 0; }
CUresult cuEventRecord(void *e, void *s) { return 0; }
CUresult cuStreamSynchronize(void *s) { return 0; }
CUresult cuCtxSynchronize(void) { return 0; }
/* Device allocations start at multiples of 0x100; every free that reaches
   the driver says so on stderr. */
CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr p) {
    *base = p & ~0xffULL; *size = 0x100; return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) { fprintf(stderr, "driver freed %llx\n", p); return p & 0xff ? 1 : 0; }
CUresult cuMemFreeAsync(CUdeviceptr p, void *s) { fprintf(stderr, "driver freed %llx later\n", p); return 0; }
CUresult cuMemHostGetFlags(unsigned *flags, void *p) { *flags = 0; return 0; }
"#;

/// Frees a device allocation, a pointer inside one (which the driver
/// refuses), one on a stream, and page-locked memory.
const FREES: &str = r#"
#include <stdio.h>
typedef unsigned int CUresult;
typedef unsigned long long CUdeviceptr;
CUresult cuMemFree_v2(CUdeviceptr);
CUresult cuMemFreeAsync(CUdeviceptr, void *);
CUresult cuMemAllocHost_v2(void **, size_t);
CUresult cuMemFreeHost(void *);
int main(void) {
    void *pinned;
    cuMemAllocHost_v2(&pinned, 64);
    CUresult whole = cuMemFree_v2(0x200);
    CUresult inside = cuMemFree_v2(0x204);
    CUresult later = cuMemFreeAsync(0x300, 0);
    CUresult host = cuMemFreeHost(pinned);
    printf("%u %u %u %u\n", whole, inside, later, host);
    return 0;
}
"#;

/// Two streams, page-locked copies each way on both, a launch that works
/// and one that fails, a pageable copy back, a copy running past the
/// page-locked buffer; prints a byte the driver copied back.
const PROGRAM: &str = r#"
#include <stdio.h>
typedef unsigned int CUresult;
typedef unsigned long long CUdeviceptr;
CUresult cuModuleGetFunction(void **, void *, const char *);
CUresult cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, void *, void **, void **);
CUresult cuMemcpyDtoH_v2(void *, CUdeviceptr, size_t);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr, const void *, size_t, void *);
CUresult cuMemcpyDtoHAsync_v2(void *, CUdeviceptr, size_t, void *);
CUresult cuMemAllocHost_v2(void **, size_t);
CUresult cuMemFreeHost(void *);
CUresult cuStreamCreate(void **, unsigned);
CUresult cuEventRecord(void *, void *);
CUresult cuStreamSynchronize(void *);
CUresult cuCtxSynchronize(void);
int main(void) {
    void *dot, *s1, *s2;
    char *pinned, pageable[64];
    cuModuleGetFunction(&dot, 0, "dot");
    cuStreamCreate(&s1, 0);
    cuStreamCreate(&s2, 0);
    cuMemAllocHost_v2((void **)&pinned, 256);
    cuMemcpyHtoDAsync_v2(1, pinned, 128, s1);
    cuMemcpyHtoDAsync_v2(2, pinned + 128, 128, s2);
    cuLaunchKernel(dot, 4, 1, 1, 256, 1, 1, 0, s1, 0, 0);
    cuLaunchKernel(dot, 0, 1, 1, 256, 1, 1, 0, s2, 0, 0);
    cuMemcpyDtoHAsync_v2(pinned, 1, 128, s1);
    cuMemcpyDtoHAsync_v2(pinned + 128, 2, 128, s2);
    cuMemcpyDtoH_v2(pageable, 3, 64);
    cuMemcpyHtoDAsync_v2(1, pinned + 200, 100, s1);
    cuEventRecord(0, s1);
    cuStreamSynchronize(s1);
    cuCtxSynchronize();
    cuMemFreeHost(pinned);
    printf("%d\n", pageable[0]);
    return 0;
}
"#;

/// The tracer library this test's build produced, beside the test binary.
fn tracer_library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [deps, deps.parent().unwrap()]
        .iter()
        .map(|dir| dir.join("libcuda_course_trace.so"))
        .find(|path| path.exists())
        .expect("libcuda_course_trace.so is not beside the test binary")
}

fn cc(dir: &Path, args: &[&str]) {
    let status = Command::new("cc").current_dir(dir).args(args).status();
    assert!(status.is_ok_and(|s| s.success()), "cc {args:?} failed");
}

/// The fake driver and the program, built in a fresh folder.
fn build() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("driver.c"), FAKE_DRIVER).unwrap();
    fs::write(dir.path().join("program.c"), PROGRAM).unwrap();
    fs::write(dir.path().join("frees.c"), FREES).unwrap();
    cc(
        dir.path(),
        &["-shared", "-fPIC", "-o", "libcuda.so.1", "driver.c"],
    );
    cc(
        dir.path(),
        &[
            "-o",
            "program",
            "program.c",
            "-L.",
            "-l:libcuda.so.1",
            "-Wl,-rpath,$ORIGIN",
        ],
    );
    cc(
        dir.path(),
        &[
            "-o",
            "frees",
            "frees.c",
            "-L.",
            "-l:libcuda.so.1",
            "-Wl,-rpath,$ORIGIN",
        ],
    );
    dir
}

/// The program run under the tracer as the grader runs it, the trace on
/// descriptor 3 of the child through a pipe this process reads: the
/// child's pid, stdout and trace.
fn traced(dir: &Path) -> (u32, String, String) {
    let pipe = trace::Pipe::new().unwrap();
    let mut command = Command::new(dir.join("program"));
    // The fake driver beside the program, not whatever a cargo runner put
    // first on the library path (the emulator's, on a machine without a GPU).
    command
        .env_remove("LD_LIBRARY_PATH")
        .envs(trace::variables(&tracer_library()))
        .stdout(Stdio::piped());
    pipe.attach(&mut command);
    let child = command.spawn().unwrap();
    let reading = pipe.read();
    let pid = child.id();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let collected = reading.finish(Duration::from_secs(10)).unwrap();
    assert!(!collected.truncated);
    (
        pid,
        String::from_utf8(output.stdout).unwrap(),
        collected.text,
    )
}

#[test]
fn every_call_is_forwarded_and_recorded_in_order() {
    let dir = build();
    let (pid, stdout, trace) = traced(dir.path());
    // The driver's 7s came back through the tracer.
    assert_eq!(stdout, "7\n");
    let lines: Vec<&str> = trace.lines().collect();
    assert!(kernels::trace_record::is_header(lines[0]), "{trace}");
    // What each call must have recorded, worked out from the program above:
    // strlen("dot") = 3, so dot's handle is 0x1003; streams 0x5010, 0x5020.
    let expected = [
        "cuModuleGetFunction 0 kernel=dot",
        "cuStreamCreate 0 stream=0x5010",
        "cuStreamCreate 0 stream=0x5020",
        "cuMemAllocHost_v2 0 bytes=256",
        "cuMemcpyHtoDAsync_v2 0 stream=0x5010 bytes=128 dir=htod pinned=1",
        "cuMemcpyHtoDAsync_v2 0 stream=0x5020 bytes=128 dir=htod pinned=1",
        "cuLaunchKernel 0 stream=0x5010 kernel=dot grid=4,1,1 block=256,1,1",
        "cuLaunchKernel 1 stream=0x5020 kernel=dot grid=0,1,1 block=256,1,1",
        "cuMemcpyDtoHAsync_v2 0 stream=0x5010 bytes=128 dir=dtoh pinned=1",
        "cuMemcpyDtoHAsync_v2 0 stream=0x5020 bytes=128 dir=dtoh pinned=1",
        "cuMemcpyDtoH_v2 0 stream=0x0 bytes=64 dir=dtoh pinned=0",
        // 200 + 100 runs past the 256 page-locked bytes.
        "cuMemcpyHtoDAsync_v2 0 stream=0x5010 bytes=100 dir=htod pinned=0",
        "cuEventRecord 0 stream=0x5010",
        "cuStreamSynchronize 0 stream=0x5010",
        "cuCtxSynchronize 0",
    ];
    for (seq, want) in expected.iter().enumerate() {
        assert_eq!(
            lines.get(seq + 1).copied(),
            Some(format!("{seq} {pid} {want}").as_str()),
            "record {seq} of:\n{trace}"
        );
    }
    assert!(lines[16].contains("cuMemFreeHost 0 host=0x"), "{trace}");

    // And the grader reads it as a run that used the GPU as taught.
    let parsed = Trace::parse(&trace, pid).unwrap();
    assert_eq!(parsed.calls.len(), 16);
    assert_eq!(evidence::launched(&parsed, ExerciseId::DotSm), Ok(()));
    assert_eq!(evidence::copied_back(&parsed, ExerciseId::DotSm), Ok(()));
    assert_eq!(evidence::overlapped_copies(&parsed), Ok(()));
    assert!(evidence::launched(&parsed, ExerciseId::VecaddAnyN).is_err());
}

#[test]
fn without_the_variable_or_with_a_closed_descriptor_it_only_forwards() {
    let dir = build();
    for fd in [None, Some("57"), Some("not a number")] {
        let mut command = Command::new(dir.path().join("program"));
        command
            .env_remove("LD_LIBRARY_PATH")
            .env("LD_PRELOAD", tracer_library());
        if let Some(fd) = fd {
            command.env(kernels::trace_record::FD_VARIABLE, fd);
        }
        let output = command.output().unwrap();
        assert!(output.status.success(), "{fd:?}: {output:?}");
        assert_eq!(output.stdout, b"7\n", "{fd:?}");
    }
}

#[test]
fn in_a_batch_the_frees_of_what_the_driver_handed_out_are_kept_from_it() {
    let dir = build();
    let frees = |batch: bool| {
        let mut command = Command::new(dir.path().join("frees"));
        command
            .env_remove("LD_LIBRARY_PATH")
            .env("LD_PRELOAD", tracer_library());
        if batch {
            command.env(kernels::batch::VARIABLE, "/batch/file");
        }
        let output = command.output().unwrap();
        assert!(output.status.success(), "{output:?}");
        let said = |bytes| String::from_utf8(bytes).unwrap();
        (said(output.stderr), said(output.stdout))
    };
    // Alone, every free reaches the driver.
    assert_eq!(
        frees(false),
        (
            "driver freed 200\ndriver freed 204\ndriver freed 300 later\ndriver freed host\n"
                .to_owned(),
            "0 1 0 0\n".to_owned()
        )
    );
    // In a batch, only the one the driver refuses, refused as alone: no
    // memory a run freed goes to a later run.
    assert_eq!(
        frees(true),
        ("driver freed 204\n".to_owned(), "0 1 0 0\n".to_owned())
    );
}
