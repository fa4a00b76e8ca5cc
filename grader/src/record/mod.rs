//! What a grading keeps and shows: results.json ([`results`]) and its typed
//! outcomes ([`outcome`]: verdicts, findings, skips, integrity flags), the
//! reports rendered from it alone ([`reports`], each outcome worded by
//! [`render`], quoting student text with [`quote`]), LMS gradebooks
//! ([`export`]), and shards' results joined into one ([`merge`]).

pub mod export;
pub mod merge;
pub mod outcome;
pub mod quote;
pub mod render;
pub mod reports;
pub mod results;
