//! The one name for a content coding, and sets of them.
//!
//! Every layer, codec and counter of this crate speaks [`ContentCoding`]. Every variant
//! exists in every build; [`ContentCoding::ALL`] lists those whose cargo feature is on, and
//! only those are negotiated, parsed from headers or decoded.

/// A content coding this crate speaks (the `Content-Encoding` / `Accept-Encoding` tokens).
///
/// Every variant exists whatever the cargo features; a coding whose feature is off is never
/// negotiated nor read from a header, and an encoder or decoder asked for it is refused with
/// an error.
///
/// ```
/// use tower_gzip_codecs::ContentCoding;
///
/// assert_eq!(ContentCoding::from_token(" X-GZIP "), Some(ContentCoding::Gzip));
/// assert_eq!(ContentCoding::Gzip.as_str(), "gzip");
/// assert!(ContentCoding::Dcz.needs_dictionary());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ContentCoding {
    /// `zstd`: Zstandard frames (RFC 8878), with a window of at most 8 MiB (RFC 9659).
    Zstd,
    /// `br`: a Brotli stream (RFC 7932).
    Br,
    /// `gzip` (and its alias `x-gzip`): RFC 1952 members.
    Gzip,
    /// `deflate`: a zlib stream (RFC 1950). The decoder also accepts raw deflate
    /// (RFC 1951), which many clients send under this name.
    Deflate,
    /// `dcz`: zstd with a dictionary the client holds, as raw content (RFC 9842).
    Dcz,
    /// `dcb`: Brotli with a dictionary the client holds, as a prefix (RFC 9842).
    Dcb,
}

impl ContentCoding {
    /// Every coding compiled in: the plain ones in tower-http's order of preference when
    /// q-values tie (zstd, br, gzip, deflate), then the dictionary codings.
    pub const ALL: &'static [ContentCoding] = &COMPILED;

    /// The codings compiled in that need no dictionary, in [`ALL`](Self::ALL)'s order.
    pub const PLAIN: &'static [ContentCoding] = Self::ALL.split_at(PLAIN_COUNT).0;

    /// The codings compiled in that need a dictionary (`dcz`, `dcb`).
    pub const DICTIONARY: &'static [ContentCoding] = Self::ALL.split_at(PLAIN_COUNT).1;

    /// Whether the coding's cargo feature is on.
    pub fn is_compiled(self) -> bool {
        self.row().compiled
    }

    /// The token used in `Content-Encoding`.
    pub fn as_str(self) -> &'static str {
        self.row().token
    }

    /// The coding a token names (case-insensitive, surrounding whitespace ignored; `x-gzip`
    /// is gzip), if it is compiled in.
    pub fn from_token(token: &str) -> Option<ContentCoding> {
        Self::from_token_bytes(token.as_bytes())
    }

    /// [`from_token`](Self::from_token) for a token read from a header as bytes.
    pub fn from_token_bytes(token: &[u8]) -> Option<ContentCoding> {
        let token = token.trim_ascii();
        if token.eq_ignore_ascii_case(b"x-gzip") {
            return Some(ContentCoding::Gzip);
        }
        Self::ALL
            .iter()
            .copied()
            .find(|coding| token.eq_ignore_ascii_case(coding.as_str().as_bytes()))
    }

    /// Whether the coding compresses against a dictionary the peer holds (RFC 9842).
    pub fn needs_dictionary(self) -> bool {
        self.base() != self
    }

    /// The coding underneath: zstd for `dcz`, br for `dcb`, the coding itself otherwise.
    pub fn base(self) -> ContentCoding {
        self.row().base
    }

    /// Whether a stream of this coding can give its codec state back between slices and
    /// events and take it again (a deflate window, a zstd context). br cannot: its streams
    /// take turns for an encoder and keep it, so a layer may prefer another coding for
    /// streams that pause.
    pub fn releases_state(self) -> bool {
        self.row().releases_state
    }

    /// The coding's compression levels.
    pub(crate) fn levels(self) -> LevelRange {
        self.row().levels
    }

    /// A small index, distinct per coding, for per-coding tables (below [`CODINGS`]).
    pub fn index(self) -> usize {
        self as usize
    }

    fn row(self) -> &'static Row {
        &TABLE[self.index()]
    }
}

