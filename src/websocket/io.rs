//! [`DeflateIo`]: the byte stream between the connection and tungstenite that speaks
//! permessage-deflate on the wire and shows tungstenite RSV1-clear frames only.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::{Buf, BytesMut};
use http::HeaderMap;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::config::{DeflateConfig, Reservation};
use super::frame::close_frame;
use super::history::History;
use super::inbound::{Fault, Inbound, InboundCodec, Step};
use super::kept::Keeper;
use super::negotiate::{self, Agreement, Direction};
use super::outbound::{Outbound, OutboundCodec};
use super::stats;

/// Bytes asked of the socket per read.
const READ: usize = 8 * 1024;
/// Compressed bytes waiting for the socket past which a write waits for it to drain.
const HIGH_WATER: usize = 128 * 1024;
/// The longest response head a client adapter looks for its end in.
const MAX_HEAD: usize = 64 * 1024;

/// Where the handshake is, as the adapter sees it.
#[derive(Debug)]
enum Handshake {
    /// Frames from here on (a server armed before its 101 went out, or passthrough).
    Done,
    /// Client: the server's response head is still coming; `config` made the offer.
    AwaitResponse(Box<DeflateConfig>),
}

/// Whether the adapter has failed the connection.
#[derive(Debug)]
enum Failure {
    None,
    /// The close frame (if one could be placed) is in the write buffer; reads and writes
    /// return this error once it is out.
    Failed {
        code: u16,
        reason: &'static str,
    },
    /// The client's handshake answer was unacceptable.
    BadAnswer(negotiate::BadAnswer),
}

/// An `AsyncRead + AsyncWrite` between an upgraded connection and
/// `tokio_tungstenite::WebSocketStream`, in either role: it inflates compressed messages
/// into RSV1-clear frames for tungstenite, compresses tungstenite's data frames, and fails
/// the connection itself (1002, 1007, 1009) on what only it can see.
///
/// The entry points build it ([`accept_async`](super::accept_async),
/// [`client_async`](super::client_async), the axum extractor); build one by hand with
/// [`DeflateIo::server`], [`DeflateIo::client`] or [`DeflateIo::client_after`].
pub struct DeflateIo<S> {
    inner: S,
    inbound: Inbound,
    outbound: Outbound,
    handshake: Handshake,
    failure: Failure,
    server: bool,
    agreed: Option<(Direction, Direction)>,
    _reservations: Vec<Reservation>,
}

impl<S> std::fmt::Debug for DeflateIo<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeflateIo")
            .field("server", &self.server)
            .field("agreed", &self.agreed)
            .field("failure", &self.failure)
            .finish_non_exhaustive()
    }
}

impl<S> DeflateIo<S> {
    fn new(inner: S, server: bool, handshake: Handshake) -> Self {
        DeflateIo {
            inner,
            inbound: Inbound::new(server),
            outbound: Outbound::new(),
            handshake,
            failure: Failure::None,
            server,
            agreed: None,
            _reservations: Vec::new(),
        }
    }

    /// Server role, after the handshake's answer (`None`: nothing agreed, bytes pass
    /// through). Arm it before the 101 goes out: the client sends nothing before it.
    pub fn server(inner: S, agreement: Option<Agreement>, config: &DeflateConfig) -> Self {
        let mut io = Self::new(inner, true, Handshake::Done);
        if let Some(agreement) = agreement {
            io.arm(agreement, config);
        }
        io
    }

    /// Client role, before the handshake: put it under tungstenite's client handshake with
    /// [`offer`](super::offer)'s header on the request. It reads the response head itself,
    /// checks the server's answer (RFC 7692 section 7.1) and switches to frames at the
    /// byte the head ends, so frames that came with the 101 are inflated too.
    pub fn client(inner: S, config: &DeflateConfig) -> Self {
        Self::new(
            inner,
            false,
            Handshake::AwaitResponse(Box::new(config.clone())),
        )
    }

    /// Client role after a handshake done elsewhere (an HTTP/2 extended CONNECT, an HTTP
    /// client's own upgrade): checks the response's `Sec-WebSocket-Extensions` against
    /// [`offer`](super::offer)`(config)` (RFC 7692 section 7.1) and arms.
    pub fn client_after(
        inner: S,
        response: &HeaderMap,
        config: &DeflateConfig,
    ) -> Result<Self, negotiate::BadAnswer> {
        let mut io = Self::new(inner, false, Handshake::Done);
        if let Some(agreement) = negotiate::accept(response, config)? {
            io.arm(agreement, config);
        }
        Ok(io)
    }

