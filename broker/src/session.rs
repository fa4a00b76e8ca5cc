//! One client's session: the broker's only context on its backend, the
//! client's handles as tokens, its memory, the loop that reads a request,
//! makes the call and answers, and the record of every call. The calls
//! themselves are in the submodules, by family.

use std::io;
use std::os::fd::RawFd;
use std::os::unix::net::UnixStream;

use kernels::broker_wire::{MAX_MALFORMED, Reply, Request, VERSION, read_frame};
use kernels::trace_record::key;

use crate::config::Config;
use crate::device_memory::DeviceMemory;
use crate::driver::{Driver, INVALID_VALUE, Raw, STREAM_LEGACY, STREAM_PER_THREAD};
use crate::kernel_params::{Entries, Params};
use crate::record::{EntryId, Record};
use crate::shared_memory::SharedMemory;
use crate::socket;
use crate::staging::Staging;
use crate::tables::{Table, Tokens};
use crate::timing::{Scan, Timing};

mod copies;
mod device;
mod dispatch;
mod memory;
mod modules;
mod streams;

/// A call's failure: its CUresult and, where the broker refused it rather
/// than the driver, one line on why for the program's stderr.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub code: u32,
    pub reason: String,
}

impl From<u32> for Failure {
    fn from(code: u32) -> Failure {
        Failure {
            code,
            reason: String::new(),
        }
    }
}

/// The broker refuses a call with `code`, saying why.
pub fn refuse(code: u32, reason: impl Into<String>) -> Failure {
    Failure {
        code,
        reason: reason.into(),
    }
}

type Answer = Result<Reply, Failure>;

/// What a call adds to its record line, and the GPU work to time.
#[derive(Default)]
struct Note {
    /// The driver entry point the call stands for.
    name: &'static str,
    details: String,
    /// Events around the call's work: (before, after), or one event twice.
    spans: Vec<(Option<Raw>, Option<Raw>)>,
    /// A later chunk of a pageable copy: its line is the first chunk's.
    continues: Option<EntryId>,
    /// A pageable copy with chunks still to come.
    opens: Option<StagedCopy>,
    /// The call waited for work: times may be resolved.
    synchronised: bool,
    /// A descriptor to send with the reply.
    fd: Option<RawFd>,
}

impl Note {
    fn field(&mut self, key: &str, value: impl std::fmt::Display) -> &mut Note {
        use std::fmt::Write as _;
        let _ = write!(self.details, " {key}={value}");
        self
    }

    fn hex(&mut self, key: &str, value: u64) -> &mut Note {
        self.field(key, format_args!("{value:#x}"))
    }
}

/// A pageable copy recorded as one line while its chunks arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct StagedCopy {
    entry: Option<EntryId>,
    name: &'static str,
    next_at: u64,
    total: u64,
}

/// A loaded module.
struct Module {
    real: Raw,
    entries: Entries,
    /// Its PTX's bytes, against `MAX_LOADED_BYTES`.
    bytes: usize,
}

/// A function the client holds.
struct Function {
    real: Raw,
    module: u64,
    name: String,
    params: Params,
}

pub struct Session<'d> {
    driver: &'d Driver,
    config: &'d Config,
    /// The context and device, or why there is none.
    context: Result<(Raw, i32), Failure>,
    context_token: u64,
    tokens: Tokens,
    modules: Table<Module>,
    /// PTX bytes of the modules loaded.
    loaded_bytes: usize,
    functions: Table<Function>,
    streams: Table<Raw>,
    events: Table<Raw>,
    regions: Table<SharedMemory>,
    pinned_bytes: u64,
    memory: DeviceMemory,
    staging: Staging,
    staged: Option<StagedCopy>,
    timing: Option<Timing>,
    record: Record,
    seq: u64,
}

/// How a session went: its record, and why it ended.
pub struct Served {
    pub record: String,
    pub ended: String,
}

