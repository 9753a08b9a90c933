//! Encoding a response the decision chose to encode: read ahead what is ready, compress a
//! body known in full in one shot before the headers are fixed (so a failing encoder can
//! fall back), or stream.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes, BytesMut};
use http::Response;
use http::header::{ACCEPT_RANGES, CONTENT_ENCODING, CONTENT_LENGTH, ETAG, HeaderMap, HeaderValue};
use http_body::Body;

use super::body::{CompressionBody, MAX_INPUT_PER_POLL};
use super::governor::{Kind, Timed};
use super::report::{self, Tally, account};
use super::service::Settings;
use super::stats::{DictionaryOutcome, SkipReason};
use crate::buf::Chunks;
use crate::codec::{ContentCoding, Encoder, OneShot};
use crate::dictionary::Dictionary;
use crate::headers::{add_vary, add_vary_token};
use crate::{BoxError, CompressionLevel};

/// What a compressed body is encoded with: a coding, and for `dcz` / `dcb` the dictionary
/// the client named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Target {
    pub(super) coding: ContentCoding,
    pub(super) level: CompressionLevel,
    pub(super) dictionary: Option<Dictionary>,
    /// What a body known in full is sent as when its encoder fails.
    pub(super) fallback: Fallback,
    /// Under a governor: what it learns this response's cost under.
    pub(super) governed: Option<Governed>,
}

/// A governed response's kind and the governor's step when it was decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Governed {
    pub(super) kind: Kind,
    pub(super) step: u8,
}

/// Where a body known in full goes when `Target`'s encoder fails on it: the headers are not
/// fixed yet, so the response can still be right.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Fallback {
    /// Another coding the client accepts: for a dictionary target, the plain coding
    /// negotiation chose.
    pub(super) coding: Option<ContentCoding>,
    /// Whether the client accepts identity.
    pub(super) identity: bool,
}

/// How an encoded body starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Start {
    /// Read ahead what is ready, then compress in one shot or stream; a body found complete
    /// and smaller than `floor` stays unencoded.
    ReadAhead { floor: u64 },
    /// Stream from the start: the body is known to be `size` bytes, more than one poll's
    /// slice.
    Stream { size: u64 },
}

