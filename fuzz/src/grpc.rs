//! The gRPC message framing under `GrpcCompressionLayer`, checked on arbitrary bytes (the
//! `grpc_framing` fuzz target; `tests/grpc/framing.rs` in the main crate includes this file
//! with `#[path]` and runs it under proptest).
//!
//! The input chooses a `grpc-encoding`, a message limit and where the request body is cut,
//! then is either the request body itself (raw) or a list of messages that are framed,
//! compressed (gzip through flate2) or not, possibly corrupted or cut short. The layer's
//! service reads the request and echoes it, and the client asks for gzip responses.
//!
//! Checked: no panic; every call ends with `grpc-status` 0, 8, 12 or 13; what reaches the
//! service is always well-framed, uncompressed and within the limit; a call that reaches
//! status 0 brings the service exactly the messages sent (decoded), and the response's
//! messages, decoded, are those messages again.

use std::collections::VecDeque;
use std::future::Future;
use std::io::{Read, Write};
use std::pin::{Pin, pin};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use http::{HeaderMap, Request, Response};
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Full};
use tower::{Layer, ServiceExt, service_fn};
use tower_gzip::BoxError;
use tower_gzip::grpc::{GrpcBody, GrpcCompressionLayer};

/// A request body of ready chunks.
struct Chunks(VecDeque<Bytes>);

impl Body for Chunks {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        Poll::Ready(self.0.pop_front().map(|chunk| Ok(Frame::data(chunk))))
    }
}

/// Polls an in-memory future to its end.
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1000 {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
    panic!("an in-memory future stayed pending");
}

/// A body's messages, `None` when it is not a sequence of whole messages.
fn split(mut body: &[u8]) -> Option<Vec<(u8, Vec<u8>)>> {
    let mut out = Vec::new();
    while !body.is_empty() {
        let head = body.first_chunk::<5>()?;
        let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
        let payload = body.get(5..5 + len)?;
        out.push((head[0], payload.to_vec()));
        body = &body[5 + len..];
    }
    Some(out)
}

fn frame(flag: u8, payload: &[u8], out: &mut Vec<u8>) {
    out.push(flag);
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    out.extend_from_slice(payload);
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(data).unwrap();
    encoder.finish().unwrap()
}

