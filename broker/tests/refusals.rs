//! A hostile client speaking the wire protocol itself to a broker on the
//! CPU emulator: what it may not do is refused with a CUDA error and the
//! broker's reason (never the driver's: the call does not reach it), the
//! memory cap holds, garbage ends the session cleanly with the record
//! written, and the broker ends when its client does.

mod common;

use std::os::unix::process::ExitStatusExt;

use common::{RawSession, code, course_binary, through_broker};
use kernels::broker_wire::{
    CopyEnds, HostPlace, MAX_FRAME_BYTES, MAX_MALFORMED, Reply, Request, frame,
};

const INVALID_VALUE: u32 = 1;
const OUT_OF_MEMORY: u32 = 2;
const INVALID_HANDLE: u32 = 400;

fn value(reply: Reply) -> u64 {
    match reply {
        Reply::Value(v) => v,
        other => panic!("not a value: {other:?}"),
    }
}

fn reason(reply: &Reply) -> &str {
    match reply {
        Reply::Failed { reason, .. } => reason,
        _ => "",
    }
}

#[test]
fn gpu_memory_past_the_cap_is_out_of_memory_and_the_info_says_the_cap() {
    let session = RawSession::open(&["--memory-cap", "1MiB"]);
    let first = session.ask(&Request::MemAlloc { bytes: 600 << 10 });
    assert!(matches!(first, Reply::Value(_)), "{first:?}");
    let second = session.ask(&Request::MemAlloc { bytes: 600 << 10 });
    assert_eq!(code(&second), OUT_OF_MEMORY);
    assert!(reason(&second).contains("1048576 bytes"), "{second:?}");
    let Reply::Pair(free, total) = session.ask(&Request::MemGetInfo) else {
        panic!("memory info");
    };
    assert_eq!((free, total), ((1 << 20) - (600 << 10), 1 << 20));
    assert_eq!(
        value(session.ask(&Request::DeviceTotalMem { device: 0 })),
        1 << 20
    );
    // Freed memory is the program's to allocate again.
    session.ask(&Request::MemFree {
        address: value(first),
    });
    assert!(matches!(
        session.ask(&Request::MemAlloc { bytes: 1 << 20 }),
        Reply::Value(_)
    ));
    let (status, record) = session.close();
    assert!(status.success());
    assert!(record.contains(" cuMemAlloc_v2 2 bytes=614400"), "{record}");
}

#[test]
fn a_program_beside_a_hog_is_told_the_cap_before_it_allocates() {
    let Some(program) = course_binary("vecadd-anyN-solution") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.txt");
    let args = ["--json", "--n", "1000000", "--runs", "1"];
    let output = through_broker(&program, &args, &["--memory-cap", "1MiB"], &record);
    // 12 MB of a, b and c do not fit 1 MiB: bad arguments, nothing ran.
    assert_eq!(output.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("bad-arguments") && stdout.contains("free"),
        "{stdout}"
    );
}

#[test]
fn wrong_handles_are_refused_and_handles_of_one_kind_are_not_another() {
    let session = RawSession::open(&[]);
    let stream = value(session.ask(&Request::StreamCreate {
        flags: 0,
        priority: None,
    }));
    let event = value(session.ask(&Request::EventCreate { flags: 0 }));
    for request in [
        Request::StreamSynchronize { stream: 0x9990 },
        Request::StreamSynchronize { stream: event },
        Request::EventRecord {
            event: stream,
            stream,
        },
        Request::EventSynchronize { event: 0 },
        Request::ModuleGetFunction {
            module: stream,
            name: "k".into(),
        },
        Request::Launch {
            function: event,
            grid: [1; 3],
            block: [1; 3],
            shared: 0,
            stream: 0,
            params: vec![],
        },
        Request::MemFreeHost { region: stream },
        Request::FuncGetAttribute {
            function: 0xdead_0000,
            attribute: 0,
        },
    ] {
        assert_eq!(code(&session.ask(&request)), INVALID_HANDLE, "{request:?}");
    }
    // The driver's own streams are streams.
    assert_eq!(
        session.ask(&Request::StreamSynchronize { stream: 1 }),
        Reply::Done
    );
    assert_eq!(
        session.ask(&Request::EventRecord { event, stream: 2 }),
        Reply::Done
    );
    let (status, _) = session.close();
    assert!(status.success());
}

