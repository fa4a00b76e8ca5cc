//! Streams and events, as tokens. An event the program records gets an
//! event of the broker's right after it on the same stream, so the record
//! has its time on the broker's own timeline.

use kernels::broker_wire::Reply;
use kernels::trace_record::key;

use super::{Answer, Failure, Note, Session, stream_field};
use crate::driver::INVALID_VALUE;

/// `CU_STREAM_NON_BLOCKING`: the only stream flag.
const STREAM_FLAGS: u32 = 0x1;
/// `CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING`: interprocess events
/// are not the program's to make.
const EVENT_FLAGS: u32 = 0x1 | 0x2;

impl Session<'_> {
    fn event(&self, token: u64) -> Result<crate::driver::Raw, Failure> {
        self.events.get(token).copied()
    }

    pub(super) fn create_stream(
        &mut self,
        flags: u32,
        priority: Option<i32>,
        note: &mut Note,
    ) -> Answer {
        if flags & !STREAM_FLAGS != 0 {
            return Err(INVALID_VALUE.into());
        }
        self.streams.room()?;
        let real = self.driver.create_stream(flags, priority)?;
        let token = self.streams.insert(&mut self.tokens, real)?;
        stream_field(note, token);
        Ok(Reply::Value(token))
    }

    pub(super) fn destroy_stream(&mut self, stream: u64, note: &mut Note) -> Answer {
        stream_field(note, stream);
        self.driver.destroy_stream(*self.streams.get(stream)?)?;
        self.streams.remove(stream)?;
        Ok(Reply::Done)
    }

    pub(super) fn synchronize_stream(&mut self, stream: u64, note: &mut Note) -> Answer {
        stream_field(note, stream);
        note.synchronised = true;
        self.driver.synchronize_stream(self.stream(stream)?)?;
        Ok(Reply::Done)
    }

    pub(super) fn query_stream(&mut self, stream: u64, note: &mut Note) -> Answer {
        stream_field(note, stream);
        self.driver.query_stream(self.stream(stream)?)?;
        Ok(Reply::Done)
    }

    pub(super) fn wait_event(
        &mut self,
        stream: u64,
        event: u64,
        flags: u32,
        note: &mut Note,
    ) -> Answer {
        stream_field(note, stream);
        note.hex(key::EVENT, event);
        let (raw_stream, raw_event) = (self.stream(stream)?, self.event(event)?);
        self.driver.wait_event(raw_stream, raw_event, flags)?;
        Ok(Reply::Done)
    }

    pub(super) fn create_event(&mut self, flags: u32, note: &mut Note) -> Answer {
        if flags & !EVENT_FLAGS != 0 {
            return Err(INVALID_VALUE.into());
        }
        self.events.room()?;
        let real = self.driver.create_event(flags)?;
        let token = self.events.insert(&mut self.tokens, real)?;
        note.hex(key::EVENT, token);
        Ok(Reply::Value(token))
    }

    pub(super) fn destroy_event(&mut self, event: u64, note: &mut Note) -> Answer {
        note.hex(key::EVENT, event);
        self.driver.destroy_event(self.event(event)?)?;
        self.events.remove(event)?;
        Ok(Reply::Done)
    }

    /// Records the program's event, and the broker's right after it.
    pub(super) fn record_event(&mut self, event: u64, stream: u64, note: &mut Note) -> Answer {
        stream_field(note, stream);
        note.hex(key::EVENT, event);
        let (raw_event, raw_stream) = (self.event(event)?, self.stream(stream)?);
        self.driver.record_event(raw_event, raw_stream)?;
        if let Some(timing) = &mut self.timing {
            let at = timing.mark(self.driver, &mut self.record, raw_stream);
            note.spans.push((at, at));
        }
        Ok(Reply::Done)
    }

    pub(super) fn synchronize_event(&mut self, event: u64, note: &mut Note) -> Answer {
        note.hex(key::EVENT, event);
        note.synchronised = true;
        self.driver.synchronize_event(self.event(event)?)?;
        Ok(Reply::Done)
    }

    pub(super) fn query_event(&mut self, event: u64, note: &mut Note) -> Answer {
        note.hex(key::EVENT, event);
        self.driver.query_event(self.event(event)?)?;
        Ok(Reply::Done)
    }

    pub(super) fn elapsed(&mut self, start: u64, end: u64, note: &mut Note) -> Answer {
        note.hex(key::EVENT, start).hex("end", end);
        let ms = self.driver.elapsed(self.event(start)?, self.event(end)?)?;
        note.field("ms", ms);
        Ok(Reply::Float(ms))
    }
}
