//! Carrying out a [`Plan`]: the one place that writes a response's headers and reports it.
//! A response to encode is read ahead while its frames are ready; a body known in full is
//! compressed in one shot before the headers are fixed (so a failing encoder can fall
//! back), and any other streams.

mod cached;
mod read_ahead;

use std::pin::Pin;
use std::task::Context;

use bytes::{Bytes, BytesMut};
use http::header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderMap, HeaderValue, VARY};
use http::{Response, StatusCode};
use http_body::Body;

use super::body::CompressionBody;
use super::governor::Timed;
use super::plan::{Action, Fallback, Governed, Plan, Start, Target};
use super::report::{self, account};
use super::settings::CompressionSettings;
use crate::ContentCoding;
use crate::buf::Chunks;
use crate::cache::Recorder;
use crate::codec::{Encoder, OneShot};
use crate::dictionary::Dictionary;
use crate::headers::{add_varies, add_vary, set_encoded_headers};
use crate::telemetry::{DictionaryOutcome, ResponseTally, SkipReason};
use crate::{BoxError, CompressionLevel};
use read_ahead::{End, ReadAhead, read_ahead};

/// Carries out `plan` on `res`: counts the dictionary's outcome if the request named one
/// and gets none, then encodes the response or sends it as the plan says.
pub(super) fn execute<B: Body<Error: Into<BoxError>>>(
    plan: Plan,
    res: Response<B>,
    settings: &CompressionSettings,
    cx: &mut Context<'_>,
) -> Response<CompressionBody<B>> {
    if let Some(outcome) = plan.dictionary_miss {
        report::dictionary(&settings.stats, outcome);
    }
    let (vary, reason, mut res) = match plan.action {
        Action::Encode { target, start } => return encode(target, start, res, settings, cx),
        Action::Skip(reason) => (false, reason, res.map(CompressionBody::identity)),
        Action::VaryOnly(reason) => (true, reason, res.map(CompressionBody::identity)),
        Action::NotAcceptable => (true, SkipReason::NotAcceptable, not_acceptable(res)),
    };
    report::skipped(&settings.stats, reason);
    if vary {
        add_varies(res.headers_mut(), settings.serves_dictionaries());
    }
    res
}

/// 406: the client accepts neither a coding we offer nor identity (RFC 9110 section 12.5.3).
fn not_acceptable<B>(res: Response<B>) -> Response<CompressionBody<B>> {
    let (mut parts, _) = res.into_parts();
    parts.status = StatusCode::NOT_ACCEPTABLE;
    let vary = std::mem::take(&mut parts.headers)
        .get_all(VARY)
        .iter()
        .cloned()
        .collect::<Vec<_>>();
    for value in vary {
        parts.headers.append(VARY, value);
    }
    add_vary(&mut parts.headers);
    parts.headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    let message = Bytes::from_static(b"no acceptable content-coding: see Accept-Encoding\n");
    Response::from_parts(parts, CompressionBody::ready(message, None, None))
}

/// The response encoded with `target` (or its fallback), or sent as it is when reading
/// ahead finds it complete and under the floor, or failed before anything was compressed.
fn encode<B: Body<Error: Into<BoxError>>>(
    target: Target,
    start: Start,
    res: Response<B>,
    settings: &CompressionSettings,
    cx: &mut Context<'_>,
) -> Response<CompressionBody<B>> {
    let stats = &settings.stats;
    let (mut parts, body) = res.into_parts();
    add_varies(&mut parts.headers, settings.serves_dictionaries());
    let mut body = Box::pin(body);
    let (coding, body) = match start {
        Start::Stream { size } => {
            let body = match cached::by_validator(settings, &target) {
                // The entry stands for the whole body: the body is not read.
                cached::Validated::Hit(data) => CompressionBody::ready(data, None, None),
                cached::Validated::Stream(record) => {
                    let chunks = Chunks::default();
                    streaming(settings, &target, Some(size), body, chunks, record)
                }
            };
            (target.coding, body)
        }
        Start::ReadAhead { floor, limit } => {
            let ahead = read_ahead(body.as_mut(), cx, limit);
            match encode_read_ahead(settings, &target, floor, body, ahead) {
                Ahead::Encoded { coding, body } => (coding, body),
                Ahead::Unencoded { body, reason } => {
                    if target.dictionary.is_some() {
                        report::dictionary(stats, DictionaryOutcome::NotOffered);
                    }
                    report::skipped(stats, reason);
                    // A body that failed does not have the length it announced.
                    if reason == SkipReason::Error {
                        parts.headers.remove(CONTENT_LENGTH);
                    }
                    return Response::from_parts(parts, body);
                }
            }
        }
    };
    encoded_response(settings, &target, coding, parts, body)
}

