//! [`ToCompress`]: what a level chooser sees of one response (see
//! [`CompressionLayer::level_for`](super::CompressionLayer::level_for)).

use std::fmt;
use std::sync::Arc;

use http::{Extensions, HeaderMap, StatusCode};

use crate::CompressionLevel;
use crate::codec::ContentCoding;

/// One response the layer is about to compress, as a level chooser sees it: the coding
/// chosen for it, the level the layer would use, and the response's parts.
#[derive(Debug)]
pub struct ToCompress<'a> {
    pub(super) coding: ContentCoding,
    pub(super) level: CompressionLevel,
    pub(super) status: StatusCode,
    pub(super) headers: &'a HeaderMap,
    pub(super) extensions: &'a Extensions,
    pub(super) size: Option<u64>,
    pub(super) path: &'a str,
}

impl ToCompress<'_> {
    /// The coding negotiated (or `dcz`/`dcb` against the client's dictionary).
    pub fn coding(&self) -> ContentCoding {
        self.coding
    }

    /// The level the layer is configured with for this coding.
    pub fn level(&self) -> CompressionLevel {
        self.level
    }

    /// The response's status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The response's headers (`Content-Type`, ...).
    pub fn headers(&self) -> &HeaderMap {
        self.headers
    }

    /// The response's extensions (where a handler can leave a hint).
    pub fn extensions(&self) -> &Extensions {
        self.extensions
    }

    /// The body's size when known before it is read (`Content-Length` or an exact size
    /// hint).
    pub fn size(&self) -> Option<u64> {
        self.size
    }

    /// The request's path (no query).
    pub fn path(&self) -> &str {
        self.path
    }
}

/// A level chooser: the level for one response, or `None` to send it unencoded.
pub(crate) type ChooseLevel =
    Arc<dyn Fn(&ToCompress<'_>) -> Option<CompressionLevel> + Send + Sync + 'static>;

/// [`ChooseLevel`] in the settings, printable.
#[derive(Clone)]
pub(crate) struct LevelChooser(pub(crate) ChooseLevel);

impl fmt::Debug for LevelChooser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LevelChooser(..)")
    }
}
