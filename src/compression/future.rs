use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use bytes::{Buf, Bytes, BytesMut};
use http::header::{
    ACCEPT_RANGES, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_RANGE, CONTENT_TYPE, ETAG, HeaderMap,
    HeaderValue, VARY,
};
use http::{Response, StatusCode};
use http_body::Body;
use pin_project_lite::pin_project;

use super::body::{CompressionBody, MAX_INPUT_PER_POLL};
use super::dictionary::{self, DictionaryRequest};
use super::service::Settings;
use super::stats::DictionaryOutcome;
use crate::BoxError;
use crate::buf::Chunks;
use crate::codec::{ContentCoding, Encoder, OneShot};
use crate::dictionary::Dictionary;
use crate::headers::{add_vary, add_vary_token, body_size, has_no_transform};
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
    Skip,
    /// Send unencoded, with `Vary: accept-encoding`: the representation depends on
    /// Accept-Encoding, but this request gets identity.
    VaryOnly,
    /// 406: the client accepts neither an offered coding nor identity.
    NotAcceptable,
    /// Encode with `target`, a plain coding or one against a dictionary (RFC 9842).
    Encode { target: Target, start: Start },
}

/// How an encoded body starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Start {
    /// Read ahead what is ready, then compress in one shot or stream; a body found complete
    /// and smaller than `floor` stays unencoded.
    ReadAhead { floor: u64 },
    /// Stream from the start: the body is known to be `size` bytes, more than one poll's
    /// slice.
    Stream { size: u64 },
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
fn decide<B: Body, P: Predicate>(
    request: &Request,
    settings: &Settings,
    predicate: &P,
    res: &Response<B>,
) -> Action {
    let status = res.status();
    let headers = res.headers();
    if is_never_encoded(res) || !predicate.should_compress(res) {
        return Action::Skip;
    }
    if request.head || status == StatusCode::NOT_MODIFIED {
        return Action::VaryOnly;
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
    if let Some((coding, dictionary)) = chosen {
        let target = Target {
            coding,
            dictionary: Some(dictionary),
        };
        return Action::Encode { target, start };
    }
    match negotiated_coding(request, res, size, settings) {
        Ok(_) if small => Action::VaryOnly,
        Ok(coding) => {
            let target = Target {
                coding,
                dictionary: None,
            };
            Action::Encode { target, start }
        }
        Err(action) => action,
    }
}

/// Rule 1: a response that is encoded or partial already, has no content or forbids
/// transformation is never touched, whatever the predicate says.
fn is_never_encoded<B>(res: &Response<B>) -> bool {
    let status = res.status();
    let headers = res.headers();
    headers.contains_key(CONTENT_ENCODING)
        || headers.contains_key(CONTENT_RANGE)
        || status.is_informational()
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::PARTIAL_CONTENT
        || has_no_transform(headers)
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
        Negotiated::Identity => return Err(Action::VaryOnly),
        Negotiated::NotAcceptable if res.status().is_success() => {
            return Err(Action::NotAcceptable);
        }
        Negotiated::NotAcceptable => return Err(Action::VaryOnly),
    };
    Ok(match request.releasable {
        Some(other) if prefers_releasable(res.headers(), size, settings) => other,
        _ => coding,
    })
}

/// Whether a response that would be br goes with another coding the client accepts: an
/// event stream always (a br stream gives its encoder back at a pause too, but each event
/// after a long pause primes a fresh one with up to 32 KiB, dearer than deflate's), and a
/// body of unknown size while every br stream turn is taken (it would wait for one before
/// sending a byte).
fn prefers_releasable(headers: &HeaderMap, size: Option<u64>, settings: &Settings) -> bool {
    let event_stream = headers.get(CONTENT_TYPE).is_some_and(|v| {
        v.as_bytes()
            .get(..17)
            .is_some_and(|t| t.eq_ignore_ascii_case(b"text/event-stream"))
    });
    let turns = settings.pool.turns();
    let busy = size.is_none() && turns.held() >= turns.limit();
    event_stream || busy
}

/// What a compressed body is encoded with: a coding, and for `dcz` / `dcb` the dictionary
/// the client named.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Target {
    coding: ContentCoding,
    dictionary: Option<Dictionary>,
}

/// Carries out `action`: the one place that writes headers and counts the response.
fn apply<B: Body<Error: Into<BoxError>>>(
    action: Action,
    res: Response<B>,
    settings: &Settings,
    cx: &mut Context<'_>,
) -> Response<CompressionBody<B>> {
    let (vary, mut res) = match action {
        Action::Encode { target, start } => return encode(target, start, res, settings, cx),
        Action::Skip => (false, res.map(CompressionBody::identity)),
        Action::VaryOnly => (true, res.map(CompressionBody::identity)),
        Action::NotAcceptable => (true, not_acceptable(res)),
    };
    settings.stats.record_skipped();
    if vary {
        add_varies(settings, res.headers_mut());
    }
    res
}

