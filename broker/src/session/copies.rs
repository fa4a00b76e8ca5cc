//! Copies and memsets. Device ranges must lie inside one allocation (or
//! module global) of the program's; host ranges inside one of its
//! page-locked regions (real DMA from its pages, `pinned=1`) or, for
//! pageable memory, a chunk in a half of the staging area (`pinned=0`;
//! `crate::staging` says when each half is free). A pageable copy's chunks
//! are one line of the record.

use std::ffi::c_void;

use kernels::broker_wire::{CopyEnds, HostPlace, Reply};
use kernels::trace_record::{Direction, key};

use super::{Answer, Failure, Note, Session, StagedCopy, refuse, stream_field};
use crate::driver::{INVALID_VALUE, On, Raw};

/// A copy's host side, found.
struct Host {
    address: *mut c_void,
    region: Option<u64>,
    /// For a pageable chunk: its staging half, where it lies in the whole
    /// copy, and the whole copy's bytes.
    staged: Option<(u8, u64, u64)>,
}

impl Host {
    fn at(&self) -> u64 {
        self.staged.map_or(0, |(_, at, _)| at)
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
    /// program's (no bytes: anywhere, as the driver does nothing then).
    fn device_range(&self, base: u64, at: u64, bytes: u64) -> Result<u64, Failure> {
        let address = base
            .checked_add(at)
            .filter(|&a| bytes == 0 || self.memory.holds(a, bytes));
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
            HostPlace::Staging { half, at, total } => {
                let fits = at.checked_add(bytes).is_some_and(|end| end <= total);
                let address = self.staging.chunk(half, bytes).filter(|_| fits);
                let address = address.ok_or_else(|| {
                    let why =
                        "a pageable copy's chunk is not inside its copy and half the staging area";
                    refuse(INVALID_VALUE, why)
                })?;
                Ok(Host {
                    address,
                    region: None,
                    staged: Some((half, at, total)),
                })
            }
        }
    }

    /// The copy's details; for a pageable copy's chunk, whether it joins
    /// the line of the copy's first chunk and whether more will come.
    fn note_copy(&self, note: &mut Note, direction: Direction, host: Option<&Host>, bytes: u64) {
        let total = host
            .and_then(|h| h.staged)
            .map_or(bytes, |(_, _, total)| total);
        note.field(key::BYTES, total)
            .field(key::DIR, direction.word());
        let Some(host) = host else { return };
        note.field(key::PINNED, u8::from(host.staged.is_none()));
        if let Some(region) = host.region {
            note.hex(key::REGION, region);
        }
        let Some((_, at, total)) = host.staged else {
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
        match ends {
            CopyEnds::HtoD { dst, src } => {
                let host = self.host(src, bytes)?;
                self.note_copy(note, Direction::HostToDevice, Some(&host), bytes);
                note.hex(key::DST, dst);
                let dst = self.device_range(dst, host.at(), bytes)?;
                self.copy_to_device(dst, &host, bytes, (on, events_on), note)?;
            }
            CopyEnds::DtoH { dst, src } => {
                let host = self.host(dst, bytes)?;
                self.note_copy(note, Direction::DeviceToHost, Some(&host), bytes);
                note.hex(key::SRC, src);
                let src = self.device_range(src, host.at(), bytes)?;
                self.copy_to_host(&host, src, bytes, (on, events_on), note)?;
            }
            CopyEnds::DtoD { dst, src } => {
                self.note_copy(note, Direction::DeviceToDevice, None, bytes);
                note.hex(key::SRC, src).hex(key::DST, dst);
                let (src, dst) = (
                    self.device_range(src, 0, bytes)?,
                    self.device_range(dst, 0, bytes)?,
                );
                if bytes > 0 {
                    self.timed(events_on, note, |d| {
                        d.copy_dtod(dst, src, bytes as usize, on)
                    })?;
                }
            }
        }
        Ok(Reply::Done)
    }

    /// A staged chunk goes asynchronously on its stream (the null stream
    /// for the synchronous call, where the driver's own would go), and
    /// the answer waits until the other half is free.
    fn copy_to_device(
        &mut self,
        dst: u64,
        host: &Host,
        bytes: u64,
        (on, events_on): (On, Raw),
        note: &mut Note,
    ) -> Result<(), Failure> {
        let on = if host.staged.is_some() {
            On::Stream(events_on)
        } else {
            on
        };
        if bytes > 0 {
            // SAFETY: the host range lies inside a mapping of the
            // session's, which outlives the copy.
            self.timed(events_on, note, |d| unsafe {
                d.copy_htod(dst, host.address, bytes as usize, on)
            })?;
        }
        if let Some((half, _, _)) = host.staged {
            self.staging.issued(self.driver, half, events_on)?;
            self.staging.wait(self.driver, 1 - half)?;
        }
        Ok(())
    }

    /// A staged chunk waits for both halves, and is done before the
    /// answer, so the client may read it and fill the other half.
    fn copy_to_host(
        &mut self,
        host: &Host,
        src: u64,
        bytes: u64,
        (on, events_on): (On, Raw),
        note: &mut Note,
    ) -> Result<(), Failure> {
        if host.staged.is_some() {
            self.staging.wait(self.driver, 0)?;
            self.staging.wait(self.driver, 1)?;
        }
        if bytes > 0 {
            // SAFETY: as in copy_to_device.
            self.timed(events_on, note, |d| unsafe {
                d.copy_dtoh(host.address, src, bytes as usize, on)
            })?;
        }
        if let Some((half, _, _)) = host.staged {
            self.staging.issued(self.driver, half, events_on)?;
            self.staging.wait(self.driver, half)?;
        }
        Ok(())
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
