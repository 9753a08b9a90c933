//! What to do with one response, decided from the request and the response's head before
//! its body is touched. [`decide`] is pure as far as the layer's telling goes: it counts and
//! tells nothing, and returns what it decided, the dictionary's outcome included, for the
//! executor to carry out and report.

mod dictionary;
mod rules;

use http::uri::PathAndQuery;
use http::{Response, StatusCode};
use http_body::Body;

use super::body::MAX_INPUT_PER_POLL;
use super::governor::ResponseKind;
use super::settings::CompressionSettings;
use crate::CompressionLevel;
use crate::ContentCoding;
use crate::cache::{RequestScope, Validator};
use crate::dictionary::Dictionary;
use crate::headers::body_size;
use crate::negotiate::{AcceptEncoding, Choice};
use crate::predicate::Predicate;
use crate::telemetry::{DictionaryOutcome, SkipReason};

pub(crate) use dictionary::DictionaryRequest;
use rules::{governed, level_for, negotiated_coding, never_encoded, refused, size_floor};

/// What the decision needs to know about the request, taken when it is made.
#[derive(Clone, Debug)]
pub(crate) struct RequestFacts {
    /// The request's `Accept-Encoding`, read once.
    pub(crate) accept: AcceptEncoding,
    /// What negotiation chose from it.
    pub(crate) choice: Choice,
    pub(crate) head: bool,
    /// With dictionaries turned on: what the request says about them.
    pub(crate) dictionary: Option<DictionaryRequest>,
    /// The request's path, kept only for a level chooser.
    pub(crate) path: Option<PathAndQuery>,
    /// Where the request was sent, kept only for a cache keyed by `ETag` (boxed: rare).
    pub(crate) scope: Option<Box<RequestScope>>,
}

/// What [`decide`] decided for one response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Plan {
    pub(super) action: Action,
    /// The request named a dictionary and its response gets none: why.
    pub(super) dictionary_miss: Option<DictionaryOutcome>,
}

impl From<Action> for Plan {
    fn from(action: Action) -> Self {
        Plan {
            action,
            dictionary_miss: None,
        }
    }
}

/// What to do with one response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Action {
    /// Send as it is, untouched: a hard rule or the predicate said no.
    Skip(SkipReason),
    /// Send unencoded, with `Vary: accept-encoding`: the representation depends on
    /// Accept-Encoding, but this request gets identity.
    VaryOnly(SkipReason),
    /// 406: the client accepts neither an offered coding nor identity.
    NotAcceptable,
    /// Encode with `target`, a plain coding or one against a dictionary (RFC 9842).
    Encode { target: Target, start: Start },
}

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
    /// With a cache that keeps streamed responses by their validators: this one's (boxed:
    /// rare, and it would triple the plan's size).
    pub(super) validator: Option<Box<Validator>>,
}

/// A governed response's kind and the governor's step when it was decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Governed {
    pub(super) kind: ResponseKind,
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
    /// Read ahead what is ready (up to `limit` bytes), then compress in one shot, serve from
    /// the cache, or stream; a body found complete and smaller than `floor` stays unencoded.
    ReadAhead { floor: u64, limit: usize },
    /// Stream from the start: the body is known to be `size` bytes, more than one poll's
    /// slice.
    Stream { size: u64 },
}

/// What the response's head says of its body: its size if known, and the size floor.
#[derive(Clone, Copy, Debug)]
struct BodySize {
    size: Option<u64>,
    floor: u64,
}

impl BodySize {
    fn small(self) -> bool {
        self.size.is_some_and(|size| size < self.floor)
    }
}