/// The response encoded with `target` (or its fallback), or sent as it is when reading
/// ahead finds it complete and under the floor, or failed before anything was compressed.
pub(super) fn encode<B: Body<Error: Into<BoxError>>>(
    target: Target,
    start: Start,
    res: Response<B>,
    settings: &Settings,
    cx: &mut Context<'_>,
) -> Response<CompressionBody<B>> {
    let stats = &settings.stats;
    let (mut parts, body) = res.into_parts();
    add_varies(settings, &mut parts.headers);
    let mut body = Box::pin(body);
    let (coding, body) = match start {
        Start::Stream { size } => {
            let body = streaming(settings, &target, Some(size), body, Chunks::default());
            (target.coding, body)
        }
        Start::ReadAhead { floor } => {
            let ahead = read_ahead(body.as_mut(), cx);
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
    if target.dictionary.is_some() {
        let outcome = match coding == target.coding {
            true => DictionaryOutcome::Hit,
            false => DictionaryOutcome::NotOffered,
        };
        report::dictionary(stats, outcome);
    }
    report::compressed(stats, coding);
    set_encoded_headers(&mut parts.headers, coding.as_str());
    Response::from_parts(parts, body)
}

/// `body` compressed as it streams, starting with `chunks`; an encoder that cannot be built
/// (a dictionary coding not compiled in) becomes the body's error.
fn streaming<B: Body<Error: Into<BoxError>>>(
    settings: &Settings,
    target: &Target,
    size: Option<u64>,
    body: Pin<Box<B>>,
    chunks: Chunks,
) -> CompressionBody<B> {
    match encoder(settings, target, size) {
        Ok(encoder) => {
            let level = target.level.resolve(target.coding).get();
            let tally = Tally::new(target.coding, level, report::timed());
            let stats = Some((settings.stats.clone(), tally));
            let timed = governor_account(settings, target);
            CompressionBody::encoding(body, encoder, chunks, stats, timed, &settings.pool)
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

/// The body for what [`read_ahead`] found: compressed in one shot when complete, streamed
/// when more is coming, or unencoded.
fn encode_read_ahead<B>(
    settings: &Settings,
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
        End::Complete(trailers) => whole(settings, target, chunks, trailers),
        // More is coming (or the body went pending first): stream, starting with what was
        // read ahead.
        End::Open => Ahead::Encoded {
            coding: target.coding,
            body: streaming(settings, target, None, body, chunks),
        },
    }
}

/// A body known in full, compressed in one go before its headers are fixed: with the
/// target, else its fallback. The exact size hint makes hyper send `Content-Length`
/// instead of chunked encoding.
fn whole<B>(
    settings: &Settings,
    target: &Target,
    chunks: Chunks,
    trailers: Option<HeaderMap>,
) -> Ahead<B> {
    // The one-shot codecs want one slice: a body of several ready frames is joined (at most
    // one poll's slice, 64 KiB).
    let input = chunks.concat();
    let dictionary = target.dictionary.as_ref();
    let (mut coding, measure) = (target.coding, report::timed());
    let mut governed = governor_account(settings, target);
    let level = target.level;
    let mut error = match one_shot(
        settings,
        coding,
        level,
        dictionary,
        &input,
        measure,
        &mut governed,
    ) {
        Ok(data) => return encoded(coding, data, trailers),
        Err(error) => error,
    };
    if let Some(fallback) = target.fallback.coding {
        report::encoder_failed(coding, &error, fallback.as_str());
        let level = settings.levels.of(fallback);
        match one_shot(settings, fallback, level, None, &input, measure, &mut None) {
            Ok(data) => return encoded(fallback, data, trailers),
            Err(again) => (coding, error) = (fallback, again),
        }
    }
    let identity = target.fallback.identity;
    report::encoder_failed(coding, &error, if identity { "identity" } else { "none" });
    match identity {
        true => Ahead::Unencoded {
            body: CompressionBody::ready(input, trailers, None),
            reason: SkipReason::Error,
        },
        false => Ahead::Encoded {
            coding: target.coding,
            body: CompressionBody::ready(Bytes::new(), None, Some(error)),
        },
    }
}

fn encoded<B>(coding: ContentCoding, data: Bytes, trailers: Option<HeaderMap>) -> Ahead<B> {
    Ahead::Encoded {
        coding,
        body: CompressionBody::ready(data, trailers, None),
    }
}

/// `Vary: accept-encoding`, and `available-dictionary` when dictionaries are on: the
/// representation depends on both (RFC 9842 section 6.2).
pub(super) fn add_varies(settings: &Settings, headers: &mut HeaderMap) {
    add_vary(headers);
    if settings.dictionaries.is_some() {
        add_vary_token(headers, "available-dictionary");
    }
}

fn encoder(settings: &Settings, target: &Target, size: Option<u64>) -> Result<Encoder, BoxError> {
    let (coding, pool) = (target.coding, &settings.pool);
    let level = target.level;
    let encoder = match &target.dictionary {
        None => Encoder::new(coding, level, pool).with_header_padding(padding(settings, coding)),
        Some(dictionary) => Encoder::against(coding, dictionary, level, pool)?,
    };
    Ok(match size {
        Some(size) => encoder.with_size_hint(size),
        None => encoder,
    })
}

/// Bytes of BREACH jitter for this response's gzip header (the other codings have no room).
fn padding(settings: &Settings, format: ContentCoding) -> usize {
    match (format, settings.jitter) {
        (ContentCoding::Gzip, max) if max > 0 => jitter_len(max),
        _ => 0,
    }
}

/// `input` compressed as one `coding` stream (against `dictionary` for `dcz`/`dcb`), and
/// told (with the time it took if `timed`).
fn one_shot(
    settings: &Settings,
    coding: ContentCoding,
    level: CompressionLevel,
    dictionary: Option<&Dictionary>,
    input: &[u8],
    measure: bool,
    governed: &mut Option<Timed>,
) -> Result<Bytes, BoxError> {
    let mut out = BytesMut::new();
    #[cfg(test)]
    tests::fail_if_told(coding)?;
    let mut tally = Tally::new(coding, level.resolve(coding).get(), measure);
    let one_shot = OneShot::new(coding)
        .level(level)
        .pool(&settings.pool)
        .header_padding(padding(settings, coding))
        .against(dictionary);
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
fn governor_account(settings: &Settings, target: &Target) -> Option<Timed> {
    let governor = settings.governor.clone()?;
    let Governed { kind, step } = target.governed?;
    Some(Timed::new(governor, kind, target.coding, step))
}

/// What [`read_ahead`] found.
struct ReadAhead {
    chunks: Chunks,
    end: End,
}

enum End {
    /// The body may have more: it went pending, or holds more than one poll's slice.
    Open,
    /// The body ended, with these trailers if any.
    Complete(Option<HeaderMap>),
    Failed(BoxError),
}

/// Reads the frames `body` has ready now, until it ends, goes pending, or holds more than
/// one poll's slice ([`MAX_INPUT_PER_POLL`]). A body of exactly that size whose end is
/// ready counts as complete.
fn read_ahead<B>(mut body: Pin<&mut B>, cx: &mut Context<'_>) -> ReadAhead
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let mut chunks = Chunks::default();
    let end = loop {
        if chunks.len() > MAX_INPUT_PER_POLL {
            break End::Open;
        }
        // A body that says it is done has no more frames: no need to poll for its end.
        if chunks.len() > 0 && body.is_end_stream() {
            break End::Complete(None);
        }
        match body.as_mut().poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                Ok(mut data) => chunks.push(data.copy_to_bytes(data.remaining())),
                Err(frame) => {
                    if let Ok(trailers) = frame.into_trailers() {
                        break End::Complete(Some(trailers));
                    }
                }
            },
            Poll::Ready(Some(Err(e))) => break End::Failed(e.into()),
            Poll::Ready(None) => break End::Complete(None),
            Poll::Pending => break End::Open,
        }
    };
    ReadAhead { chunks, end }
}

pub(super) fn set_encoded_headers(headers: &mut HeaderMap, token: &'static str) {
    headers.insert(CONTENT_ENCODING, HeaderValue::from_static(token));
    // The length changes, and byte ranges of the identity body no longer apply.
    headers.remove(CONTENT_LENGTH);
    headers.remove(ACCEPT_RANGES);
    // A strong validator promises byte-identical content; the encoded bytes differ from
    // the identity representation's, so only a weak validator is still true.
    if let Some(etag) = headers.get(ETAG) {
        if !etag.as_bytes().starts_with(b"W/") {
            let mut weak = Vec::with_capacity(etag.len() + 2);
            weak.extend_from_slice(b"W/");
            weak.extend_from_slice(etag.as_bytes());
            if let Ok(weak) = HeaderValue::from_bytes(&weak) {
                headers.insert(ETAG, weak);
            }
        }
    }
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
