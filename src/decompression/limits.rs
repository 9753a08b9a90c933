//! Limits on how much a compressed body may inflate.

use std::error::Error;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use http_body::Body;
use http_body_util::{Full, Limited};

use crate::BoxError;

/// The default cap on the decoded size of one body: 20 MiB.
///
/// This is the OpenTelemetry collector's `max_request_body_size` default, which it applies to
/// the *decompressed* bytes since CVE-2024-36129.
pub(crate) const DEFAULT_MAX_DECOMPRESSED_SIZE: usize = 20 * 1024 * 1024;

/// Limits that stop a decompression bomb while it inflates.
///
/// Both limits are on by default ([`DecompressionLimits::default`]):
///
/// - **Size**: at most 20 MiB decoded bytes per body.
/// - **Ratio**: [`RatioLimit::default`], Apache mod_deflate's `DeflateInflateRatioLimit 200`
///   with `DeflateInflateRatioBurst 3`, checked once 1 MiB has been decoded.
///
/// The decoder is never asked for more output than the remaining size allowance plus one
/// byte, so a body stops inflating at the limit instead of being inflated and then measured.
/// When a limit is hit, the body yields a boxed [`http_body_util::LengthLimitError`], which
/// axum's `Bytes`, `String`, `Json` and `Form` extractors turn into `413 Payload Too Large`.
///
/// # Example
///
/// ```
/// use tower_gzip::decompression::{DecompressionLimits, RatioLimit};
///
/// let mut ratio = RatioLimit::new(100, 3);
/// ratio.min_size = 4 * 1024 * 1024;
/// let limits = DecompressionLimits::default()
///     .with_max_size(Some(64 * 1024 * 1024))
///     .with_ratio(Some(ratio));
/// assert_eq!(limits.max_size, Some(64 * 1024 * 1024));
/// assert_eq!(DecompressionLimits::none().max_size, None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DecompressionLimits {
    /// The most decoded bytes one body may produce; `None` for no cap.
    ///
    /// With stacked codings (`Content-Encoding: gzip, gzip`) every intermediate stage is held
    /// to the same cap, so an inner layer cannot make the outer one work without bound.
    ///
    /// The compressed body is held to it too, with room for framing
    /// ([`max_wire_size`](DecompressionLimits::max_wire_size)): endless empty zstd frames,
    /// skippable frames or empty gzip members decode to nothing, so no decoded-size or ratio
    /// limit would ever stop them.
    pub max_size: Option<usize>,
    /// The ratio limit; `None` to disable it.
    pub ratio: Option<RatioLimit>,
}

impl DecompressionLimits {
    /// The most compressed bytes a body may send: `max_size` plus 1/8 and 64 KiB for framing
    /// (an honest stream is at most a few bytes per 64 KiB larger than its content), or
    /// `None` without a `max_size`.
    pub const fn max_wire_size(&self) -> Option<u64> {
        match self.max_size {
            Some(max) => Some(max as u64 + max as u64 / 8 + 64 * 1024),
            None => None,
        }
    }

    /// The default limits: 20 MiB and [`RatioLimit::default`].
    pub const fn new() -> Self {
        DecompressionLimits {
            max_size: Some(DEFAULT_MAX_DECOMPRESSED_SIZE),
            ratio: Some(RatioLimit::DEFAULT),
        }
    }

    /// No limits at all. Only for trusted peers: any body may then inflate without bound.
    pub const fn none() -> Self {
        DecompressionLimits {
            max_size: None,
            ratio: None,
        }
    }

    /// Sets the cap on decoded bytes per body (`None`: no cap).
    pub const fn with_max_size(mut self, max_size: Option<usize>) -> Self {
        self.max_size = max_size;
        self
    }

    /// Sets the ratio limit (`None`: no ratio limit).
    pub const fn with_ratio(mut self, ratio: Option<RatioLimit>) -> Self {
        self.ratio = ratio;
        self
    }
}

impl Default for DecompressionLimits {
    fn default() -> Self {
        Self::new()
    }
}

