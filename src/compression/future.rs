use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use http::header::{CONTENT_ENCODING, CONTENT_RANGE, CONTENT_TYPE, HeaderMap, HeaderValue, VARY};
use http::uri::PathAndQuery;
use http::{Response, StatusCode};
use http_body::Body;
use pin_project_lite::pin_project;

use super::body::{CompressionBody, MAX_INPUT_PER_POLL};
use super::choose_level::ToCompress;
use super::dictionary::{self, DictionaryRequest};
use super::encode::{Fallback, Governed, Start, Target, add_varies, encode};
use super::governor::Kind;
use super::report;
use super::service::Settings;
use super::stats::SkipReason;
use crate::BoxError;
use crate::CompressionLevel;
use crate::codec::ContentCoding;
use crate::dictionary::Dictionary;
use crate::headers::{add_vary, body_size, has_no_transform, is_compressed_content};
use crate::negotiate::{Choice, Negotiated};
use crate::predicate::Predicate;

pin_project! {
    /// The response future of [`Compression`](super::Compression).
    pub struct ResponseFuture<F, P> {
        #[pin]
        inner: F,
        request: Request,
        settings: Arc<Settings>,
        predicate: P,
    }
}

/// What the response decision needs to know about the request.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    pub(crate) choice: Choice,
    pub(crate) head: bool,
    /// With dictionaries turned on: what the request says about them.
    pub(crate) dictionary: Option<DictionaryRequest>,
    /// When br was negotiated: the coding the client accepts besides it, for streams that
    /// should be able to give their state back.
    pub(crate) releasable: Option<ContentCoding>,
    /// The request's path, kept only for a level chooser.
    pub(crate) path: Option<PathAndQuery>,
}

impl<F, P> ResponseFuture<F, P> {
    pub(crate) fn new(inner: F, request: Request, settings: Arc<Settings>, predicate: P) -> Self {
        ResponseFuture {
            inner,
            request,
            settings,
            predicate,
        }
    }
}

impl<F, B, E, P> Future for ResponseFuture<F, P>
where
    F: Future<Output = Result<Response<B>, E>>,
    B: Body,
    B::Error: Into<BoxError>,
    P: Predicate,
{
    type Output = Result<Response<CompressionBody<B>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let response = ready!(this.inner.poll(cx))?;
        let action = decide(this.request, this.settings, this.predicate, &response);
        Poll::Ready(Ok(apply(action, response, this.settings, cx)))
    }
}

/// What to do with one response, decided from its head before its body is touched.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Action {
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
///    that [applies the floor](crate::predicate::Predicate::applies_min_size)), a body known to be smaller than
///    `min_size` is sent as it is (unless the client refused identity); a body of unknown
///    size that turns out complete and smaller when read ahead, too. Any other predicate
///    decides alone, whatever the size.
/// 6. Level: the layer's for the coding, or what its level chooser says (which may send it
///    unencoded, unless the client refused identity).
/// 7. Load: a governor may step the level down, or send the response unencoded (again,
///    unless the client refused identity).
fn decide<B: Body, P: Predicate>(
    request: &Request,
    settings: &Settings,
    predicate: &P,
    res: &Response<B>,
) -> Action {
    let status = res.status();
    let headers = res.headers();
    if let Some(reason) = never_encoded(res) {
        return Action::Skip(reason);
    }
    if !predicate.should_compress(res) {
        return Action::Skip(refused(headers));
    }
    if request.head || status == StatusCode::NOT_MODIFIED {
        return Action::VaryOnly(SkipReason::NoBody);
    }
    let floor = size_floor(request, settings, predicate);
    let size = body_size(headers, res.body());
    let small = size.is_some_and(|size| size < floor);
    let start = match size.filter(|&size| size > MAX_INPUT_PER_POLL as u64) {
        Some(size) => Start::Stream { size },
        None => Start::ReadAhead { floor },
    };
    // A dictionary the client holds beats every other coding it offers.
    let chosen = request
        .dictionary
        .as_ref()
        .filter(|_| !small)
        .and_then(|d| dictionary::choose(d, headers, settings));
    let negotiated = negotiated_coding(request, res, size, settings);
    let identity = !request.choice.identity_refused;
    let (coding, dictionary, fallback) = match (chosen, negotiated) {
        // The negotiated coding is the fallback when the dictionary encoder fails.
        (Some((coding, dictionary)), negotiated) => (coding, Some(dictionary), negotiated.ok()),
        (None, Ok(_)) if small => return Action::VaryOnly(SkipReason::Size),
        (None, Ok(coding)) => (coding, None, None),
        (None, Err(action)) => return action,
    };
    let Some(level) = level_for(request, settings, res, (coding, dictionary.as_ref()), size) else {
        return Action::VaryOnly(SkipReason::Level);
    };
    let kind = || Kind::of(headers, size);
    let Some((level, governed)) = governed(request, settings, coding, level, kind) else {
        return Action::VaryOnly(SkipReason::Level);
    };
    let fallback = Fallback {
        coding: fallback,
        identity,
    };
    let target = Target {
        coding,
        level,
        dictionary,
        fallback,
        governed,
    };
    Action::Encode { target, start }
}

