//! The corpus harness's own parts (tests/corpus/): records round-trip
//! through their text, tolerances accept what they say and no more, and
//! case declarations parse as documented.

#[path = "corpus/record.rs"]
mod record;
#[path = "corpus/spec.rs"]
mod spec;

use record::{Output, Record, close, differences, parse_all};
use spec::{Generator, Param, Size, Tolerance, Type};

#[test]
fn records_round_trip_through_text() {
    let record = Record {
        name: "k".into(),
        steps: vec![("launch".into(), "CUDA_SUCCESS".into())],
        outputs: vec![Output {
            label: "1".into(),
            ty: Type::U16,
            bits: vec![1, 0xffff],
        }],
        printf: vec!["a b".into(), String::new()],
    };
    let text = record.render();
    assert!(text.contains("out 1 u16 0001 ffff"), "{text}");
    assert_eq!(parse_all(&text).unwrap()["k"], record);
}

#[test]
fn tolerances_accept_what_they_say_and_no_more() {
    let one = u64::from(1f32.to_bits());
    let next = one + 1;
    assert!(!close(Type::F32, one, next, Tolerance::Exact));
    assert!(close(Type::F32, one, next, Tolerance::Ulp(1)));
    assert!(!close(Type::F32, one, next + 1, Tolerance::Ulp(1)));
    let nan = u64::from(f32::NAN.to_bits());
    assert!(close(Type::F32, nan, nan | 1, Tolerance::Ulp(1)));
    assert!(!close(Type::F32, nan, one, Tolerance::Ulp(1000)));
    // Across zero: -0 and the smallest positive are one apart.
    assert!(close(Type::F32, 0x8000_0000, 1, Tolerance::Ulp(1)));
    assert!(close(
        Type::F64,
        1f64.to_bits(),
        1.0000001f64.to_bits(),
        Tolerance::Abs(1e-6)
    ));
    assert!(!close(Type::U32, 1, 2, Tolerance::Ulp(5)));
}

#[test]
fn a_case_declares_its_launch_parameters_and_tolerances() {
    let source = "\
//@ case first
//@ launch 2,3 64 dyn optin-16
//@ maxdyn 48k+8
//@ in f32 4 iota 0.5 1
//@ out f32 4 tol ulp 3
//@ val i32 -2
//@ case second kernel other
//@ launch 1 32
extern \"C\" __global__ void kernel_name(const float *a, float *b, int n) {}
";
    let cases = spec::parse(source).unwrap();
    assert_eq!(cases.len(), 2);
    let first = &cases[0];
    assert_eq!(first.kernel, "kernel_name");
    assert_eq!(first.grid, [2, 3, 1]);
    assert_eq!(first.block, [64, 1, 1]);
    assert_eq!(first.dynamic, Size::OptIn(-16));
    assert_eq!(first.dynamic.resolve(65536, 1024), 65536 - 1024 - 16);
    assert_eq!(
        first.max_dynamic.unwrap().resolve(65536, 1024),
        49152 - 1024 + 8
    );
    assert_eq!(first.tolerances(), vec![Tolerance::Ulp(3)]);
    let Param::Buffer { init, .. } = &first.params[0] else {
        panic!("a buffer");
    };
    assert_eq!(
        init.fill(Type::F32, 2),
        [1.0f32.to_le_bytes(), 1.5f32.to_le_bytes()].concat()
    );
    assert_eq!(
        first.params[2],
        Param::Value((-2i32).to_le_bytes().to_vec())
    );
    assert_eq!(cases[1].kernel, "other");
    let bounded =
        spec::parse("//@ case b\n__global__ void __launch_bounds__(64, 2) name(int *x) {}")
            .unwrap();
    assert_eq!(bounded[0].kernel, "name");
    assert!(
        spec::parse("//@ launch 1 1").is_err(),
        "a line before any case"
    );
    assert!(spec::parse("//@ case a kernel k\n//@ case a kernel k").is_err());
}

#[test]
fn generators_are_fixed_streams() {
    let rand = Generator::Rand {
        low: -5.0,
        high: 5.0,
    };
    let a = rand.fill(Type::I32, 100);
    assert_eq!(a, rand.fill(Type::I32, 100), "the same every time");
    let values: Vec<i32> = a
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert!(values.iter().all(|v| (-5..5).contains(v)));
    assert!(values.iter().any(|&v| v < 0) && values.iter().any(|&v| v > 0));
    let bits = Generator::Bits(vec![1, 2]).fill(Type::U16, 3);
    assert_eq!(bits, vec![1, 0, 2, 0, 1, 0]);
}

#[test]
fn differences_name_what_differs_and_ignore_printf_order() {
    let gpu = Record {
        name: "k".into(),
        steps: vec![("launch".into(), "CUDA_SUCCESS".into())],
        outputs: vec![Output {
            label: "0".into(),
            ty: Type::F32,
            bits: vec![u64::from(1f32.to_bits()), u64::from(2f32.to_bits())],
        }],
        printf: vec!["a".into(), "b".into()],
    };
    let mut emulator = gpu.clone();
    emulator.printf.reverse();
    assert!(differences(&gpu, &emulator, &[Tolerance::Exact]).is_empty());
    assert_eq!(gpu.summary(), "ok, 2 values, 2 printf lines");
    emulator.outputs[0].bits[1] += 1;
    let found = differences(&gpu, &emulator, &[Tolerance::Exact]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("1 of 2 differ; first at [1]"),
        "{found:?}"
    );
    assert!(differences(&gpu, &emulator, &[Tolerance::Ulp(1)]).is_empty());
    emulator.steps[0].1 = "CUDA_ERROR_INVALID_VALUE".into();
    emulator.printf.pop();
    let found = differences(&gpu, &emulator, &[Tolerance::Ulp(1)]);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(emulator.summary(), "launch: CUDA_ERROR_INVALID_VALUE");
}
