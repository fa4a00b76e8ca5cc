//! What instructions compute, apart from where values come from: integer,
//! float, half and bit operations, conversions and comparisons, each chosen
//! at decode time as a function pointer (`ir`) and called by the
//! interpreter. Below both the decoder and the executor (wasmi's
//! `core::float`).

pub mod bits;
pub mod compare;
pub mod convert;
pub mod float;
pub mod half;
pub mod int;
