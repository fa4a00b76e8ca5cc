//! The broker's record of one session: a line per driver call in
//! `kernels::trace_record`'s grammar (`SEQ PID CALL RESULT key=value ...`),
//! the GPU times added as they resolve, bounded in bytes and cut with a
//! last line that says so.

use std::fmt::Write as _;

use kernels::trace_record::{self, GpuTime, key};

/// The most record text kept (the grader reads a trace of at most this
/// much, `grader::run::trace::MAX_TRACE_BYTES`).
pub const MAX_RECORD_BYTES: usize = 64 << 20;

/// A line of the record, to add details and times to later.
pub type EntryId = usize;

enum Line {
    Call {
        seq: u64,
        name: &'static str,
        result: u32,
        details: String,
        times: Option<(GpuTime, GpuTime)>,
    },
    Comment(String),
}

/// The record being made.
pub struct Record {
    pid: u32,
    preamble: String,
    lines: Vec<Line>,
    bytes: usize,
    max_bytes: usize,
    kept: u64,
    dropped: u64,
}

/// A line's cost against the bound: its text and room for its numbers.
fn cost(text: &str) -> usize {
    text.len() + 96
}

impl Record {
    /// A record whose header comment says what the broker was asked to do.
    pub fn new(preamble: &str) -> Record {
        Record::bounded(preamble, MAX_RECORD_BYTES)
    }

    pub fn bounded(preamble: &str, max_bytes: usize) -> Record {
        Record {
            pid: 0,
            preamble: format!("# cuda-course-broker: {preamble}\n"),
            lines: Vec::new(),
            bytes: 0,
            max_bytes,
            kept: 0,
            dropped: 0,
        }
    }

    /// The client's process id, as it said at hello: every line's PID.
    pub fn set_pid(&mut self, pid: u32) {
        self.pid = pid;
    }

    fn room_for(&mut self, text: &str) -> bool {
        if self.dropped > 0 || self.bytes + cost(text) > self.max_bytes {
            self.dropped += 1;
            return false;
        }
        self.bytes += cost(text);
        true
    }

    /// A call's line; None when the record is full.
    pub fn call(
        &mut self,
        seq: u64,
        name: &'static str,
        result: u32,
        details: String,
    ) -> Option<EntryId> {
        if !self.room_for(&details) {
            return None;
        }
        self.kept += 1;
        self.lines.push(Line::Call {
            seq,
            name,
            result,
            details,
            times: None,
        });
        Some(self.lines.len() - 1)
    }

    /// A comment line, `text` with its newline (a batch's mark).
    pub fn comment(&mut self, text: String) {
        if self.room_for(&text) {
            self.lines.push(Line::Comment(text));
        }
    }

    /// A later chunk of the same call failed: the call did.
    pub fn set_result(&mut self, entry: EntryId, code: u32) {
        if let Some(Line::Call { result, .. }) = self.lines.get_mut(entry)
            && *result == 0
        {
            *result = code;
        }
    }

    /// GPU times of (part of) the call's work: a call done in chunks spans
    /// from its first chunk's start to its last chunk's end.
    pub fn add_times(&mut self, entry: EntryId, start: GpuTime, end: GpuTime) {
        if let Some(Line::Call { times, .. }) = self.lines.get_mut(entry) {
            *times = Some(match *times {
                None => (start, end),
                Some((s, e)) => (s.min(start), e.max(end)),
            });
        }
    }

    /// The whole record, header first, cut line last where it was cut.
    pub fn render(&self) -> String {
        let mut out = String::from(trace_record::HEADER_LINE);
        out += &self.preamble;
        for line in &self.lines {
            match line {
                Line::Comment(text) => out += text,
                Line::Call {
                    seq,
                    name,
                    result,
                    details,
                    times,
                } => {
                    let _ = write!(out, "{seq} {} {name} {result}{details}", self.pid);
                    if let Some((start, end)) = times {
                        let _ = write!(out, " {}={start} {}={end}", key::GPU_START, key::GPU_END);
                    }
                    out.push('\n');
                }
            }
        }
        if self.dropped > 0 {
            out += &trace_record::cut_line(self.kept, self.dropped);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::trace_record::{is_cut, parse_line};

    #[test]
    fn lines_read_back_with_their_times_and_marks_stay_in_place() {
        let mut record = Record::new("test");
        record.set_pid(42);
        let launch = record
            .call(1, "cuLaunchKernel", 0, " stream=0x0 kernel=k".into())
            .unwrap();
        record.comment(trace_record::batch_mark("00ff", 0));
        let copy = record
            .call(2, "cuMemcpyDtoH_v2", 0, " bytes=4 dir=dtoh".into())
            .unwrap();
        record.add_times(copy, GpuTime { nanos: 30 }, GpuTime { nanos: 40 });
        record.add_times(copy, GpuTime { nanos: 10 }, GpuTime { nanos: 20 });
        record.set_result(copy, 700);
        record.set_result(copy, 1);
        let text = record.render();
        let runs = trace_record::split_batch(&text, "00ff");
        assert_eq!(runs.len(), 1);
        let calls: Vec<_> = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| parse_line(l).unwrap())
            .collect();
        assert_eq!((calls[0].pid, calls[0].seq), (42, 1));
        assert_eq!(calls[0].gpu_start, None);
        assert_eq!(
            (calls[1].result, calls[1].gpu_start, calls[1].gpu_end),
            (
                700,
                Some(GpuTime { nanos: 10 }),
                Some(GpuTime { nanos: 40 })
            )
        );
        assert!(!is_cut(&text) && launch == 0);
    }

    #[test]
    fn a_full_record_is_cut_and_says_how_much_it_left_out() {
        let mut record = Record::bounded("test", 1000);
        let kept = (1..=100)
            .filter_map(|seq| record.call(seq, "cuInit", 0, String::new()))
            .count();
        assert!(kept > 0 && kept < 100);
        let text = record.render();
        assert!(is_cut(&text));
        assert!(text.ends_with(&trace_record::cut_line(kept as u64, 100 - kept as u64)));
        // Nothing after the cut, not even a comment.
        record.comment("# late\n".into());
        assert!(!record.render().contains("late"));
    }
}