/// The response encoded with `coding` (the target's, or its fallback), told.
fn encoded_response<B>(
    settings: &CompressionSettings,
    target: &Target,
    coding: ContentCoding,
    mut parts: http::response::Parts,
    body: CompressionBody<B>,
) -> Response<CompressionBody<B>> {
    if target.dictionary.is_some() {
        let outcome = match coding == target.coding {
            true => DictionaryOutcome::Hit,
            false => DictionaryOutcome::NotOffered,
        };
        report::dictionary(&settings.stats, outcome);
    }
    report::compressed(&settings.stats, coding);
    set_encoded_headers(&mut parts.headers, coding.as_str());
    Response::from_parts(parts, body)
}

/// `body` compressed as it streams, starting with `chunks`, and recorded for the cache with
/// `record`; an encoder that cannot be built (a dictionary coding not compiled in) becomes
/// the body's error.
fn streaming<B: Body<Error: Into<BoxError>>>(
    settings: &CompressionSettings,
    target: &Target,
    size: Option<u64>,
    body: Pin<Box<B>>,
    chunks: Chunks,
    record: Option<Recorder>,
) -> CompressionBody<B> {
    match encoder(settings, target, size) {
        Ok(encoder) => {
            let level = target.level.native(target.coding);
            let tally = ResponseTally::new(target.coding, level, report::timed());
            let stats = Some((settings.stats.clone(), tally));
            let timed = governor_account(settings, target);
            CompressionBody::encoding(body, encoder, chunks, stats, timed, &settings.pool)
                .recorded(record)
        }
        Err(error) => CompressionBody::ready(Bytes::new(), None, Some(error)),
    }
}

/// A body read ahead: encoded, or to send as it is.
enum Ahead<B> {
    Encoded {
        coding: ContentCoding,
        body: CompressionBody<B>,
    },
    /// Found complete and under the floor (`Size`), or its encoders failed and identity is
    /// acceptable, or the body failed before anything was compressed (both `Error`; in the
    /// second, the error follows the data and the body is shorter than announced).
    Unencoded {
        body: CompressionBody<B>,
        reason: SkipReason,
    },
}

/// The body for what [`read_ahead`] found: compressed in one shot (or served from the
/// cache by its bytes) when complete, streamed when more is coming (or served by its
/// validator), or unencoded.
fn encode_read_ahead<B>(
    settings: &CompressionSettings,
    target: &Target,
    floor: u64,
    body: Pin<Box<B>>,
    ahead: ReadAhead,
) -> Ahead<B>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let ReadAhead { chunks, end } = ahead;
    match end {
        End::Failed(error) => Ahead::Unencoded {
            body: CompressionBody::ready(chunks.concat(), None, Some(error)),
            reason: SkipReason::Error,
        },
        End::Complete(trailers) if (chunks.len() as u64) < floor => Ahead::Unencoded {
            body: CompressionBody::ready(chunks.concat(), trailers, None),
            reason: SkipReason::Size,
        },
        // Known in full: its own bytes are its key, never a validator.
        End::Complete(trailers) => match cached::serve(settings, target, chunks, trailers) {
            cached::Served::Hit { data, trailers } => encoded(target.coding, data, trailers),
            // Complete: its size is known, as the encoder's hint.
            cached::Served::Big { chunks } => Ahead::Encoded {
                coding: target.coding,
                body: {
                    let size = Some(chunks.len() as u64);
                    streaming(settings, target, size, body, chunks, None)
                },
            },
            cached::Served::Compress {
                input,
                trailers,
                fill,
            } => whole(settings, target, input, trailers, fill),
        },
        // More is coming (or the body went pending first): served by its validator, or
        // streamed starting with what was read ahead.
        End::Open => match cached::by_validator(settings, target) {
            cached::Validated::Hit(data) => encoded(target.coding, data, None),
            cached::Validated::Stream(record) => {
                // A body of known size (a file) pauses for its reads: the encoder may rely
                // on short pauses from the first.
                let rest = body.size_hint().exact();
                let size = rest.map(|rest| rest + chunks.len() as u64);
                Ahead::Encoded {
                    coding: target.coding,
                    body: streaming(settings, target, size, body, chunks, record),
                }
            }
        },
    }
}

/// A body known in full, compressed in one go before its headers are fixed: with the
/// target, else its fallback. The exact size hint makes hyper send `Content-Length`
/// instead of chunked encoding. With `fill`, the cache files what the target's coding made.
fn whole<B>(
    settings: &CompressionSettings,
    target: &Target,
    input: Bytes,
    trailers: Option<HeaderMap>,
    fill: Option<Recorder>,
) -> Ahead<B> {
    let measure = report::timed();
    let mut governed = governor_account(settings, target);
    let outcome = fall_back(target.coding, &target.fallback, |coding| {
        if coding == target.coding {
            let dictionary = target.dictionary.as_ref();
            one_shot(
                settings,
                coding,
                target.level,
                dictionary,
                &input,
                measure,
                &mut governed,
            )
        } else {
            let level = settings.levels.of(coding);
            one_shot(settings, coding, level, None, &input, measure, &mut None)
        }
    });
    match outcome {
        Whole::Encoded(coding, data) => {
            if let (Some(fill), true) = (fill, coding == target.coding) {
                fill.whole(&data);
            }
            encoded(coding, data, trailers)
        }
        Whole::Identity => Ahead::Unencoded {
            body: CompressionBody::ready(input, trailers, None),
            reason: SkipReason::Error,
        },
        Whole::Failed(error) => Ahead::Encoded {
            coding: target.coding,
            body: CompressionBody::ready(Bytes::new(), None, Some(error)),
        },
    }
}