/// The rules, in order. Hard rules come first and hold whatever the predicate says:
///
/// 1. A response that already has `Content-Encoding` or `Content-Range`, a 1xx, 204 or 206,
///    or one marked `Cache-Control: no-transform` (RFC 9111 section 5.2.2.6) is not
///    touched.
/// 2. The predicate ([`DefaultPredicate`](crate::predicate::DefaultPredicate) unless
///    `compress_when` says otherwise) may refuse it: not touched either.
/// 3. Otherwise the representation varies with Accept-Encoding: `Vary` is added. HEAD and
///    304 responses stop here (no body to encode).
/// 4. Negotiation: identity is sent as it is; nothing acceptable is a 406 for successful
///    responses (others keep their status and go unencoded).
/// 5. Size: under [`DefaultPredicate`](crate::predicate::DefaultPredicate) (or a predicate
///    that [applies the floor](crate::predicate::Predicate::applies_min_size)), a body known
///    to be smaller than `min_size` is sent as it is (unless the client refused identity); a
///    body of unknown size that turns out complete and smaller when read ahead, too. Any
///    other predicate decides alone, whatever the size.
/// 6. Level: the layer's for the coding, or what its level chooser says (which may send it
///    unencoded, unless the client refused identity).
/// 7. Load: a governor may step the level down, or send the response unencoded (again,
///    unless the client refused identity).
pub(super) fn decide<B: Body, P: Predicate>(
    request: &RequestFacts,
    settings: &CompressionSettings,
    predicate: &P,
    res: &Response<B>,
) -> Plan {
    let headers = res.headers();
    if let Some(reason) = never_encoded(res) {
        return Action::Skip(reason).into();
    }
    if !predicate.should_compress(res) {
        return Action::Skip(refused(headers)).into();
    }
    if request.head || res.status() == StatusCode::NOT_MODIFIED {
        return Action::VaryOnly(SkipReason::NoBody).into();
    }
    let sized = BodySize {
        size: body_size(headers, res.body()),
        floor: size_floor(request, settings, predicate),
    };
    // A dictionary the client holds beats every other coding it offers.
    let asked = request.dictionary.as_ref().filter(|_| !sized.small());
    let (chosen, dictionary_miss) = match asked.map(|d| dictionary::choose(d, headers, settings)) {
        Some(Err(why)) => (None, Some(why)),
        Some(Ok(chosen)) => (chosen, None),
        None => (None, None),
    };
    let action = encoding(request, settings, res, sized, chosen);
    Plan {
        action,
        dictionary_miss,
    }
}

/// Rules 4 to 7 for a response that may be encoded: the target and how its body starts, or
/// why it goes unencoded.
fn encoding<B: Body>(
    request: &RequestFacts,
    settings: &CompressionSettings,
    res: &Response<B>,
    sized: BodySize,
    chosen: Option<(ContentCoding, Dictionary)>,
) -> Action {
    let BodySize { size, floor } = sized;
    let negotiated = negotiated_coding(request, res, size, settings);
    let (coding, dictionary, fallback) = match (chosen, negotiated) {
        // The negotiated coding is the fallback when the dictionary encoder fails.
        (Some((coding, dictionary)), negotiated) => (coding, Some(dictionary), negotiated.ok()),
        (None, Ok(_)) if sized.small() => return Action::VaryOnly(SkipReason::Size),
        (None, Ok(coding)) => (coding, None, None),
        (None, Err(action)) => return action,
    };
    let Some(level) = level_for(request, settings, res, (coding, dictionary.as_ref()), size) else {
        return Action::VaryOnly(SkipReason::Level);
    };
    let kind = || ResponseKind::of(res.headers(), size);
    let Some((level, governed)) = governed(request, settings, coding, level, kind) else {
        return Action::VaryOnly(SkipReason::Level);
    };
    let fallback = Fallback {
        coding: fallback,
        identity: !request.choice.identity_refused,
    };
    // A body known in full is read ahead up to the cache's bound when a cache may serve
    // it, anything else up to one poll's slice; one found complete is cached by its bytes,
    // and only a streamed one by its validator.
    let validator = validator_for(request, settings, coding, res);
    let limit = match size {
        Some(size) => cached_read_ahead(settings, coding, size),
        None => MAX_INPUT_PER_POLL,
    };
    let start = match size.filter(|&size| size > limit as u64) {
        Some(size) => Start::Stream { size },
        None => Start::ReadAhead { floor, limit },
    };
    let target = Target {
        coding,
        level,
        dictionary,
        fallback,
        governed,
        validator,
    };
    Action::Encode { target, start }
}

/// The response's validator, when the layer's cache keys streamed responses by `ETag`
/// for `coding` and a shared cache may keep this one.
fn validator_for<B>(
    request: &RequestFacts,
    settings: &CompressionSettings,
    coding: ContentCoding,
    res: &Response<B>,
) -> Option<Box<Validator>> {
    let scope = request.scope.as_deref()?;
    let cache = settings.cache_for(coding)?;
    cache
        .validator(scope, res.status(), res.headers())
        .map(Box::new)
}

/// How far to read ahead a body of `size` bytes encoded with `coding`: the cache's bound
/// when a cache may serve it, one poll's slice otherwise.
fn cached_read_ahead(settings: &CompressionSettings, coding: ContentCoding, size: u64) -> usize {
    match settings.cache_for(coding) {
        Some(cache) if cache.wants(size) => cache.max_body(),
        _ => MAX_INPUT_PER_POLL,
    }
}