    /// A server-role adapter that passes everything through until [`arm`](Self::arm)
    /// (for handshakes that run over it, like tokio-tungstenite's `accept_hdr_async`).
    pub(crate) fn passthrough_server(inner: S) -> Self {
        Self::new(inner, true, Handshake::Done)
    }

    /// Starts compressing with what the handshake agreed.
    pub(crate) fn arm(&mut self, agreement: Agreement, config: &DeflateConfig) {
        let (out, inb) = (agreement.outbound, agreement.inbound);
        stats::note_connection(out.takeover || inb.takeover, agreement.header());
        self.inbound.arm(InboundCodec {
            pool: config.pool.clone(),
            limit: config.message_limit,
            history: inb.takeover.then(|| History::new(inb.window_bits)),
        });
        self.outbound.arm(OutboundCodec {
            pool: config.pool.clone(),
            level: config.level,
            threshold: config.threshold,
            window_bits: out.window_bits,
            history: out.takeover.then(|| History::new(out.window_bits)),
            keeper: (out.takeover && config.kept.cap() > 0)
                .then(|| Keeper::new(config.kept.clone(), config.budget.clone(), out.window_bits)),
        });
        self.agreed = Some((out, inb));
        self._reservations = agreement.reservations;
    }

    /// What was agreed: `(outbound, inbound)`, or `None` when the connection is not
    /// compressed (or, for a client, before the response head has been read).
    pub fn agreed(&self) -> Option<(Direction, Direction)> {
        self.agreed
    }

    /// The connection under the adapter.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// Fails the connection: a Close with the fault's code goes out if no frame is half
    /// written, and reads and writes return an error from now on.
    fn fail(&mut self, fault: Fault) {
        stats::note_failure(fault.code(), fault.reason());
        if self.outbound.at_frame_boundary() {
            let mask = (!self.server).then(mask_key);
            let frame = close_frame(fault.code(), fault.reason(), mask);
            self.outbound.wire.extend_from_slice(&frame);
        }
        self.failure = Failure::Failed {
            code: fault.code(),
            reason: fault.reason(),
        };
    }

    fn failure_error(&self) -> Option<io::Error> {
        match &self.failure {
            Failure::None => None,
            Failure::Failed { code, reason } => Some(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("permessage-deflate: closed with {code}: {reason}"),
            )),
            Failure::BadAnswer(why) => Some(io::Error::new(io::ErrorKind::InvalidData, *why)),
        }
    }
}

/// A client's mask key for the one frame the adapter writes itself (a Close): from the
/// standard library's randomly seeded hasher, as this crate has no random source of its own.
fn mask_key() -> [u8; 4] {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u8(0);
    let bits = hasher.finish();
    [
        bits as u8,
        (bits >> 8) as u8,
        (bits >> 16) as u8,
        (bits >> 24) as u8,
    ]
}

impl<S: AsyncRead + AsyncWrite + Unpin> DeflateIo<S> {
    /// Reads what the socket has into the raw buffer: `Ok(0)` at its end.
    fn poll_fill(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        let raw = &mut self.inbound.raw;
        let start = raw.len();
        raw.resize(start + READ, 0);
        let mut buf = ReadBuf::new(&mut raw[start..]);
        let polled = Pin::new(&mut self.inner).poll_read(cx, &mut buf);
        let n = buf.filled().len();
        raw.truncate(start + n);
        polled.map_ok(|()| n)
    }

