use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use bytes::{Buf, Bytes, BytesMut};
use http::header::{
    ACCEPT_RANGES, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_RANGE, CONTENT_TYPE,
    ETAG, HeaderMap, HeaderValue, VARY,
};
use http::{Response, StatusCode};
use http_body::Body;
use pin_project_lite::pin_project;

use super::body::{Chunks, CompressionBody, MAX_INPUT_PER_POLL};
use super::service::Settings;
use crate::BoxError;
use crate::codec::{Encoder, Format, encode_all};
use crate::negotiate::Negotiated;
use crate::predicate::{Predicate, body_size};

pin_project! {
    /// The response future of [`Compression`](super::Compression).
    pub struct ResponseFuture<F, P> {
        #[pin]
        inner: F,
        negotiated: Negotiated,
        identity_refused: bool,
        head: bool,
        settings: Arc<Settings>,
        predicate: P,
    }
}

impl<F, P> ResponseFuture<F, P> {
    pub(crate) fn new(
        inner: F,
        negotiated: Negotiated,
        identity_refused: bool,
        head: bool,
        settings: Arc<Settings>,
        predicate: P,
    ) -> Self {
        ResponseFuture {
            inner,
            negotiated,
            identity_refused,
            head,
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
        let decision = Decision {
            negotiated: *this.negotiated,
            identity_refused: *this.identity_refused,
            head: *this.head,
            settings: this.settings,
        };
        Poll::Ready(Ok(decision.respond(response, this.predicate, cx)))
    }
}

struct Decision<'a> {
    negotiated: Negotiated,
    /// The client refused identity: `min_size` does not apply.
    identity_refused: bool,
    head: bool,
    settings: &'a Settings,
}

impl Decision<'_> {
    fn respond<B, P>(
        &self,
        mut res: Response<B>,
        predicate: &P,
        cx: &mut Context<'_>,
    ) -> Response<CompressionBody<B>>
    where
        B: Body,
        B::Error: Into<BoxError>,
        P: Predicate,
    {
        let stats = &self.settings.stats;
        let status = res.status();
        // Hard rules, whatever the predicate says: never re-encode, never touch bodiless or
        // partial responses, and respect `no-transform` (RFC 9111 section 5.2.2.6).
        if res.headers().contains_key(CONTENT_ENCODING)
            || status.is_informational()
            || status == StatusCode::NO_CONTENT
            || status == StatusCode::PARTIAL_CONTENT
            || res.headers().contains_key(CONTENT_RANGE)
            || has_no_transform(res.headers())
            || !predicate.should_compress(&res)
        {
            stats.record_skipped();
            return res.map(CompressionBody::identity);
        }
        // From here the representation depends on Accept-Encoding, whatever is chosen.
        add_vary(res.headers_mut());
        let format = match self.negotiated {
            _ if self.head || status == StatusCode::NOT_MODIFIED => None,
            Negotiated::Encode(format) => Some(format),
            Negotiated::Identity => None,
            Negotiated::NotAcceptable if status.is_success() => {
                stats.record_skipped();
                return not_acceptable(res);
            }
            Negotiated::NotAcceptable => None,
        };
        let size = body_size(&res);
        let min_size = if self.identity_refused {
            0
        } else {
            self.settings.min_size
        };
        let Some(format) = format.filter(|_| size.is_none_or(|n| n >= min_size)) else {
            stats.record_skipped();
            return res.map(CompressionBody::identity);
        };

        let (mut parts, body) = res.into_parts();
        let mut body = Box::pin(body);
        if size.is_some_and(|n| n > MAX_INPUT_PER_POLL as u64) {
            stats.record_compressed();
            set_encoded_headers(&mut parts.headers, format);
            let encoder = self.encoder(format);
            let body = CompressionBody::encoding(body, encoder, Chunks::default(), stats.clone());
            return Response::from_parts(parts, body);
        }

        // Small or unknown size: read what the body has ready, up to one poll's slice.
        let ReadAhead { chunks, end } = read_ahead(body.as_mut(), cx, MAX_INPUT_PER_POLL);
        match end {
            ReadAheadEnd::Failed(error) => {
                // Nothing is compressed yet: send what was read as it was, then the error.
                stats.record_skipped();
                parts.headers.remove(CONTENT_LENGTH);
                let body = CompressionBody::ready(chunks.concat(), None, Some(error));
                Response::from_parts(parts, body)
            }
            ReadAheadEnd::Complete(trailers) if (chunks.len() as u64) < min_size => {
                stats.record_skipped();
                let body = CompressionBody::ready(chunks.concat(), trailers, None);
                Response::from_parts(parts, body)
            }
            ReadAheadEnd::Complete(trailers) => {
                // The whole body is here and small: compress it in one go. The body's exact
                // size hint makes hyper send Content-Length instead of chunked encoding.
                stats.record_compressed();
                set_encoded_headers(&mut parts.headers, format);
                let body = match self.one_shot(format, chunks) {
                    Ok(data) => CompressionBody::ready(data, trailers, None),
                    Err(error) => CompressionBody::ready(Bytes::new(), None, Some(error)),
                };
                Response::from_parts(parts, body)
            }
            ReadAheadEnd::Open => {
                // More is coming (or the body went pending first): stream, starting with
                // what was read ahead.
                stats.record_compressed();
                set_encoded_headers(&mut parts.headers, format);
                let encoder = self.encoder(format);
                let body = CompressionBody::encoding(body, encoder, chunks, stats.clone());
                Response::from_parts(parts, body)
            }
        }
    }

    fn encoder(&self, format: Format) -> Encoder {
        let settings = self.settings;
        Encoder::new(format, settings.level, &settings.pool)
            .with_header_padding(self.padding(format))
    }

    /// Bytes of BREACH jitter for this response's gzip header (zlib has no room for it).
    fn padding(&self, format: Format) -> usize {
        match (format, self.settings.jitter) {
            (Format::Gzip, max) if max > 0 => jitter_len(max),
            _ => 0,
        }
    }

    fn one_shot(&self, format: Format, chunks: Chunks) -> Result<Bytes, BoxError> {
        let settings = self.settings;
        let padding = self.padding(format);
        // The whole-buffer codec wants one slice: a body of several ready frames is joined
        // (at most one poll's slice, 64 KiB).
        let len = chunks.len();
        let input = chunks.concat();
        let mut out = BytesMut::new();
        encode_all(
            format,
            settings.level,
            &input,
            &settings.pool,
            padding,
            &mut out,
        )?;
        settings.stats.record_bytes(len as u64, out.len() as u64);
        Ok(out.freeze())
    }
}