/// A limit on decoded bytes per compressed byte, after Apache's `DeflateInflateRatioLimit`
/// and `DeflateInflateRatioBurst` (from CVE-2014-0118).
///
/// Each time the body emits a frame (at most 64 KiB) it compares the decoded bytes so far
/// with the compressed bytes read so far. Once at least `min_size` bytes have been decoded, a
/// frame that leaves `decoded > ratio * compressed` counts as a strike and a frame that does
/// not resets the count; more than `burst` strikes in a row stop the body with a
/// [`LengthLimitError`](http_body_util::LengthLimitError). Bodies that decode to less than
/// `min_size` are never held to the ratio, so small, highly repetitive documents pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RatioLimit {
    /// The largest allowed ratio of decoded to compressed bytes.
    pub ratio: u32,
    /// How many frames in a row may exceed the ratio before the body is stopped.
    pub burst: u32,
    /// Decoded bytes below which the ratio is not checked.
    pub min_size: usize,
}

impl RatioLimit {
    /// Apache's defaults: ratio 200, burst 3, checked past 1 MiB of decoded data.
    pub(crate) const DEFAULT: RatioLimit = RatioLimit {
        ratio: 200,
        burst: 3,
        min_size: 1024 * 1024,
    };

    /// A ratio limit with the default minimum size (1 MiB; set
    /// [`min_size`](Self::min_size) for another).
    pub const fn new(ratio: u32, burst: u32) -> Self {
        RatioLimit {
            ratio,
            burst,
            min_size: Self::DEFAULT.min_size,
        }
    }

    /// Whether `decoded` bytes from `compressed` bytes exceed the ratio.
    pub(crate) fn exceeded(&self, decoded: u64, compressed: u64) -> bool {
        decoded >= self.min_size as u64 && decoded > compressed.saturating_mul(self.ratio.into())
    }
}

impl Default for RatioLimit {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Which limit a decoded body ran into, with its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tripped {
    /// More decoded bytes than [`DecompressionLimits::max_size`].
    Size(u64),
    /// More compressed bytes than [`DecompressionLimits::max_wire_size`].
    Wire(u64),
    /// A worse ratio than the [`RatioLimit`], frame after frame.
    Ratio(RatioLimit),
}

impl fmt::Display for Tripped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tripped::Size(max) => {
                write!(f, "the body decodes to more than {max} bytes (size limit)")
            }
            Tripped::Wire(max) => write!(
                f,
                "the body sends more than {max} compressed bytes (size limit)"
            ),
            Tripped::Ratio(r) => write!(
                f,
                "the body inflates past {}:1 after {} bytes (ratio limit)",
                r.ratio, r.min_size
            ),
        }
    }
}

/// Where a decoded body tells which limit it ran into, for the response to a request whose
/// body it is.
pub(crate) type TripReport = std::sync::Arc<std::sync::OnceLock<Tripped>>;

/// A boxed [`http_body_util::LengthLimitError`], the error axum maps to 413.
///
/// The type is `#[non_exhaustive]`, so it cannot be built outside its crate; the one way to
/// get one is to let [`Limited`] produce it. That happens synchronously (a [`Full`] body is
/// always ready), so a no-op waker suffices.
pub(crate) fn length_limit_error() -> BoxError {
    let mut body = Limited::new(Full::new(Bytes::from_static(b"!")), 0);
    let mut cx = Context::from_waker(Waker::noop());
    match Pin::new(&mut body).poll_frame(&mut cx) {
        Poll::Ready(Some(Err(err))) => err,
        _ => Box::new(LimitExceeded),
    }
}

/// Fallback for [`length_limit_error`] should `Limited` ever change its behaviour.
#[derive(Debug)]
struct LimitExceeded;

impl fmt::Display for LimitExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("decompressed body exceeds the configured limit")
    }
}

impl Error for LimitExceeded {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_error_downcasts() {
        assert!(length_limit_error().is::<http_body_util::LengthLimitError>());
    }

    #[test]
    fn ratio() {
        let r = RatioLimit::new(200, 3);
        assert!(!r.exceeded(1024 * 1024 - 1, 1));
        assert!(r.exceeded(1024 * 1024, 1));
        assert!(!r.exceeded(2_000_000, 10_000));
        assert!(r.exceeded(2_000_001, 10_000));
    }
}