/// One line per coding, in the enum's order (which is [`ContentCoding::ALL`]'s): the coding,
/// its token, the coding it is built on, its levels, whether its streams can release their
/// state between slices, and whether its cargo feature is on.
struct Row {
    coding: ContentCoding,
    token: &'static str,
    base: ContentCoding,
    levels: LevelRange,
    releases_state: bool,
    compiled: bool,
}

use ContentCoding::{Br, Dcb, Dcz, Deflate, Gzip, Zstd};

/// Whether a coding's streams can release their state between slices.
const RELEASES: bool = true;
const HOLDS: bool = false;

#[rustfmt::skip]
const TABLE: [Row; 6] = [
    Row { coding: Zstd,    token: "zstd",    base: Zstd,    levels: ZSTD_LEVELS,    releases_state: RELEASES, compiled: cfg!(feature = "zstd") },
    Row { coding: Br,      token: "br",      base: Br,      levels: BR_LEVELS,      releases_state: HOLDS,    compiled: cfg!(feature = "br") },
    Row { coding: Gzip,    token: "gzip",    base: Gzip,    levels: DEFLATE_LEVELS, releases_state: RELEASES, compiled: true },
    Row { coding: Deflate, token: "deflate", base: Deflate, levels: DEFLATE_LEVELS, releases_state: RELEASES, compiled: true },
    Row { coding: Dcz,     token: "dcz",     base: Zstd,    levels: ZSTD_LEVELS,    releases_state: RELEASES, compiled: cfg!(feature = "dcz") },
    Row { coding: Dcb,     token: "dcb",     base: Br,      levels: DCB_LEVELS,     releases_state: HOLDS,    compiled: cfg!(feature = "dcb") },
];

/// The codings compiled in, in the table's order.
const COMPILED: [ContentCoding; count(false)] = {
    let mut compiled = [Gzip; count(false)];
    let (mut i, mut n) = (0, 0);
    while i < TABLE.len() {
        if TABLE[i].compiled {
            compiled[n] = TABLE[i].coding;
            n += 1;
        }
        i += 1;
    }
    compiled
};

/// Of the codings compiled in, how many need no dictionary (they come first).
const PLAIN_COUNT: usize = count(true);

/// How many codings are compiled in (`plain_only`: of those that need no dictionary).
const fn count(plain_only: bool) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < TABLE.len() {
        let row = &TABLE[i];
        let plain = row.base as usize == row.coding as usize;
        if row.compiled && (plain || !plain_only) {
            n += 1;
        }
        i += 1;
    }
    n
}

/// A coding's levels: the fastest, the default, the densest, and the range `Precise` is
/// clamped to.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LevelRange {
    pub(crate) fastest: i32,
    pub(crate) default: i32,
    pub(crate) best: i32,
    pub(crate) min: i32,
    pub(crate) max: i32,
}

const DEFLATE_LEVELS: LevelRange = LevelRange::new(1, 6, 9, 0, 9);
// Best is 22, as tower-http's: the encoder caps its window at RFC 9659's 8 MiB and its
// tables at level 19's.
const ZSTD_LEVELS: LevelRange = LevelRange::new(1, 3, 22, 1, 22);
const BR_LEVELS: LevelRange = LevelRange::new(0, 4, 11, 0, 11);
/// brotli ignores a dictionary below quality 5, so `dcb` never goes under it.
const DCB_LEVELS: LevelRange = LevelRange::new(5, 5, 11, 5, 11);

impl LevelRange {
    const fn new(fastest: i32, default: i32, best: i32, min: i32, max: i32) -> Self {
        LevelRange {
            fastest,
            default,
            best,
            min,
            max,
        }
    }
}