    /// Writes the buffered wire bytes to the socket.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let wire = &mut self.outbound.wire;
        while !wire.is_empty() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, wire))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            wire.advance(n);
        }
        // Empty: freed, so an idle connection keeps no buffer of a past message.
        if wire.capacity() > 0 {
            *wire = BytesMut::new();
        }
        Poll::Ready(Ok(()))
    }

    /// After a failure: the Close out, then the error.
    fn poll_failed(&mut self, cx: &mut Context<'_>, err: io::Error) -> Poll<io::Result<()>> {
        // Best effort: a peer that stopped reading does not hold the error back forever
        // more than the socket's own timeouts would.
        if ready!(self.poll_drain(cx)).is_ok() {
            let _ = ready!(Pin::new(&mut self.inner).poll_shutdown(cx));
        }
        Poll::Ready(Err(err))
    }

    /// Client: reads up to the end of the response head, passes it up, and arms.
    fn poll_head(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<bool>> {
        loop {
            let raw = &self.inbound.raw;
            if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = self.inbound.raw.split_to(end + 4);
                let Handshake::AwaitResponse(config) =
                    std::mem::replace(&mut self.handshake, Handshake::Done)
                else {
                    unreachable!("reading a head only while awaiting one");
                };
                self.read_answer(&head, &config);
                // An unacceptable answer fails the handshake itself: tungstenite never
                // sees the head, and returns the error from its handshake.
                if matches!(self.failure, Failure::None) {
                    self.inbound.out.extend_from_slice(&head);
                }
                return Poll::Ready(Ok(true));
            }
            if raw.len() > MAX_HEAD {
                self.handshake = Handshake::Done; // not a head we know: tungstenite decides
                return Poll::Ready(Ok(true));
            }
            if ready!(self.poll_fill(cx))? == 0 {
                return Poll::Ready(Ok(false));
            }
        }
    }

    fn read_answer(&mut self, head: &[u8], config: &DeflateConfig) {
        let (switching, headers) = parse_head(head);
        if !switching {
            return; // tungstenite reports the refused upgrade
        }
        match negotiate::accept(&headers, config) {
            Ok(Some(agreement)) => self.arm(agreement, config),
            Ok(None) => {}
            Err(why) => self.failure = Failure::BadAnswer(why),
        }
    }
}

/// Whether the head is a `101` and its `Sec-WebSocket-Extensions` headers.
fn parse_head(head: &[u8]) -> (bool, HeaderMap) {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split("\r\n");
    let switching = lines
        .next()
        .and_then(|status| status.split(' ').nth(1))
        .is_some_and(|code| code == "101");
    let mut headers = HeaderMap::new();
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        if name.trim().eq_ignore_ascii_case("sec-websocket-extensions") {
            if let Ok(value) = http::HeaderValue::from_str(value.trim()) {
                headers.append(http::header::SEC_WEBSOCKET_EXTENSIONS, value);
            }
        }
    }
    (switching, headers)
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for DeflateIo<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            let out = &mut this.inbound.out;
            if !out.is_empty() {
                let n = out.len().min(buf.remaining());
                buf.put_slice(&out[..n]);
                out.advance(n);
                if out.is_empty() {
                    *out = BytesMut::new(); // as above, for what tungstenite was handed
                }
                return Poll::Ready(Ok(()));
            }
            if let Some(err) = this.failure_error() {
                return this.poll_failed(cx, err);
            }
            if let Handshake::AwaitResponse(_) = this.handshake {
                if !ready!(this.poll_head(cx))? {
                    return Poll::Ready(Ok(()));
                }
                continue;
            }
            match this.inbound.step() {
                Ok(Step::Progress) => {}
                Ok(Step::NeedMore) => {
                    if ready!(this.poll_fill(cx))? == 0 {
                        return Poll::Ready(Ok(())); // the end: tungstenite sees EOF
                    }
                }
                Err(fault) => this.fail(fault),
            }
            if this.inbound.raw.is_empty() && this.inbound.raw.capacity() > 0 {
                this.inbound.raw = BytesMut::new(); // idle connections hold no read buffer
            }
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for DeflateIo<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if let Some(err) = this.failure_error() {
            return Poll::Ready(Err(err));
        }
        if this.outbound.wire.len() >= HIGH_WATER {
            if let Poll::Ready(Err(e)) = this.poll_drain(cx) {
                return Poll::Ready(Err(e));
            }
            if this.outbound.wire.len() >= HIGH_WATER {
                return Poll::Pending; // poll_drain registered the socket's waker
            }
        }
        this.outbound.push(buf).map_err(io::Error::other)?;
        // Out now, as far as the socket takes it: tungstenite treats a write as sent (a
        // server writes its Close reply and drops the stream without a flush).
        if let Poll::Ready(Err(e)) = this.poll_drain(cx) {
            return Poll::Ready(Err(e));
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}
