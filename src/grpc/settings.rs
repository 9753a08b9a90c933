//! What both gRPC layers are configured with: the codings and their levels, the size under
//! which messages go uncompressed, the limits on decoding, the pool.

use http::HeaderValue;

use super::encoding::{accept_value, is_grpc_coding};
use super::status::GrpcStatus;
use crate::codec::Levels;
use crate::{CodecPool, CompressionLevel, ContentCoding};

/// The default cap on one decoded message: 4 MiB, tonic's and grpc-go's default for received
/// messages.
pub(crate) const DEFAULT_MAX_MESSAGE_SIZE: usize = 4 * 1024 * 1024;

/// The default ratio limit: a message may decode to 200 times its compressed size (Apache
/// mod_deflate's `DeflateInflateRatioLimit`, as the HTTP layers), once past
/// [`RATIO_FLOOR`].
pub(crate) const DEFAULT_MAX_RATIO: u32 = 200;

/// Messages up to this decoded size are never held to the ratio limit: 1 MiB, as the HTTP
/// layers. Small messages of repeated fields compress past any sane ratio.
pub(crate) const RATIO_FLOOR: usize = 1024 * 1024;

/// Messages shorter than this are sent uncompressed by default: 256 bytes, under which gzip
/// saves little or makes them larger.
pub(crate) const DEFAULT_MIN_MESSAGE_SIZE: usize = 256;

/// The limits on one received message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    /// The most bytes a message may have, decoded or on the wire.
    pub(crate) max_size: usize,
    /// How many times its compressed size a message may decode to past [`RATIO_FLOOR`].
    pub(crate) max_ratio: Option<u32>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_size: DEFAULT_MAX_MESSAGE_SIZE,
            max_ratio: Some(DEFAULT_MAX_RATIO),
        }
    }
}

impl Limits {
    /// The most bytes a message of `wire_len` compressed bytes may decode to.
    pub(crate) fn max_decoded(&self, wire_len: usize) -> usize {
        let by_ratio = self.max_ratio.map_or(usize::MAX, |ratio| {
            wire_len.saturating_mul(ratio as usize).max(RATIO_FLOOR)
        });
        self.max_size.min(by_ratio)
    }

    /// The status for a message of `wire_len` compressed bytes that decoded past
    /// [`max_decoded`](Self::max_decoded).
    pub(crate) fn exceeded(&self, wire_len: usize) -> GrpcStatus {
        let max = self.max_decoded(wire_len);
        let message = if max < self.max_size {
            let ratio = self.max_ratio.unwrap_or(0);
            format!("compressed message inflates past {ratio}:1 (a decompression bomb?)")
        } else {
            format!("decompressed message larger than the limit of {max} bytes")
        };
        GrpcStatus::resource_exhausted(message)
    }
}

/// A layer's settings, shared by its services.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    /// The codings this side sends, most preferred first (the client sends the first).
    pub(crate) send: Vec<ContentCoding>,
    /// The codings this side decodes.
    pub(crate) decode: Vec<ContentCoding>,
    /// [`decode`](Self::decode) as advertised in `grpc-accept-encoding`.
    pub(crate) accept: HeaderValue,
    pub(crate) levels: Levels,
    pub(crate) min_size: usize,
    pub(crate) limits: Limits,
    pub(crate) pool: CodecPool,
}

impl Settings {
    /// Every gRPC coding compiled in, sent in the order `send`, decoded all.
    pub(crate) fn new(send: &[ContentCoding]) -> Self {
        Settings {
            send: grpc_codings(send),
            decode: grpc_codings(ContentCoding::PLAIN),
            accept: accept_value(&grpc_codings(ContentCoding::PLAIN)),
            levels: Levels::default(),
            min_size: DEFAULT_MIN_MESSAGE_SIZE,
            limits: Limits::default(),
            pool: CodecPool::global().clone(),
        }
    }

    /// `coding`'s level.
    pub(crate) fn level(&self, coding: ContentCoding) -> CompressionLevel {
        self.levels.of(coding)
    }
}

/// The codings of `codings` that gRPC messages may use here, in order, each once.
pub(crate) fn grpc_codings(codings: &[ContentCoding]) -> Vec<ContentCoding> {
    let mut out: Vec<ContentCoding> = Vec::with_capacity(codings.len());
    for coding in codings.iter().copied().filter(|c| is_grpc_coding(*c)) {
        if !out.contains(&coding) {
            out.push(coding);
        }
    }
    out
}

/// The builder methods both gRPC layers share, written once.
macro_rules! settings_methods {
    () => {
        /// The compression level of `coding` (each coding's default otherwise: gzip and
        /// deflate 6, zstd 3).
        pub fn level(
            mut self,
            coding: crate::ContentCoding,
            level: crate::CompressionLevel,
        ) -> Self {
            self.settings_mut().levels.set(coding, level);
            self
        }

        /// Messages shorter than `bytes` are sent uncompressed, their flag clear (default 256
        /// bytes, under which gzip saves little or makes them larger).
        pub fn min_size(mut self, bytes: usize) -> Self {
            self.settings_mut().min_size = bytes;
            self
        }

        /// The most bytes one received message may have, decoded or on the wire (default
        /// 4 MiB, tonic's and grpc-go's); past it the call ends with `RESOURCE_EXHAUSTED`.
        pub fn max_message_size(mut self, bytes: usize) -> Self {
            self.settings_mut().limits.max_size = bytes;
            self
        }

        /// Which codings are decoded and advertised in `grpc-accept-encoding` (default:
        /// every gRPC coding compiled in: zstd, gzip, deflate). Messages in another coding
        /// are refused with `UNIMPLEMENTED`.
        pub fn accept(mut self, codings: &[crate::ContentCoding]) -> Self {
            let codings = super::settings::grpc_codings(codings);
            self.settings_mut().accept = super::encoding::accept_value(&codings);
            self.settings_mut().decode = codings;
            self
        }

        /// The pool codec state is drawn from (default
        /// [`CodecPool::global`](crate::CodecPool::global)).
        pub fn pool(mut self, pool: crate::CodecPool) -> Self {
            self.settings_mut().pool = pool;
            self
        }

        fn settings_mut(&mut self) -> &mut super::settings::Settings {
            std::sync::Arc::make_mut(&mut self.settings)
        }
    };
}
pub(crate) use settings_methods;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ratio_limit_starts_past_its_floor() {
        let limits = Limits::default();
        assert_eq!(limits.max_decoded(10), RATIO_FLOOR);
        assert_eq!(limits.max_decoded(10_000), 2_000_000);
        assert_eq!(limits.max_decoded(1 << 20), DEFAULT_MAX_MESSAGE_SIZE);
        let none = Limits {
            max_ratio: None,
            ..limits
        };
        assert_eq!(none.max_decoded(1), DEFAULT_MAX_MESSAGE_SIZE);
    }
}