/// Rule 7: under a governor, the level it steps to (with the response's kind and the step,
/// for its account), or `None` when it sheds this kind of response and the client accepts
/// identity.
fn governed(
    request: &Request,
    settings: &Settings,
    coding: ContentCoding,
    level: CompressionLevel,
    kind: impl FnOnce() -> Kind,
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

/// Rule 6: the level for `coding`, the layer's (or, where that is the default, the one the
/// dictionary was chosen for) unless its level chooser says otherwise; `None` when the
/// chooser says send it unencoded and the client accepts identity.
fn level_for<B: Body>(
    request: &Request,
    settings: &Settings,
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
        extensions: res.extensions(),
        size,
        path: request.path.as_ref().map_or("/", |p| p.path()),
    };
    match (chooser.0)(&parts) {
        None if request.choice.identity_refused => Some(level),
        chosen => chosen,
    }
}

/// Rule 1: a response that is encoded or partial already, has no content or forbids
/// transformation is never touched, whatever the predicate says: why, if so.
fn never_encoded<B>(res: &Response<B>) -> Option<SkipReason> {
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
fn refused(headers: &HeaderMap) -> SkipReason {
    match is_compressed_content(headers) {
        true => SkipReason::ContentType,
        false => SkipReason::Predicate,
    }
}

/// Rule 5: the smallest body worth encoding, 0 when there is no floor.
fn size_floor<P: Predicate>(request: &Request, settings: &Settings, predicate: &P) -> u64 {
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

/// Rule 4: the coding negotiation chose (or the one streams can give back instead of br),
/// or what to do when it chose none.
fn negotiated_coding<B>(
    request: &Request,
    res: &Response<B>,
    size: Option<u64>,
    settings: &Settings,
) -> Result<ContentCoding, Action> {
    let coding = match request.choice.negotiated {
        Negotiated::Encode(coding) => coding,
        Negotiated::Identity => return Err(Action::VaryOnly(SkipReason::Identity)),
        Negotiated::NotAcceptable if res.status().is_success() => {
            return Err(Action::NotAcceptable);
        }
        Negotiated::NotAcceptable => return Err(Action::VaryOnly(SkipReason::NotAcceptable)),
    };
    Ok(match request.releasable {
        Some(other) if prefers_releasable(res.headers(), size, settings) => other,
        _ => coding,
    })
}

/// Whether a response that would be br goes with another coding the client accepts: an
/// event stream always (a br stream gives its encoder back at a pause too, but each event
/// after a long pause primes a fresh one with up to 32 KiB, dearer than deflate's), and a
/// streamed body (unknown size, or known and over one poll's slice) while every br stream
/// turn is taken (it would wait for one before sending a byte). A body known in full is
/// compressed in one call and takes no turn.
fn prefers_releasable(headers: &HeaderMap, size: Option<u64>, settings: &Settings) -> bool {
    let event_stream = headers.get(CONTENT_TYPE).is_some_and(|v| {
        v.as_bytes()
            .get(..17)
            .is_some_and(|t| t.eq_ignore_ascii_case(b"text/event-stream"))
    });
    let turns = settings.pool.turns();
    let streamed = size.is_none_or(|size| size > MAX_INPUT_PER_POLL as u64);
    let busy = streamed && turns.held() >= turns.limit();
    event_stream || busy
}

/// Carries out `action`: the one place that writes headers and counts the response.
fn apply<B: Body<Error: Into<BoxError>>>(
    action: Action,
    res: Response<B>,
    settings: &Settings,
    cx: &mut Context<'_>,
) -> Response<CompressionBody<B>> {
    let (vary, reason, mut res) = match action {
        Action::Encode { target, start } => return encode(target, start, res, settings, cx),
        Action::Skip(reason) => (false, reason, res.map(CompressionBody::identity)),
        Action::VaryOnly(reason) => (true, reason, res.map(CompressionBody::identity)),
        Action::NotAcceptable => (true, SkipReason::NotAcceptable, not_acceptable(res)),
    };
    report::skipped(&settings.stats, reason);
    if vary {
        add_varies(settings, res.headers_mut());
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