#[test]
fn device_ranges_outside_the_program_s_allocations_are_refused() {
    let session = RawSession::open(&[]);
    let base = value(session.ask(&Request::MemAlloc { bytes: 4096 }));
    let region = match session.ask(&Request::MemAllocHost { bytes: 4096 }) {
        Reply::Region { region, .. } => region,
        other => panic!("{other:?}"),
    };
    let copy = |ends, bytes| Request::Copy {
        ends,
        bytes,
        stream: None,
    };
    let pinned = HostPlace::Region { region, offset: 0 };
    let refused = [
        // One byte past the end, a wrapping length, no allocation at all.
        copy(
            CopyEnds::DtoD {
                dst: base,
                src: base + 1,
            },
            4096,
        ),
        copy(
            CopyEnds::HtoD {
                dst: base,
                src: pinned,
            },
            u64::MAX,
        ),
        copy(
            CopyEnds::DtoH {
                dst: pinned,
                src: 0x1000,
            },
            4,
        ),
        // Inside the allocation, past the page-locked buffer.
        copy(
            CopyEnds::HtoD {
                dst: base,
                src: HostPlace::Region {
                    region,
                    offset: 4093,
                },
            },
            4,
        ),
        // A staged chunk larger than its copy.
        copy(
            CopyEnds::HtoD {
                dst: base,
                src: HostPlace::Staging {
                    half: 0,
                    at: 0,
                    total: 2,
                },
            },
            4,
        ),
        Request::Memset {
            address: base + 4092,
            width: 4,
            value: 0,
            count: 2,
            stream: None,
        },
        Request::MemFree { address: base + 8 },
    ];
    for request in refused {
        let reply = session.ask(&request);
        assert_eq!(code(&reply), INVALID_VALUE, "{request:?}");
        assert!(
            !reason(&reply).is_empty(),
            "the broker's refusal: {request:?}"
        );
    }
    // The same calls inside the ranges go through.
    assert_eq!(
        session.ask(&copy(
            CopyEnds::HtoD {
                dst: base,
                src: pinned
            },
            4096
        )),
        Reply::Done
    );
    assert_eq!(
        session.ask(&copy(
            CopyEnds::DtoD {
                dst: base,
                src: base + 8
            },
            8
        )),
        Reply::Done
    );
    let (status, record) = session.close();
    assert!(status.success());
    assert!(record.contains("pinned=1 region="), "{record}");
}

#[test]
fn launch_parameters_must_be_the_bytes_the_ptx_declares() {
    let session = RawSession::open(&[]);
    let ptx = ".version 7.0\n.target sm_75\n.address_size 64\n\
               .visible .entry k(.param .u64 p, .param .u32 n)\n{\n ret;\n}\n";
    let module = value(session.ask(&Request::ModuleLoad {
        image: ptx.as_bytes().to_vec(),
    }));
    let (function, params) = match session.ask(&Request::ModuleGetFunction {
        module,
        name: "k".into(),
    }) {
        Reply::Function { function, params } => (function, params),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        params.iter().map(|p| (p.size, p.align)).collect::<Vec<_>>(),
        [(8, 8), (4, 4)]
    );
    let launch = |params: Vec<u8>| Request::Launch {
        function,
        grid: [1; 3],
        block: [1; 3],
        shared: 0,
        stream: 0,
        params,
    };
    let short = session.ask(&launch(vec![0; 8]));
    assert_eq!(code(&short), INVALID_VALUE);
    assert!(reason(&short).contains("declares 12"), "{short:?}");
    assert_eq!(session.ask(&launch(vec![0; 12])), Reply::Done);
    let not_ptx = session.ask(&Request::ModuleLoad {
        image: b"\x7fELF junk".to_vec(),
    });
    assert!(reason(&not_ptx).contains("PTX"), "{not_ptx:?}");
    session.close();
}

#[test]
fn an_unknown_tag_is_answered_and_the_session_goes_on() {
    let session = RawSession::open(&[]);
    session.send_bytes(&frame(&[99, 1, 2, 3]));
    let reply = session.reply();
    assert_eq!(code(&reply), INVALID_VALUE);
    assert!(reason(&reply).contains("tag 99"), "{reply:?}");
    assert!(value(session.ask(&Request::DeviceTotalMem { device: 0 })) > 0);
    let (status, record) = session.close();
    assert!(status.success());
    assert!(
        record.contains("# ended: the client closed its end"),
        "{record}"
    );
}

