//! The canary where the student cannot see it: a program that loads a
//! module defining the exercise's entry gets the grader's canary run in
//! its place (its answer carries the canary's mark), and a program that
//! dumps every byte it can read finds none of the canary's text. Another
//! module loads as sent.

mod common;

use common::{compile_c, through_broker};
use kernels::trace_record::parse_line;

/// A kernel `answer` that stores `VALUE` at its pointer; its text carries
/// `MARK` in a comment.
fn module(entry: &str, value: u32, mark: &str) -> String {
    format!(
        "// {mark}\n.version 7.0\n.target sm_75\n.address_size 64\n\n\
         .visible .entry {entry}(\n    .param .u64 out\n)\n{{\n\
         \t.reg .b32 %r<2>;\n\t.reg .b64 %rd<3>;\n\n\
         \tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd2, %rd1;\n\
         \tmov.u32 %r1, {value};\n\tst.global.u32 [%rd2], %r1;\n\tret;\n}}\n"
    )
}

/// Loads the module in argv[1], launches `argv[2]`, prints the value it
/// stored; then, holding the file argv[3] in memory where one is given
/// (the check that the dump can find what is there), reads every mapping
/// of its own through /proc/self/mem for the secret, kept XOR-encoded so
/// the program's own bytes never hold it.
const DUMPER: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
typedef unsigned CUresult;
typedef unsigned long long CUdeviceptr;
CUresult cuInit(unsigned);
CUresult cuDeviceGet(int *, int);
CUresult cuDevicePrimaryCtxRetain(void **, int);
CUresult cuCtxSetCurrent(void *);
CUresult cuModuleLoadData(void **, const void *);
CUresult cuModuleGetFunction(void **, void *, const char *);
CUresult cuMemAlloc_v2(CUdeviceptr *, size_t);
CUresult cuMemcpyDtoH_v2(void *, CUdeviceptr, size_t);
CUresult cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, void *, void **, void **);

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(9); }
    char *text = calloc(1, 1 << 20);
    fread(text, 1, (1 << 20) - 1, f);
    fclose(f);
    return text;
}

/* "canary-secret-5f3a9c", each byte XOR 0x5a. */
static const unsigned char needle[] = {
    0x39, 0x3b, 0x34, 0x3b, 0x28, 0x23, 0x77, 0x29, 0x3f, 0x39, 0x28, 0x3f, 0x2e, 0x77,
    0x6f, 0x3c, 0x69, 0x3b, 0x63, 0x39};

static int holds_secret(const unsigned char *bytes, size_t n) {
    size_t k = sizeof needle;
    for (size_t i = 0; i + k <= n; i++) {
        size_t j = 0;
        while (j < k && (bytes[i + j] ^ 0x5a) == needle[j]) j++;
        if (j == k) return 1;
    }
    return 0;
}

static int dump_finds_secret(void) {
    FILE *maps = fopen("/proc/self/maps", "r");
    int mem = open("/proc/self/mem", O_RDONLY);
    char line[512];
    static unsigned char chunk[1 << 20];
    int found = 0;
    while (fgets(line, sizeof line, maps)) {
        unsigned long start, end;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) != 3 || perms[0] != 'r') continue;
        for (unsigned long at = start; at < end; at += sizeof chunk - 64) {
            size_t want = end - at < sizeof chunk ? end - at : sizeof chunk;
            ssize_t got = pread(mem, chunk, want, (off_t)at);
            if (got > 0 && holds_secret(chunk, (size_t)got)) found = 1;
            if (want < sizeof chunk) break;
        }
    }
    return found;
}

int main(int argc, char **argv) {
    char *ptx = slurp(argv[1]);
    char *held = argc > 3 ? slurp(argv[3]) : NULL;
    int device; void *context, *module, *function;
    CUdeviceptr out;
    unsigned value = 0;
    cuInit(0);
    cuDeviceGet(&device, 0);
    cuDevicePrimaryCtxRetain(&context, device);
    cuCtxSetCurrent(context);
    CUresult rc = cuModuleLoadData(&module, ptx);
    rc = rc ? rc : cuModuleGetFunction(&function, module, argv[2]);
    rc = rc ? rc : cuMemAlloc_v2(&out, 4);
    void *args[] = {&out};
    rc = rc ? rc : cuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, 0, args, 0);
    rc = rc ? rc : cuMemcpyDtoH_v2(&value, out, 4);
    printf("%u %u %d\n", rc, value, dump_finds_secret());
    free(held);
    return 0;
}
"#;

const SECRET: &str = "canary-secret-5f3a9c";

/// Runs the dumper through a broker with the canary for entry `answer`;
/// its line of output and the broker's record.
fn run(args: &[&str]) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let dumper = compile_c(DUMPER, dir.path(), "dumper");
    let canary = dir.path().join("canary.ptx");
    std::fs::write(&canary, module("answer", 42, SECRET)).unwrap();
    let student = dir.path().join("student.ptx");
    std::fs::write(&student, module("answer", 7, "the student's own")).unwrap();
    let other = dir.path().join("other.ptx");
    std::fs::write(&other, module("course_poison_shared", 9, "another module")).unwrap();
    let path = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let args: Vec<String> = args
        .iter()
        .map(|a| match *a {
            "STUDENT" => path("student.ptx"),
            "OTHER" => path("other.ptx"),
            "CANARY" => path("canary.ptx"),
            a => a.to_owned(),
        })
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let record = dir.path().join("record.txt");
    let canary = canary.to_string_lossy().into_owned();
    let flags = ["--canary", canary.as_str(), "--entries", "vecadd,answer"];
    let output = through_broker(&dumper, &args, &flags, &record);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let record = std::fs::read_to_string(record).unwrap();
    (
        String::from_utf8_lossy(&output.stdout).trim().to_owned(),
        record,
    )
}

#[test]
fn the_exercise_s_module_is_replaced_and_its_text_never_reaches_the_program() {
    let (line, record) = run(&["STUDENT", "answer"]);
    // The canary ran (42, not the student's 7), and no byte the program
    // can read holds the canary's text.
    assert_eq!(line, "0 42 0");
    let load = record
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| parse_line(l).unwrap())
        .find(|c| c.name == "cuModuleLoadData")
        .unwrap();
    assert_eq!(load.canary, Some(true));
}

#[test]
fn the_dump_finds_the_secret_where_the_program_holds_it() {
    // The same dump, the canary's file read into the program's memory: it
    // is found, so "not found" above means it is not there.
    let (line, _) = run(&["STUDENT", "answer", "CANARY"]);
    assert_eq!(line, "0 42 1");
}

#[test]
fn another_module_loads_as_sent() {
    let (line, record) = run(&["OTHER", "course_poison_shared"]);
    assert_eq!(line, "0 9 0");
    assert!(record.contains("canary=0"), "{record}");
}
