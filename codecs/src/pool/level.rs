//! The tag that keeps states of different levels apart.

/// The level a pooled state was made for, which tags its shelf: a state never serves
/// another level. Below [`Level::COUNT`], so it indexes a shelf without a range check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Level(u8);

impl Level {
    /// The most distinct levels any coding has (zstd: 1..=22, tagged by value).
    pub(crate) const COUNT: usize = 23;

    /// The tag of states that have no level (decompressors).
    pub(crate) const NONE: Level = Level(0);

    /// The level `n`, which the caller has clamped below [`Level::COUNT`].
    pub(crate) const fn new(n: u8) -> Self {
        Level(n)
    }

    pub(crate) fn get(self) -> u8 {
        self.0
    }

    pub(crate) fn index(self) -> usize {
        usize::from(self.0)
    }
}