#[test]
fn garbage_and_oversized_frames_end_the_session_cleanly() {
    let oversized = ((MAX_FRAME_BYTES + 1) as u32).to_le_bytes().to_vec();
    let mut flood = Vec::new();
    for _ in 0..=MAX_MALFORMED {
        flood.extend(frame(&[99]));
    }
    let garbage: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    for (bytes, says) in [
        (oversized, "not frames"),
        (garbage, "not frames"),
        (flood, "did not decode"),
    ] {
        let session = RawSession::open(&[]);
        session.send_bytes(&bytes);
        // The broker ends the session on its own: no close from here.
        let mut broker = session.broker;
        let status = broker.wait().unwrap();
        assert!(status.success(), "{status:?}");
        let record = std::fs::read_to_string(&session.record).unwrap();
        assert!(
            record.contains("# ended: ") && record.contains(says),
            "{record}"
        );
    }
    // Before hello, any other request ends it.
    let session = RawSession::unopened(&[]);
    session.send_bytes(&frame(&Request::CtxSynchronize.encode()));
    let (status, record) = session.close();
    assert!(status.success());
    assert!(
        record.contains("the first request was not hello"),
        "{record}"
    );
}

#[test]
fn the_broker_ends_when_its_client_dies() {
    let dir = tempfile::tempdir().unwrap();
    let program = common::compile_c(
        r#"
        #include <signal.h>
        unsigned cuInit(unsigned);
        int main(void) { cuInit(0); raise(SIGKILL); return 0; }
        "#,
        dir.path(),
        "dies",
    );
    let record = dir.path().join("record.txt");
    let output = through_broker(&program, &[], &[], &record);
    assert_eq!(
        output.status.code(),
        Some(128 + 9),
        "{:?}",
        output.status.signal()
    );
    let record = std::fs::read_to_string(&record).unwrap();
    assert!(
        record.contains(" cuInit 0") && record.contains("# ended:"),
        "{record}"
    );
}

#[test]
fn without_a_broker_every_call_is_no_device_and_stderr_says_why() {
    let Some(program) = course_binary("vecadd-anyN-solution") else {
        return;
    };
    for (variable, says) in [
        (None, "CUDA_COURSE_BROKER_FD is not set"),
        (Some("0"), "CUDA_COURSE_BROKER_FD=0 is not an open socket"),
    ] {
        let mut command = std::process::Command::new(&program);
        command
            .args(["--json", "--n", "1000"])
            .env("LD_LIBRARY_PATH", common::client_dir())
            .stdin(std::process::Stdio::null());
        match variable {
            Some(value) => command.env("CUDA_COURSE_BROKER_FD", value),
            None => command.env_remove("CUDA_COURSE_BROKER_FD"),
        };
        let output = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(3), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
        assert_eq!(stderr.matches("cuda-course broker:").count(), 1, "{stderr}");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            stdout.contains("no-gpu") || stdout.contains("cuda"),
            "{stdout}"
        );
    }
}

#[test]
fn a_batch_s_marks_cut_the_record_as_the_trace_s_do() {
    let dir = tempfile::tempdir().unwrap();
    let program = common::compile_c(
        r#"
        #include <stdio.h>
        unsigned cuInit(unsigned);
        unsigned cuCtxSynchronize(void);
        unsigned cuda_course_broker_mark(const char *, unsigned long long);
        int main(void) {
            cuInit(0);
            cuda_course_broker_mark("00ff", 0);
            cuCtxSynchronize();
            cuda_course_broker_mark("00ff", 1);
            printf("%u\n", cuda_course_broker_mark("no\nnewlines", 2));
            return 0;
        }
        "#,
        dir.path(),
        "marks",
    );
    let record = dir.path().join("record.txt");
    let output = through_broker(&program, &[], &[], &record);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        INVALID_VALUE.to_string()
    );
    let record = std::fs::read_to_string(&record).unwrap();
    let runs = kernels::trace_record::split_batch(&record, "00ff");
    assert_eq!(runs.len(), 2, "{record}");
    assert!(runs[0].contains(" cuInit 0") && !runs[0].contains("cuCtxSynchronize"));
    assert!(runs[1].contains(" cuCtxSynchronize 0") && !runs[1].contains("cuInit"));
    assert!(!record.contains("newlines"), "{record}");
}

#[test]
fn the_client_is_never_the_broker_s_backend() {
    let client = common::client_dir().join("libcuda.so.1");
    let output = common::broker()
        .arg("--driver")
        .arg(&client)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(125));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("is the broker's client library, not a driver"),
        "{stderr}"
    );
}