/// How many codings there are: the bound of [`ContentCoding::index`].
pub const CODINGS: usize = TABLE.len();

/// A set of codings: which a layer offers, sends or decodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodingSet(u8);

impl CodingSet {
    /// No coding.
    pub const EMPTY: CodingSet = CodingSet(0);

    /// The plain codings compiled in.
    pub fn plain() -> Self {
        Self::of(ContentCoding::PLAIN)
    }

    /// The codings listed.
    pub(crate) fn of(codings: &[ContentCoding]) -> Self {
        let mut set = CodingSet::EMPTY;
        for coding in codings {
            set.set(*coding, true);
        }
        set
    }

    /// Whether `coding` is in the set.
    pub fn contains(self, coding: ContentCoding) -> bool {
        self.0 & 1 << coding.index() != 0
    }

    /// Puts `coding` in the set, or takes it out.
    pub fn set(&mut self, coding: ContentCoding, on: bool) {
        if on {
            self.0 |= 1 << coding.index();
        } else {
            self.0 &= !(1 << coding.index());
        }
    }

    /// The codings in the set, in [`ContentCoding::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = ContentCoding> {
        ContentCoding::ALL
            .iter()
            .copied()
            .filter(move |c| self.contains(*c))
    }

    /// A number below `1 << CODINGS`, distinct per set, for per-set tables.
    pub fn bits(self) -> usize {
        usize::from(self.0)
    }

    /// The set whose [`bits`](Self::bits) are `bits`.
    pub fn from_bits(bits: usize) -> Self {
        CodingSet((bits & ((1 << CODINGS) - 1)) as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_follows_the_enum() {
        for (i, coding) in ContentCoding::ALL.iter().enumerate() {
            assert!(coding.index() < CODINGS, "{coding:?}");
            assert_eq!(
                ContentCoding::from_token(coding.as_str()),
                Some(*coding),
                "{i}"
            );
            assert_eq!(coding.base().base(), coding.base());
        }
        // Every row is a coding, in the enum's order; those compiled in make up ALL.
        for (i, row) in TABLE.iter().enumerate() {
            assert_eq!(row.coding.index(), i);
            assert_eq!(ContentCoding::ALL.contains(&row.coding), row.compiled);
        }
        assert_eq!(
            ContentCoding::PLAIN.len() + ContentCoding::DICTIONARY.len(),
            ContentCoding::ALL.len()
        );
        assert!(ContentCoding::PLAIN.iter().all(|c| !c.needs_dictionary()));
        assert!(
            ContentCoding::DICTIONARY
                .iter()
                .all(|c| c.needs_dictionary())
        );
    }

    #[test]
    fn tokens_are_case_insensitive_and_trimmed() {
        assert_eq!(ContentCoding::from_token("GZip"), Some(ContentCoding::Gzip));
        assert_eq!(
            ContentCoding::from_token(" x-gzip"),
            Some(ContentCoding::Gzip)
        );
        assert_eq!(
            ContentCoding::from_token("deflate "),
            Some(ContentCoding::Deflate)
        );
        assert_eq!(ContentCoding::from_token("identity"), None);
        assert_eq!(ContentCoding::from_token("compress"), None);
        assert_eq!(ContentCoding::from_token(""), None);
    }

    #[test]
    fn sets_hold_what_was_put_in() {
        let mut set = CodingSet::EMPTY;
        set.set(ContentCoding::Deflate, true);
        set.set(ContentCoding::Gzip, true);
        assert_eq!(
            set.iter().collect::<Vec<_>>(),
            [ContentCoding::Gzip, ContentCoding::Deflate]
        );
        set.set(ContentCoding::Gzip, false);
        assert!(!set.contains(ContentCoding::Gzip));
        assert_eq!(CodingSet::from_bits(set.bits()), set);
        assert_eq!(
            CodingSet::of(ContentCoding::ALL).iter().count(),
            ContentCoding::ALL.len()
        );
        assert_eq!(
            CodingSet::plain().iter().count(),
            ContentCoding::PLAIN.len()
        );
    }
}