/// Serves the client on `socket` until it closes its end (or breaks the
/// protocol), then tears down.
pub fn serve(socket: &UnixStream, driver: &Driver, config: &Config) -> io::Result<Served> {
    let mut session = Session::open(driver, config)?;
    let ended = session.run(socket);
    session.close(&ended);
    Ok(Served {
        record: session.record.render(),
        ended,
    })
}

/// The context the broker owns: device 0's primary context, current on
/// the broker's one thread.
fn open_context(driver: &Driver) -> Result<(Raw, i32), Failure> {
    let failed = |what: &str, code| {
        let name = driver.error_text(code, false).unwrap_or_default();
        refuse(
            code,
            format!("the broker has no GPU context: {what} failed ({name})"),
        )
    };
    driver.init().map_err(|c| failed("cuInit", c))?;
    let device = driver.device(0).map_err(|c| failed("cuDeviceGet", c))?;
    let context = driver
        .primary_context(device)
        .map_err(|c| failed("cuDevicePrimaryCtxRetain", c))?;
    driver
        .set_current(context)
        .map_err(|c| failed("cuCtxSetCurrent", c))?;
    Ok((context, device))
}

impl<'d> Session<'d> {
    fn open(driver: &'d Driver, config: &'d Config) -> io::Result<Session<'d>> {
        let context = open_context(driver);
        let staging = Staging::open(driver, kernels::broker_wire::STAGING_BYTES as u64)?;
        let timing = context.is_ok().then(|| Timing::start(driver));
        let mut tokens = Tokens::default();
        Ok(Session {
            driver,
            config,
            context,
            context_token: tokens.fresh(),
            tokens,
            modules: Table::new("modules"),
            loaded_bytes: 0,
            functions: Table::new("functions"),
            streams: Table::new("streams"),
            events: Table::new("events"),
            regions: Table::new("page-locked buffers"),
            pinned_bytes: 0,
            memory: DeviceMemory::new(config.memory_cap),
            staging,
            staged: None,
            timing,
            record: Record::new(&config.describe()),
            seq: 0,
        })
    }

    /// Reads and answers requests until the session ends; says why.
    fn run(&mut self, socket: &UnixStream) -> String {
        let mut reader = socket;
        let mut malformed = 0;
        let mut greeted = false;
        loop {
            let body = match read_frame(&mut reader) {
                Ok(Some(body)) => body,
                Ok(None) => return "the client closed its end".into(),
                Err(err) => return format!("the client's bytes are not frames ({err})"),
            };
            let (reply, fd) = match Request::decode(&body) {
                Err(err) => {
                    malformed += 1;
                    if malformed > MAX_MALFORMED {
                        return format!("{malformed} requests did not decode, the last: {err}");
                    }
                    let why = format!("the broker could not read a request: {err}");
                    (Reply::failed(INVALID_VALUE, why), None)
                }
                Ok(Request::Hello { version, pid }) if !greeted => {
                    if version != VERSION {
                        return format!("the client speaks version {version}, not {VERSION}");
                    }
                    greeted = true;
                    self.record.set_pid(pid);
                    let staging_bytes = self.staging.bytes();
                    (Reply::Hello { staging_bytes }, Some(self.staging.raw_fd()))
                }
                Ok(_) if !greeted => return "the first request was not hello".into(),
                Ok(request) => self.handle(request),
            };
            if let Err(err) = socket::send(socket, &reply, fd) {
                return format!("the client stopped reading ({err})");
            }
        }
    }

    /// Makes one call and records it.
    fn handle(&mut self, request: Request) -> (Reply, Option<RawFd>) {
        if let Request::Mark { nonce, index } = &request {
            let answer = self.mark(nonce, *index);
            return (
                answer.unwrap_or_else(|f| Reply::failed(f.code, f.reason)),
                None,
            );
        }
        self.seq += 1;
        let name = crate::entry_point::entry_point(&request);
        let mut note = Note {
            name,
            ..Note::default()
        };
        let answer = match (request, &self.context) {
            (Request::ErrorText { code, description }, _) => self.error_text(code, description),
            (_, Err(failure)) => Err(failure.clone()),
            (request, Ok(_)) => self.dispatch(request, &mut note),
        };
        let result = answer.as_ref().map_or_else(|f| f.code, |_| 0);
        let entry = match note.continues {
            Some(entry) => {
                self.record.set_result(entry, result);
                Some(entry)
            }
            None => self.record.call(self.seq, name, result, note.details),
        };
        self.staged = note.opens.map(|open| StagedCopy { entry, ..open });
        if let Some(timing) = &mut self.timing {
            for (start, end) in note.spans {
                timing.track(entry, start, end);
            }
            if note.synchronised {
                timing.resolve(self.driver, &mut self.record, Scan::All);
            }
        }
        match answer {
            Ok(reply) => (reply, note.fd),
            Err(failure) => (Reply::failed(failure.code, failure.reason), None),
        }
    }

    /// The driver's stream for token `token`: 0, 1 and 2 are its own.
    fn stream(&self, token: u64) -> Result<Raw, Failure> {
        match token {
            0 => Ok(Raw::NULL),
            1 => Ok(STREAM_LEGACY),
            2 => Ok(STREAM_PER_THREAD),
            token => self.streams.get(token).copied(),
        }
    }

    /// Runs `work` on `stream` between two of the broker's events.
    fn timed(
        &mut self,
        stream: Raw,
        note: &mut Note,
        work: impl FnOnce(&Driver) -> Result<(), u32>,
    ) -> Result<(), Failure> {
        let driver = self.driver;
        let Some(timing) = &mut self.timing else {
            return work(driver).map_err(Failure::from);
        };
        let start = timing.mark(driver, &mut self.record, stream);
        if let Err(code) = work(driver) {
            timing.release(start);
            return Err(code.into());
        }
        let end = timing.mark(driver, &mut self.record, stream);
        note.spans.push((start, end));
        Ok(())
    }

    /// At the session's end: every time resolved, the ending said, the
    /// client's memory given back.
    fn close(&mut self, ended: &str) {
        let driver = self.driver;
        if self.context.is_ok() {
            let _ = driver.synchronize();
        }
        if let Some(timing) = &mut self.timing {
            timing.finish(driver, &mut self.record);
        }
        self.staging.close(driver);
        let words: String = ended
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        self.record.comment(format!("# ended: {words}\n"));
        for region in self.regions.drain() {
            // SAFETY: every region in the table was registered.
            let _ = unsafe { driver.unregister(region.base()) };
        }
        if !self.config.keep_frees {
            for base in self.memory.bases() {
                let _ = driver.free(base);
            }
        }
        if let Ok((_, device)) = self.context {
            let _ = driver.release_primary_context(device);
        }
    }

    /// A batch's mark: a comment in the record, where the grader cuts it.
    fn mark(&mut self, nonce: &str, index: u64) -> Answer {
        let fine = !nonce.is_empty()
            && nonce
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !fine {
            return Err(refuse(
                INVALID_VALUE,
                "a batch's nonce is letters, digits, '-' and '_'",
            ));
        }
        let index = usize::try_from(index).map_err(|_| Failure::from(INVALID_VALUE))?;
        self.record
            .comment(kernels::trace_record::batch_mark(nonce, index));
        Ok(Reply::Done)
    }

    fn error_text(&mut self, code: u32, description: bool) -> Answer {
        self.driver
            .error_text(code, description)
            .map(Reply::Text)
            .map_err(Failure::from)
    }
}

/// `name` where it is a PTX identifier, which a record may hold; `?`
/// otherwise.
fn record_name(name: &str) -> &str {
    let fine = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_$.".contains(&b));
    if fine { name } else { "?" }
}

/// The stream detail every timed call records.
fn stream_field(note: &mut Note, stream: u64) {
    note.hex(key::STREAM, stream);
}
