//! Copies and memsets. Device ranges must lie inside one allocation (or
//! module global) of the program's; host ranges inside one of its
//! page-locked regions (real DMA from its pages, `pinned=1`) or, for
//! pageable memory, a chunk of the staging area (`pinned=0`): the staging
//! memfd is not registered, so the driver treats it as the pageable memory
//! it stands for, and an async copy returns once the chunk may be reused.
//! A pageable copy's chunks are one line of the record.

use std::ffi::c_void;

use kernels::broker_wire::{CopyEnds, HostPlace, Reply};
use kernels::trace_record::{Direction, key};

use super::{Answer, Failure, Note, Session, StagedCopy, refuse, stream_field};
use crate::driver::{INVALID_VALUE, On, Raw};

/// A copy's host side, found.
struct Host {
    address: *mut c_void,
    region: Option<u64>,
    /// For a pageable chunk: where it lies in the whole copy, and the
    /// whole copy's bytes.
    staged: Option<(u64, u64)>,
}

impl Host {
    fn at(&self) -> u64 {
        self.staged.map_or(0, |(at, _)| at)
    }
}

impl Session<'_> {
    /// `on`, and the stream the broker's events go on (the null stream
    /// for the synchronous forms, which run there).
    fn on(&self, stream: Option<u64>) -> Result<(On, Raw), Failure> {
        match stream {
            None => Ok((On::Sync, Raw::NULL)),
            Some(token) => {
                let raw = self.stream(token)?;
                Ok((On::Stream(raw), raw))
            }
        }
    }

    /// `bytes` at `at` past `base`, inside one device range of the
    /// program's.
    fn device_range(&self, base: u64, at: u64, bytes: u64) -> Result<u64, Failure> {
        let address = base
            .checked_add(at)
            .filter(|&a| self.memory.holds(a, bytes));
        address.ok_or_else(|| {
            refuse(
                INVALID_VALUE,
                format!(
                    "{bytes} bytes at {base:#x} + {at} are not inside one device allocation of this program"
                ),
            )
        })
    }

    fn host(&self, place: HostPlace, bytes: u64) -> Result<Host, Failure> {
        match place {
            HostPlace::Region { region, offset } => {
                let address = self.regions.get(region)?.at(offset, bytes).ok_or_else(|| {
                    refuse(INVALID_VALUE, "the copy runs past its page-locked buffer")
                })?;
                Ok(Host {
                    address,
                    region: Some(region),
                    staged: None,
                })
            }
            HostPlace::Staging { at, total } => {
                let fits = at.checked_add(bytes).is_some_and(|end| end <= total);
                let address = self.staging.at(0, bytes).filter(|_| fits).ok_or_else(|| {
                    refuse(
                        INVALID_VALUE,
                        "a pageable copy's chunk is not inside its copy",
                    )
                })?;
                Ok(Host {
                    address,
                    region: None,
                    staged: Some((at, total)),
                })
            }
        }
    }

    /// The copy's details; for a pageable copy's chunk, whether it joins
    /// the line of the copy's first chunk and whether more will come.
    fn note_copy(&self, note: &mut Note, direction: Direction, host: Option<&Host>, bytes: u64) {
        let total = host
            .and_then(|h| h.staged)
            .map_or(bytes, |(_, total)| total);
        note.field(key::BYTES, total)
            .field(key::DIR, direction.word());
        let Some(host) = host else { return };
        note.field(key::PINNED, u8::from(host.staged.is_none()));
        if let Some(region) = host.region {
            note.hex(key::REGION, region);
        }
        let Some((at, total)) = host.staged else {
            return;
        };
        let follows = |open: &StagedCopy| {
            at > 0 && (open.name, open.next_at, open.total) == (note.name, at, total)
        };
        note.continues = self.staged.filter(follows).and_then(|open| open.entry);
        let next_at = at + bytes;
        if next_at < total {
            note.opens = Some(StagedCopy {
                entry: None,
                name: note.name,
                next_at,
                total,
            });
        }
    }

    pub(super) fn copy(
        &mut self,
        ends: CopyEnds,
        bytes: u64,
        stream: Option<u64>,
        note: &mut Note,
    ) -> Answer {
        let (on, events_on) = self.on(stream)?;
        stream_field(note, stream.unwrap_or(0));
        note.synchronised = matches!(on, On::Sync);
        let size = bytes as usize;
        match ends {
            CopyEnds::HtoD { dst, src } => {
                let host = self.host(src, bytes)?;
                self.note_copy(note, Direction::HostToDevice, Some(&host), bytes);
                note.hex(key::DST, dst);
                if bytes > 0 {
                    let dst = self.device_range(dst, host.at(), bytes)?;
                    // SAFETY: the host range lies inside a mapping of the
                    // session's, which outlives the copy.
                    self.timed(events_on, note, |d| unsafe {
                        d.copy_htod(dst, host.address, size, on)
                    })?;
                }
            }
            CopyEnds::DtoH { dst, src } => {
                let host = self.host(dst, bytes)?;
                self.note_copy(note, Direction::DeviceToHost, Some(&host), bytes);
                note.hex(key::SRC, src);
                if bytes > 0 {
                    let src = self.device_range(src, host.at(), bytes)?;
                    // SAFETY: as for HtoD.
                    self.timed(events_on, note, |d| unsafe {
                        d.copy_dtoh(host.address, src, size, on)
                    })?;
                }
            }
            CopyEnds::DtoD { dst, src } => {
                self.note_copy(note, Direction::DeviceToDevice, None, bytes);
                note.hex(key::SRC, src).hex(key::DST, dst);
                if bytes > 0 {
                    let (src, dst) = (
                        self.device_range(src, 0, bytes)?,
                        self.device_range(dst, 0, bytes)?,
                    );
                    self.timed(events_on, note, |d| d.copy_dtod(dst, src, size, on))?;
                }
            }
        }
        Ok(Reply::Done)
    }

    /// `count` elements of `width` bytes set to `value`.
    pub(super) fn memset(
        &mut self,
        address: u64,
        (width, value): (u8, u32),
        count: u64,
        stream: Option<u64>,
        note: &mut Note,
    ) -> Answer {
        let (on, events_on) = self.on(stream)?;
        let bytes = count
            .checked_mul(width.into())
            .ok_or(Failure::from(INVALID_VALUE))?;
        stream_field(note, stream.unwrap_or(0));
        note.field(key::BYTES, bytes).hex(key::DST, address);
        if bytes > 0 {
            let address = self.device_range(address, 0, bytes)?;
            self.timed(events_on, note, |d| {
                d.memset(address, width, value, count as usize, on)
            })?;
        }
        Ok(Reply::Done)
    }
}
