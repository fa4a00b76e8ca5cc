//! Start-up, the device and the context: the broker initialised the
//! driver and owns the one context, so the client sees device 0 and a
//! context token, and its calls on them are answered from those.

use kernels::broker_wire::Reply;

use super::{Answer, Failure, Note, Session};
use crate::driver::{INVALID_CONTEXT, INVALID_DEVICE, INVALID_VALUE};

impl Session<'_> {
    /// The real device, for ordinal 0 (the only one the client sees).
    fn real_device(&self, device: i32) -> Result<i32, Failure> {
        match (device, &self.context) {
            (0, Ok((_, real))) => Ok(*real),
            (0, Err(failure)) => Err(failure.clone()),
            _ => Err(INVALID_DEVICE.into()),
        }
    }

    /// The driver is initialised already; only the flags are checked.
    pub(super) fn init(&mut self, flags: u32) -> Answer {
        if flags != 0 {
            return Err(INVALID_VALUE.into());
        }
        Ok(Reply::Done)
    }

    pub(super) fn driver_version(&mut self) -> Answer {
        Ok(Reply::Int(self.driver.driver_version()?.into()))
    }

    pub(super) fn device_count(&mut self) -> Answer {
        Ok(Reply::Int(1))
    }

    pub(super) fn device_get(&mut self, ordinal: i32) -> Answer {
        self.real_device(ordinal)?;
        Ok(Reply::Int(0))
    }

    pub(super) fn device_attribute(&mut self, attribute: i32, device: i32) -> Answer {
        let device = self.real_device(device)?;
        let value = self.driver.device_attribute(attribute, device)?;
        Ok(Reply::Int(value.into()))
    }

    pub(super) fn device_name(&mut self, device: i32) -> Answer {
        let device = self.real_device(device)?;
        Ok(Reply::Text(self.driver.device_name(device)?))
    }

    /// The device's memory, within the cap.
    pub(super) fn device_total_memory(&mut self, device: i32) -> Answer {
        let device = self.real_device(device)?;
        let total = self.driver.device_total_memory(device)?;
        Ok(Reply::Value(self.memory.info(total, total).1))
    }

    /// Retaining or releasing the primary context: the broker holds it
    /// for the whole session either way.
    pub(super) fn primary_context(&mut self, device: i32) -> Answer {
        self.real_device(device)?;
        Ok(Reply::Value(self.context_token))
    }

    pub(super) fn set_current(&mut self, context: u64) -> Answer {
        if context != 0 && context != self.context_token {
            return Err(INVALID_CONTEXT.into());
        }
        Ok(Reply::Done)
    }

    pub(super) fn current(&mut self) -> Answer {
        Ok(Reply::Value(self.context_token))
    }

    pub(super) fn synchronize(&mut self, note: &mut Note) -> Answer {
        note.synchronised = true;
        self.driver.synchronize()?;
        Ok(Reply::Done)
    }
}