/// What [`read_ahead`] found.
struct ReadAhead {
    chunks: Chunks,
    end: ReadAheadEnd,
}

enum ReadAheadEnd {
    /// The body may have more: it went pending or the limit was reached.
    Open,
    /// The body ended, with these trailers if any.
    Complete(Option<HeaderMap>),
    Failed(BoxError),
}

/// Reads the frames `body` has ready now, until it ends, goes pending, or `limit` bytes.
fn read_ahead<B>(mut body: Pin<&mut B>, cx: &mut Context<'_>, limit: usize) -> ReadAhead
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let mut ahead = ReadAhead {
        chunks: Chunks::default(),
        end: ReadAheadEnd::Open,
    };
    while ahead.chunks.len() < limit {
        match body.as_mut().poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                Ok(mut data) => {
                    ahead.chunks.push(data.copy_to_bytes(data.remaining()));
                }
                Err(frame) => {
                    if let Ok(trailers) = frame.into_trailers() {
                        ahead.end = ReadAheadEnd::Complete(Some(trailers));
                        return ahead;
                    }
                }
            },
            Poll::Ready(Some(Err(e))) => {
                ahead.end = ReadAheadEnd::Failed(e.into());
                return ahead;
            }
            Poll::Ready(None) => {
                ahead.end = ReadAheadEnd::Complete(None);
                return ahead;
            }
            Poll::Pending => return ahead,
        }
    }
    // At the limit with nothing more known, check for a cheap end: a body that says it is
    // done has no more frames. Not past the limit, though: a complete body is compressed
    // in one go, and more than one poll's slice must be streamed instead.
    if ahead.chunks.len() <= limit && body.is_end_stream() {
        ahead.end = ReadAheadEnd::Complete(None);
    }
    ahead
}

fn set_encoded_headers(headers: &mut HeaderMap, format: Format) {
    headers.insert(CONTENT_ENCODING, HeaderValue::from_static(format.as_str()));
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

/// Adds `Vary: accept-encoding` unless a Vary header already covers it.
fn add_vary(headers: &mut HeaderMap) {
    let covered = headers.get_all(VARY).iter().any(|value| {
        value.as_bytes().split(|&b| b == b',').any(|token| {
            let token = token.trim_ascii();
            token == b"*" || token.eq_ignore_ascii_case(b"accept-encoding")
        })
    });
    if !covered {
        headers.append(VARY, HeaderValue::from_static("accept-encoding"));
    }
}

fn has_no_transform(headers: &HeaderMap) -> bool {
    headers.get_all(CACHE_CONTROL).iter().any(|value| {
        value
            .as_bytes()
            .split(|&b| b == b',')
            .any(|directive| directive.trim_ascii().eq_ignore_ascii_case(b"no-transform"))
    })
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