/// The response encoded with `target`, or sent as it is when reading ahead finds it
/// complete and under the floor, or failed before anything was compressed.
fn encode<B: Body<Error: Into<BoxError>>>(
    target: Target,
    start: Start,
    res: Response<B>,
    settings: &Settings,
    cx: &mut Context<'_>,
) -> Response<CompressionBody<B>> {
    let stats = &settings.stats;
    let dictionary = target.dictionary.is_some();
    let (mut parts, body) = res.into_parts();
    add_varies(settings, &mut parts.headers);
    let mut body = Box::pin(body);
    let body = match start {
        Start::Stream { size } => streaming(settings, &target, Some(size), body, Chunks::default()),
        Start::ReadAhead { floor } => {
            let ahead = read_ahead(body.as_mut(), cx);
            match encode_read_ahead(settings, &target, floor, body, ahead) {
                Ahead::Encoded(body) => body,
                Ahead::Unencoded { body, failed } => {
                    stats.record_skipped();
                    if dictionary {
                        stats.record_dictionary(DictionaryOutcome::NotOffered);
                    }
                    // A body that failed does not have the length it announced.
                    if failed {
                        parts.headers.remove(CONTENT_LENGTH);
                    }
                    return Response::from_parts(parts, body);
                }
            }
        }
    };
    if dictionary {
        stats.record_dictionary(DictionaryOutcome::Hit);
    }
    stats.record_compressed(target.coding);
    set_encoded_headers(&mut parts.headers, target.coding.as_str());
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
        Ok(encoder) => CompressionBody::encoding(body, encoder, chunks, settings.stats.clone()),
        Err(error) => CompressionBody::ready(Bytes::new(), None, Some(error)),
    }
}

/// A body read ahead: encoded, or to send as it is.
enum Ahead<B> {
    Encoded(CompressionBody<B>),
    /// Found complete and under the floor, or failed before anything was compressed (then
    /// the error follows the data).
    Unencoded {
        body: CompressionBody<B>,
        failed: bool,
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
            failed: true,
        },
        End::Complete(trailers) if (chunks.len() as u64) < floor => Ahead::Unencoded {
            body: CompressionBody::ready(chunks.concat(), trailers, None),
            failed: false,
        },
        // The whole body is here and small: compress it in one go. The body's exact size
        // hint makes hyper send Content-Length instead of chunked encoding.
        End::Complete(trailers) => Ahead::Encoded(match one_shot(settings, target, chunks) {
            Ok(data) => CompressionBody::ready(data, trailers, None),
            Err(error) => CompressionBody::ready(Bytes::new(), None, Some(error)),
        }),
        // More is coming (or the body went pending first): stream, starting with what was
        // read ahead.
        End::Open => Ahead::Encoded(streaming(settings, target, None, body, chunks)),
    }
}

/// `Vary: accept-encoding`, and `available-dictionary` when dictionaries are on: the
/// representation depends on both (RFC 9842 section 6.2).
fn add_varies(settings: &Settings, headers: &mut HeaderMap) {
    add_vary(headers);
    if settings.dictionaries.is_some() {
        add_vary_token(headers, "available-dictionary");
    }
}

fn encoder(settings: &Settings, target: &Target, size: Option<u64>) -> Result<Encoder, BoxError> {
    let (coding, pool) = (target.coding, &settings.pool);
    let level = settings.levels.of(coding);
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

fn one_shot(settings: &Settings, target: &Target, chunks: Chunks) -> Result<Bytes, BoxError> {
    // The one-shot codecs want one slice: a body of several ready frames is joined (at most
    // one poll's slice, 64 KiB).
    let len = chunks.len();
    let input = chunks.concat();
    let mut out = BytesMut::new();
    OneShot::new(target.coding)
        .level(settings.levels.of(target.coding))
        .pool(&settings.pool)
        .header_padding(padding(settings, target.coding))
        .against(target.dictionary.as_ref())
        .encode(&input, &mut out)?;
    settings
        .stats
        .record_bytes(target.coding, len as u64, out.len() as u64);
    Ok(out.freeze())
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

fn set_encoded_headers(headers: &mut HeaderMap, token: &'static str) {
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

/// A random padding length in `1..=max`, for the BREACH jitter.
fn jitter_len(max: u16) -> usize {
    use std::hash::BuildHasher;
    // SipHash keyed randomly per process and per call: unpredictable to a remote attacker.
    let random = std::collections::hash_map::RandomState::new().hash_one(0u8);
    1 + (random % u64::from(max)) as usize
}
