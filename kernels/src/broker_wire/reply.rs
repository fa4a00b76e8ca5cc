//! What the broker answers: one [`Reply`] per request, self-describing, so
//! the client checks it got the kind it asked for.

use super::{MAX_PARAMS, MAX_TEXT_BYTES, Reader, WireError, Writer};

/// One kernel parameter as the PTX declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamLayout {
    pub size: u32,
    pub align: u32,
}

/// The broker's answer to one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The call succeeded and returns nothing.
    Done,
    /// A signed number (a version, an attribute, a count, an ordinal).
    Int(i64),
    /// An unsigned number: a handle (token), a device address, a size.
    Value(u64),
    /// Two of them: free and total memory; a global's address and size.
    Pair(u64, u64),
    /// Milliseconds between two events.
    Float(f32),
    Text(String),
    /// A function's token and its parameters, in order.
    Function {
        function: u64,
        params: Vec<ParamLayout>,
    },
    /// A page-locked region's token and mapped length; its memfd comes
    /// with the reply.
    Region {
        region: u64,
        bytes: u64,
    },
    /// The session is open; the staging memfd, of `staging_bytes`, comes
    /// with the reply.
    Hello {
        staging_bytes: u64,
    },
    /// The call failed with CUresult `code` (never 0); `reason`, when not
    /// empty, is the broker's one line on why.
    Failed {
        code: u32,
        reason: String,
    },
}

impl Reply {
    /// A failure with the broker's reason, cut to [`MAX_TEXT_BYTES`] on a
    /// character boundary.
    pub fn failed(code: u32, reason: impl Into<String>) -> Reply {
        let mut reason = reason.into();
        if reason.len() > MAX_TEXT_BYTES {
            let mut end = MAX_TEXT_BYTES;
            while !reason.is_char_boundary(end) {
                end -= 1;
            }
            reason.truncate(end);
        }
        Reply::Failed { code, reason }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        match self {
            Reply::Done => w.u8(0),
            Reply::Int(v) => w.u8(1).u64(*v as u64),
            Reply::Value(v) => w.u8(2).u64(*v),
            Reply::Pair(a, b) => w.u8(3).u64(*a).u64(*b),
            Reply::Float(v) => w.u8(4).u32(v.to_bits()),
            Reply::Text(text) => w.u8(5).bytes(text.as_bytes()),
            Reply::Function { function, params } => {
                w.u8(6).u64(*function).u32(params.len() as u32);
                for p in params {
                    w.u32(p.size).u32(p.align);
                }
                &mut w
            }
            Reply::Region { region, bytes } => w.u8(7).u64(*region).u64(*bytes),
            Reply::Hello { staging_bytes } => w.u8(8).u64(*staging_bytes),
            Reply::Failed { code, reason } => w.u8(9).u32(*code).bytes(reason.as_bytes()),
        };
        w.0
    }

    /// Decodes one frame's body: any bytes give a reply or an error.
    pub fn decode(body: &[u8]) -> Result<Reply, WireError> {
        let mut r = Reader(body);
        let reply = match r.u8("tag")? {
            0 => Reply::Done,
            1 => Reply::Int(r.u64("number")? as i64),
            2 => Reply::Value(r.u64("value")?),
            3 => Reply::Pair(r.u64("first value")?, r.u64("second value")?),
            4 => Reply::Float(f32::from_bits(r.u32("milliseconds")?)),
            5 => Reply::Text(r.text(MAX_TEXT_BYTES, "text")?),
            6 => read_function(&mut r)?,
            7 => Reply::Region {
                region: r.u64("region")?,
                bytes: r.u64("bytes")?,
            },
            8 => Reply::Hello {
                staging_bytes: r.u64("staging bytes")?,
            },
            9 => {
                let code = r.u32("code")?;
                if code == 0 {
                    return Err(WireError::BadValue {
                        what: "failure code",
                        value: 0,
                    });
                }
                Reply::Failed {
                    code,
                    reason: r.text(MAX_TEXT_BYTES, "reason")?,
                }
            }
            tag => return Err(WireError::UnknownTag { tag }),
        };
        r.finish()?;
        Ok(reply)
    }
}

fn read_function(r: &mut Reader) -> Result<Reply, WireError> {
    let function = r.u64("function")?;
    let count = r.u32("parameter count")? as usize;
    if count > MAX_PARAMS {
        return Err(WireError::TooLong {
            what: "parameter list",
            length: count,
            max: MAX_PARAMS,
        });
    }
    let mut params = Vec::with_capacity(count);
    for _ in 0..count {
        params.push(ParamLayout {
            size: r.u32("parameter size")?,
            align: r.u32("parameter alignment")?,
        });
    }
    Ok(Reply::Function { function, params })
}

#[cfg(test)]
mod tests {
    use super::super::noise;
    use super::*;

    fn every_reply() -> Vec<Reply> {
        vec![
            Reply::Done,
            Reply::Int(-3),
            Reply::Value(u64::MAX),
            Reply::Pair(1, 2),
            Reply::Float(1.5),
            Reply::Text("NVIDIA H100 80GB HBM3".into()),
            Reply::Function {
                function: 0x140,
                params: vec![
                    ParamLayout { size: 8, align: 8 },
                    ParamLayout { size: 4, align: 4 },
                ],
            },
            Reply::Region {
                region: 0x110,
                bytes: 4096,
            },
            Reply::Hello {
                staging_bytes: 1 << 24,
            },
            Reply::failed(2, "the grader caps GPU memory"),
        ]
    }

    #[test]
    fn every_reply_comes_back_as_it_went() {
        for reply in every_reply() {
            let body = reply.encode();
            assert_eq!(Reply::decode(&body), Ok(reply.clone()), "{reply:?}");
            for cut in 0..body.len() {
                assert!(Reply::decode(&body[..cut]).is_err(), "{reply:?} at {cut}");
            }
        }
    }

    #[test]
    fn a_failure_is_never_success_and_its_reason_is_bounded() {
        let zero = Reply::Failed {
            code: 0,
            reason: String::new(),
        }
        .encode();
        assert!(Reply::decode(&zero).is_err());
        let Reply::Failed { reason, .. } = Reply::failed(1, "é".repeat(MAX_TEXT_BYTES)) else {
            panic!("a failure");
        };
        assert!(reason.len() <= MAX_TEXT_BYTES && reason.chars().all(|c| c == 'é'));
    }

    #[test]
    fn a_huge_parameter_count_is_refused_before_anything_is_allocated() {
        let mut body = Reply::Function {
            function: 1,
            params: vec![],
        }
        .encode();
        body[9..13].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            Reply::decode(&body),
            Err(WireError::TooLong { .. })
        ));
    }

    #[test]
    fn random_bytes_never_panic_the_decoder() {
        for seed in 0..20_000u64 {
            let _ = Reply::decode(&noise(seed, (seed % 53) as usize));
        }
    }
}
