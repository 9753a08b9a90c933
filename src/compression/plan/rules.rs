//! The decision's rules, one function each, numbered as in [`decide`](super::decide).

use http::header::{CONTENT_ENCODING, CONTENT_RANGE, CONTENT_TYPE, HeaderMap};
use http::{Response, StatusCode};
use http_body::Body;

use super::{Action, Governed, RequestFacts};
use crate::CompressionLevel;
use crate::ContentCoding;
use crate::compression::body::MAX_INPUT_PER_POLL;
use crate::compression::governor::ResponseKind;
use crate::compression::settings::{CompressionSettings, ToCompress};
use crate::dictionary::Dictionary;
use crate::headers::{has_no_transform, is_compressed_content};
use crate::negotiate::{Negotiated, Offered, choose};
use crate::predicate::Predicate;
use crate::telemetry::SkipReason;

/// Rule 1: a response that is encoded or partial already, has no content or forbids
/// transformation is never touched, whatever the predicate says: why, if so.
pub(super) fn never_encoded<B>(res: &Response<B>) -> Option<SkipReason> {
    let status = res.status();
    let headers = res.headers();
    Some(if headers.contains_key(CONTENT_ENCODING) {
        SkipReason::AlreadyEncoded
    } else if headers.contains_key(CONTENT_RANGE) || status == StatusCode::PARTIAL_CONTENT {
        SkipReason::Partial
    } else if status.is_informational() || status == StatusCode::NO_CONTENT {
        SkipReason::NoBody
    } else if has_no_transform(headers) {
        SkipReason::NoTransform
    } else {
        return None;
    })
}

/// Rule 2: why the predicate said no, as far as the response tells: its content type is
/// one that is compressed already, or the predicate had its own reason.
pub(super) fn refused(headers: &HeaderMap) -> SkipReason {
    match is_compressed_content(headers) {
        true => SkipReason::ContentType,
        false => SkipReason::Predicate,
    }
}

/// Rule 4: the coding negotiation chose (or one whose streams can release their state,
/// instead of one that cannot), or what to do when it chose none.
pub(super) fn negotiated_coding<B>(
    request: &RequestFacts,
    res: &Response<B>,
    size: Option<u64>,
    settings: &CompressionSettings,
) -> Result<ContentCoding, Action> {
    let coding = match request.choice.negotiated {
        Negotiated::Encode(coding) => coding,
        Negotiated::Identity => return Err(Action::VaryOnly(SkipReason::Identity)),
        Negotiated::NotAcceptable if res.status().is_success() => {
            return Err(Action::NotAcceptable);
        }
        Negotiated::NotAcceptable => return Err(Action::VaryOnly(SkipReason::NotAcceptable)),
    };
    if coding.releases_state() || !prefers_releasable(res.headers(), size, settings) {
        return Ok(coding);
    }
    Ok(releasable_alternative(request, settings.offered, coding).unwrap_or(coding))
}

/// The coding the client would get without `chosen` (one whose streams cannot give their
/// state back between events or slices), if it accepts another: negotiated again, once,
/// only for the responses that would take it.
fn releasable_alternative(
    request: &RequestFacts,
    offered: Offered,
    chosen: ContentCoding,
) -> Option<ContentCoding> {
    let mut others = offered;
    others.set(chosen, false);
    match choose(&request.accept, others).negotiated {
        Negotiated::Encode(other) => Some(other),
        _ => None,
    }
}

/// Whether a response whose coding cannot release its state (br) goes with another coding
/// the client accepts: an event stream always (a br stream gives its encoder back at a pause
/// too, but each event after a long pause primes a fresh one with up to 32 KiB, dearer than
/// deflate's), and a streamed body (unknown size, or known and over one poll's slice) while
/// every stream turn is taken (it would wait for one before sending a byte). A body known in
/// full is compressed in one call and takes no turn.
fn prefers_releasable(
    headers: &HeaderMap,
    size: Option<u64>,
    settings: &CompressionSettings,
) -> bool {
    let event_stream = headers.get(CONTENT_TYPE).is_some_and(|v| {
        v.as_bytes()
            .get(..17)
            .is_some_and(|t| t.eq_ignore_ascii_case(b"text/event-stream"))
    });
    let streamed = size.is_none_or(|size| size > MAX_INPUT_PER_POLL as u64);
    let busy = streamed && settings.pool.br_streams_full();
    event_stream || busy
}

/// Rule 5: the smallest body worth encoding, 0 when there is no floor.
pub(super) fn size_floor<P: Predicate>(
    request: &RequestFacts,
    settings: &CompressionSettings,
    predicate: &P,
) -> u64 {
    // A client that refuses identity gets the coding it accepts even for a tiny body:
    // identity would be unacceptable to it (RFC 9110 section 12.5.3). A custom predicate
    // decides alone, as in tower-http: the floor is only `DefaultPredicate`'s, for bodies
    // of known size and for those read ahead alike.
    if request.choice.identity_refused || !predicate.applies_min_size() {
        0
    } else {
        settings.min_size
    }
}

/// Rule 6: the level for `coding`, the layer's (or, where that is the default, the one the
/// dictionary was chosen for) unless its level chooser says otherwise; `None` when the
/// chooser says send it unencoded and the client accepts identity.
pub(super) fn level_for<B: Body>(
    request: &RequestFacts,
    settings: &CompressionSettings,
    res: &Response<B>,
    (coding, dictionary): (ContentCoding, Option<&Dictionary>),
    size: Option<u64>,
) -> Option<CompressionLevel> {
    let level = match settings.levels.of(coding) {
        CompressionLevel::Default => dictionary
            .and_then(|d| d.level(coding))
            .map_or(CompressionLevel::Default, CompressionLevel::Precise),
        level => level,
    };
    let Some(chooser) = &settings.level_chooser else {
        return Some(level);
    };
    let parts = ToCompress {
        coding,
        level,
        status: res.status(),
        headers: res.headers(),
        size,
        path: request.path.as_ref().map_or("/", |p| p.path()),
    };
    match (chooser.0)(&parts) {
        None if request.choice.identity_refused => Some(level),
        chosen => chosen,
    }
}

/// Rule 7: under a governor, the level it steps to (with the response's kind and the step,
/// for its account), or `None` when it sheds this kind of response and the client accepts
/// identity.
pub(super) fn governed(
    request: &RequestFacts,
    settings: &CompressionSettings,
    coding: ContentCoding,
    level: CompressionLevel,
    kind: impl FnOnce() -> ResponseKind,
) -> Option<(CompressionLevel, Option<Governed>)> {
    let Some(governor) = &settings.governor else {
        return Some((level, None));
    };
    let kind = kind();
    match governor.level(coding, level, kind) {
        Some((level, step)) => Some((level, Some(Governed { kind, step }))),
        None if request.choice.identity_refused => Some((level, None)),
        None => None,
    }
}