fn gunzip(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(data)
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// The case: the body, the messages it carries when built from them, the headers.
struct Case {
    body: Vec<u8>,
    /// The plain messages of a body built whole from messages; `None` for raw bytes or a
    /// body corrupted or cut on purpose.
    messages: Option<Vec<Vec<u8>>>,
    encoding: Option<&'static str>,
    limit: usize,
    cuts: Vec<usize>,
}

fn case(data: &[u8]) -> Case {
    let control = data.first().copied().unwrap_or(0);
    let cut_seed = data.get(1).copied().unwrap_or(1);
    let rest = data.get(2..).unwrap_or(&[]);
    let encoding = [
        None,
        Some("identity"),
        Some("gzip"),
        Some("deflate"),
        Some("snappy"),
    ][usize::from(control % 5)];
    let limit = [64, 1024, 64 * 1024][usize::from(control >> 3 & 3) % 3];
    let cuts = (0..8)
        .map(|i| usize::from(cut_seed.rotate_left(i)) + 1)
        .collect();
    let (body, messages) = match control >> 5 {
        0 | 1 => (rest.to_vec(), None),
        mode => {
            let plain: Vec<Vec<u8>> = rest.chunks(97).map(<[u8]>::to_vec).collect();
            let mut body = Vec::new();
            for (i, message) in plain.iter().enumerate() {
                let compress = encoding == Some("gzip") && i % 2 == 0;
                match compress {
                    true => frame(1, &gzip(message), &mut body),
                    false => frame(0, message, &mut body),
                }
            }
            match mode {
                7 if !body.is_empty() => {
                    let at = usize::from(cut_seed) % body.len();
                    body[at] ^= 0x5a;
                    (body, None)
                }
                6 => {
                    body.truncate(body.len().saturating_sub(usize::from(cut_seed % 7) + 1));
                    (body, None)
                }
                _ => (body, Some(plain)),
            }
        }
    };
    Case {
        body,
        messages,
        encoding,
        limit,
        cuts,
    }
}

/// What the service read: the body, or why reading it failed; `None` if it was not called.
type Reading = Option<Result<Vec<u8>, String>>;

/// What the service saw, shared with the case.
type Seen = std::sync::Arc<std::sync::Mutex<Reading>>;

/// The status of a reply, from its trailers or its headers.
fn status(headers: &HeaderMap, trailers: Option<&HeaderMap>) -> String {
    let map = trailers
        .filter(|t| t.contains_key("grpc-status"))
        .unwrap_or(headers);
    map.get("grpc-status")
        .map_or("none", |v| v.to_str().unwrap_or("?"))
        .to_owned()
}

/// Runs the case through the layer; returns the reply's status, body, and what the service
/// saw.
fn run(case: &Case) -> (String, Vec<u8>, Reading) {
    let seen = Seen::default();
    let record = seen.clone();
    let service = service_fn(move |request: Request<GrpcBody<Chunks>>| {
        let record = record.clone();
        async move {
            let read = request.into_body().collect().await;
            let read = read
                .map(|b| b.to_bytes().to_vec())
                .map_err(|e| e.to_string());
            let mut response =
                Response::new(Full::new(Bytes::from(read.clone().unwrap_or_default())));
            let status = if read.is_ok() { "0" } else { "2" };
            response
                .headers_mut()
                .insert("content-type", "application/grpc".parse().unwrap());
            response
                .headers_mut()
                .insert("grpc-status", status.parse().unwrap());
            *record.lock().unwrap() = Some(read);
            Ok::<_, BoxError>(response)
        }
    });
    let layer = GrpcCompressionLayer::new()
        .max_message_size(case.limit)
        .min_size(8);
    let mut chunks = VecDeque::new();
    let mut rest = &case.body[..];
    for cut in case.cuts.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (head, tail) = rest.split_at((*cut).min(rest.len()));
        chunks.push_back(Bytes::copy_from_slice(head));
        rest = tail;
    }
    let mut request = Request::post("/x").header("content-type", "application/grpc");
    request = request.header("grpc-accept-encoding", "gzip");
    if let Some(encoding) = case.encoding {
        request = request.header("grpc-encoding", encoding);
    }
    let request = request.body(Chunks(chunks)).unwrap();
    let response = block_on(layer.layer(service).oneshot(request)).unwrap();
    let (parts, body) = response.into_parts();
    let collected = block_on(body.collect()).expect("response bodies end in trailers");
    let trailers = collected.trailers().cloned();
    let body = collected.to_bytes().to_vec();
    let seen = seen.lock().unwrap().take();
    (status(&parts.headers, trailers.as_ref()), body, seen)
}

/// The property: see the module's documentation.
pub fn check_framing(data: &[u8]) {
    let case = case(data);
    let (status, body, seen) = run(&case);
    assert!(
        ["0", "8", "12", "13"].contains(&status.as_str()),
        "status {status}"
    );
    if let Some(Ok(read)) = &seen {
        let messages = split(read).expect("the service reads whole messages");
        for (flag, payload) in &messages {
            assert_eq!(*flag, 0, "the service reads uncompressed messages");
            assert!(payload.len() <= case.limit, "a message past the limit");
        }
    }
    if status != "0" {
        return;
    }
    let Some(Ok(read)) = seen else {
        panic!("status 0 without the service reading the body");
    };
    let read: Vec<Vec<u8>> = split(&read).unwrap().into_iter().map(|(_, p)| p).collect();
    if let Some(sent) = &case.messages {
        assert_eq!(&read, sent, "the service reads the messages sent");
    }
    let echoed: Vec<Vec<u8>> = split(&body)
        .expect("the response is whole messages")
        .into_iter()
        .map(|(flag, payload)| if flag == 1 { gunzip(&payload) } else { payload })
        .collect();
    assert_eq!(
        echoed, read,
        "the response's messages decode to the echoed ones"
    );
}
