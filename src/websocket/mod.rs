//! WebSocket message compression: RFC 7692 permessage-deflate under an unmodified
//! tokio-tungstenite, and the seed's per-message gzip (OpenIM-style), both on the crate's
//! pooled, bounded codecs. Cargo feature `websocket`, a default (`default-features =
//! false` leaves it out: it brings tungstenite and its handshake, most of the rest an axum
//! or hyper server has already); WebSocket over HTTP/2 takes the `http2` feature too.
//!
//! # How
//!
//! tungstenite rejects any frame with RSV1 set and has no extension hook, and axum's
//! `WebSocket` cannot be built around another stream. So the work is done below
//! tungstenite, by [`DeflateIo`]: an `AsyncRead + AsyncWrite` between the upgraded
//! connection and `WebSocketStream` that speaks permessage-deflate on the wire and shows
//! tungstenite RSV1-clear frames only, in either role. It inflates compressed messages as
//! their payload arrives into fragments of at most 64 KiB (so control frames between
//! fragments keep their order and an inflated message is never held here whole), stops
//! at the message limit with a 1009, and writes its own 1002 and 1007 Closes for what only
//! it can see. Outgoing data frames of at least [`DeflateConfig::threshold`] bytes are
//! deflated with a sync flush, its trailing `00 00 ff ff` stripped, and sent with RSV1; a
//! message that does not shrink is sent as it was.
//!
//! Entry points that negotiate and wrap: the axum extractor [`WebSocketUpgrade`] (swap it
//! in for axum's; HTTP/1.1 upgrades, and with the `http2` feature HTTP/2 extended CONNECT
//! (RFC 8441) where the server enables it, as `axum::serve` does with axum's `http2`
//! feature), [`upgrade`] for
//! plain hyper, [`accept_async`] / [`accept_hdr_async`]
//! for tokio-tungstenite servers and [`client_async`] / [`connect_async`] for its
//! clients. The extractor is part of this feature rather than a feature of its own: it
//! needs only `axum-core`, whose dependencies the crate already has (`http`, `tower`'s
//! traits), so an `axum` feature would save nothing but add a combination to test.
//!
//! # Memory
//!
//! By default a server answers `server_no_context_takeover; client_no_context_takeover`
//! (RFC 7692 section 7.1.1 lets it impose both): every message draws a deflate or inflate
//! state from the [`CodecPool`](crate::CodecPool) and returns it reset, so an idle
//! connection holds no codec memory. Context takeover is opt-in
//! ([`DeflateConfig::context_takeover`]): it mixes text an attacker chooses and the
//! connection's secrets in one history, which compressed sizes can leak (CRIME-class,
//! RFC 7692 section 9). With it, a connection keeps only its window bytes between messages
//! (the last `2^w` bytes per direction) and primes a pooled state with them
//! (`set_dictionary`) per message, under a global [`WindowBudget`]; once that is spent,
//! new connections are answered without takeover.
//!
//! Windows: zlib-rs takes 9 to 15 bits for raw deflate through flate2 (8 is refused, as
//! by zlib), so an offer that needs 8 is declined and the next offer tried. Inflaters are
//! always 15 bits: zlib-rs allocates a 32 KiB inflate window whatever the value.
//!
//! # Observing
//!
//! [`stats`] counts messages and bytes per coding, connections with and without
//! takeover, parked window bytes and refusals; the same go to `tracing` (target
//! `tower_gzip::websocket`) and, with the `metrics` feature, to the `metrics` facade (the
//! names are in [`WebSocketStats`]'s module doc, `stats.rs`).

mod config;
mod frame;
// Not API: what `fuzz/` reaches below the public surface.
#[cfg(fuzzing)]
pub(crate) mod fuzzing;
mod gzip;
mod handshake;
mod history;
mod inbound;
mod io;
mod kept;
mod negotiate;
mod outbound;
mod params;
mod socket;
mod stats;
mod tungstenite;
mod upgrade;

pub use config::{DeflateConfig, WindowBudget};
pub use gzip::{GzipMessages, asks_for_gzip};
pub use handshake::WebSocketRejection;
pub use io::DeflateIo;
pub use kept::KeptCompressors;
pub use negotiate::{Agreement, BadAnswer, Direction};
pub use socket::{UpgradedStream, WebSocket};
pub use stats::{MessageCounts, WebSocketStats, stats};
pub use tungstenite::{accept_async, accept_hdr_async, client_async, connect_async, offer};
pub use upgrade::{DefaultOnFailedUpgrade, OnFailedUpgrade, WebSocketUpgrade, upgrade};

/// tungstenite's types the entry points use, re-exported so that the versions match.
pub use tokio_tungstenite::tungstenite::{Error, Message, protocol::WebSocketConfig};