/// What becomes of a body known in full.
#[derive(Debug)]
enum Whole {
    /// Encoded in this coding.
    Encoded(ContentCoding, Bytes),
    /// Every acceptable coding failed; the client accepts identity.
    Identity,
    /// Every acceptable coding failed, and identity is not acceptable either.
    Failed(BoxError),
}

/// `encode` in `coding`, else in the fallback's coding, else identity if the client takes
/// it: RFC 9110 section 12.5.3 leaves the server any coding the client accepts.
fn fall_back(
    coding: ContentCoding,
    fallback: &Fallback,
    mut encode: impl FnMut(ContentCoding) -> Result<Bytes, BoxError>,
) -> Whole {
    let mut failed = (
        coding,
        match encode(coding) {
            Ok(data) => return Whole::Encoded(coding, data),
            Err(error) => error,
        },
    );
    if let Some(next) = fallback.coding {
        report::encoder_failed(failed.0, &failed.1, next.as_str());
        match encode(next) {
            Ok(data) => return Whole::Encoded(next, data),
            Err(error) => failed = (next, error),
        }
    }
    let (coding, error) = failed;
    let identity = fallback.identity;
    report::encoder_failed(coding, &error, if identity { "identity" } else { "none" });
    match identity {
        true => Whole::Identity,
        false => Whole::Failed(error),
    }
}

fn encoded<B>(coding: ContentCoding, data: Bytes, trailers: Option<HeaderMap>) -> Ahead<B> {
    Ahead::Encoded {
        coding,
        body: CompressionBody::ready(data, trailers, None),
    }
}

fn encoder(
    settings: &CompressionSettings,
    target: &Target,
    size: Option<u64>,
) -> Result<Encoder, BoxError> {
    let (coding, pool) = (target.coding, &settings.pool);
    let level = target.level;
    let encoder = Encoder::for_coding(
        coding,
        level,
        target.dictionary.as_ref().map(Dictionary::codec),
        pool,
    )?
    .with_padding(padding(settings, coding));
    Ok(match size {
        Some(size) => encoder.with_size_hint(size),
        None => encoder,
    })
}

/// Bytes of BREACH jitter for this response: random per response, none when the jitter is
/// off.
fn padding(settings: &CompressionSettings, coding: ContentCoding) -> usize {
    match settings.jittered(coding) {
        true => jitter_len(settings.jitter),
        false => 0,
    }
}

/// `input` compressed as one `coding` stream (against `dictionary` for `dcz`/`dcb`), and
/// told (with the time it took if `timed`).
fn one_shot(
    settings: &CompressionSettings,
    coding: ContentCoding,
    level: CompressionLevel,
    dictionary: Option<&Dictionary>,
    input: &[u8],
    measure: bool,
    governed: &mut Option<Timed>,
) -> Result<Bytes, BoxError> {
    let mut out = BytesMut::new();
    let mut tally = ResponseTally::new(coding, level.native(coding), measure);
    let one_shot = OneShot::new(coding)
        .level(level)
        .pool(&settings.pool)
        .padding(padding(settings, coding))
        .against(dictionary.map(Dictionary::codec));
    account(&mut tally, governed.as_mut(), || {
        one_shot.encode(input, &mut out)
    })?;
    (tally.bytes_in, tally.bytes_out) = (input.len() as u64, out.len() as u64);
    if let Some(timed) = governed {
        timed.end(tally.bytes_in, tally.bytes_out);
    }
    report::finished(&settings.stats, &tally, false, true);
    Ok(out.freeze())
}

/// The governor's account for one response, when a governor is on.
fn governor_account(settings: &CompressionSettings, target: &Target) -> Option<Timed> {
    let governor = settings.governor.clone()?;
    let Governed { kind, step } = target.governed?;
    Some(Timed::new(governor, kind, target.coding, step))
}

/// A random padding length in `1..=max`, for the BREACH jitter.
fn jitter_len(max: u16) -> usize {
    use std::hash::BuildHasher;
    // SipHash keyed randomly per process and per call: unpredictable to a remote attacker.
    let random = std::collections::hash_map::RandomState::new().hash_one(0u8);
    1 + (random % u64::from(max)) as usize
}

#[cfg(test)]
mod tests;
