use super::ContentCoding;
use crate::coding::CODINGS;
use crate::pool::Level;

/// The compression level, with tower-http's names and per-coding meaning.
///
/// | | gzip, deflate | zstd, dcz | br | dcb |
/// |---|---|---|---|---|
/// | `Fastest` | 1 | 1 | 0 | 5 |
/// | `Default` | 6 | 3 | 4 | **5** |
/// | `Best` | 9 | 22 | 11 | 11 |
/// | `Precise(n)` | `n` in 0..=9 | `n` in 1..=22 | `n` in 0..=11 | `n` in 5..=11 |
///
/// `dcb` differs from br on purpose: brotli ignores a dictionary below quality 5, so `dcb`'s
/// `Default` and `Fastest` are 5 and `Precise(n)` is never under 5. A layer's
/// `level` (tower-gzip's `CompressionLayer::level`) sets `dcz` and `dcb` apart from
/// zstd and br.
///
/// br `Best` (quality 11) is brotli's densest setting and far too slow for responses built
/// per request: on this crate's JSON benchmark it costs orders of magnitude more than
/// quality 4 (BENCHMARKS.md, "br"). Use it for static assets; the default (4) is what tower-http uses too.
/// zstd levels above 19 would ask for windows beyond 8 MiB; this crate caps the window
/// at 8 MiB (window log 23, RFC 9659) at every level, and their tables at level 19's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CompressionLevel {
    /// The fastest level of each coding.
    Fastest,
    /// The densest level of each coding.
    Best,
    /// Each coding's usual default (gzip/deflate 6, zstd 3, br 4).
    #[default]
    Default,
    /// An exact level, clamped to the coding's range.
    Precise(i32),
}

impl CompressionLevel {
    /// This level as `coding`'s own number (gzip's 1-9, zstd's 1-22, brotli's quality),
    /// clamped to the coding's range.
    pub fn native(self, coding: ContentCoding) -> u8 {
        self.resolve(coding).get()
    }

    /// This level for `coding`, clamped to the coding's range.
    pub(crate) fn resolve(self, coding: ContentCoding) -> Level {
        let levels = coding.levels();
        let level = match self {
            CompressionLevel::Fastest => levels.fastest,
            CompressionLevel::Default => levels.default,
            CompressionLevel::Best => levels.best,
            CompressionLevel::Precise(n) => n.clamp(levels.min, levels.max),
        };
        Level::new(level as u8)
    }
}

/// A level for each coding, as a layer is configured with: `quality(..)` sets them all,
/// `level(coding, ..)` one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Levels([CompressionLevel; CODINGS]);

impl Levels {
    /// `level` for every coding.
    pub fn all(level: CompressionLevel) -> Self {
        Levels([level; CODINGS])
    }

    /// Sets `coding`'s level.
    pub fn set(&mut self, coding: ContentCoding, level: CompressionLevel) {
        self.0[coding.index()] = level;
    }

    /// `coding`'s level.
    pub fn of(&self, coding: ContentCoding) -> CompressionLevel {
        self.0[coding.index()]
    }
}

impl Default for Levels {
    fn default() -> Self {
        Levels::all(CompressionLevel::Default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_clamped_per_coding() {
        for coding in ContentCoding::PLAIN {
            for n in [-5, 0, 1, 6, 9, 11, 22, 99] {
                let level = CompressionLevel::Precise(n).resolve(*coding);
                assert!(level.index() < Level::COUNT, "{coding:?} {n}");
            }
        }
        let gzip = |level: CompressionLevel| level.resolve(ContentCoding::Gzip).get();
        assert_eq!(gzip(CompressionLevel::Precise(42)), 9);
        assert_eq!(gzip(CompressionLevel::Precise(-3)), 0);
        assert_eq!(gzip(CompressionLevel::Default), 6);
    }
}
