//! The kinds of state the codecs pool, from the codec list ([`families!`](super::families)),
//! and the pool's counters by kind.
//!
//! Each kind has its slot in every pool here; a codec's state type names its kind in its
//! [`PooledState`](crate::pool::PooledState) impl. Every kind is listed in every build: one
//! whose cargo feature is off stays at zero.

use super::families;
use crate::pool::{CodecPool, Kind, KindStats};

/// The kinds, from the list.
macro_rules! pool_kinds {
    ($(
        #[cfg($cfg:meta)] $variant:ident($folder:ident): $needs:ident [$($coding:ident),*]
        kinds { $( $(#[doc = $doc:literal])* $kind:ident = $name:literal, )* };
    )*) => {
        /// A kind of pooled codec state, as [`PoolStats::kind`] counts it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum PoolKind {
            $($( $(#[doc = $doc])* $kind, )*)*
        }

        impl PoolKind {
            /// Every kind, in the pool's order.
            const ALL: &'static [PoolKind] = &[$($(PoolKind::$kind,)*)*];

            /// The kind's name in reports and metrics (its `Display`).
            pub fn name(self) -> &'static str {
                match self {
                    $($( PoolKind::$kind => $name, )*)*
                }
            }
        }

        /// The kind's name in reports and metrics (`zstd_compressors`, ...).
        impl std::fmt::Display for PoolKind {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

families!(pool_kinds);

/// How many kinds there are.
const KINDS: usize = PoolKind::ALL.len();

impl PoolKind {
    /// The pool's handle for the kind: its slot and its name.
    pub(crate) const fn kind(self) -> Kind {
        Kind::new(self as usize)
    }
}

/// A snapshot of the pool's counters by kind, from [`CodecPool::stats`]. Kinds whose cargo
/// feature is off stay at zero.
///
/// ```
/// use tower_gzip_codecs::CodecPool;
/// use tower_gzip_codecs::pool::PoolKind;
///
/// let stats = CodecPool::new().stats();
/// assert_eq!(stats.kind(PoolKind::DeflateCompressors).in_use(), 0);
/// assert!(stats.kinds().any(|(kind, _)| kind.to_string() == "zstd_compressors"));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    kinds: [KindStats; KINDS],
    br_streams_active: usize,
    br_streams_waiting: usize,
}

impl PoolStats {
    /// The counters of one kind.
    pub fn kind(&self, kind: PoolKind) -> KindStats {
        self.kinds[kind as usize]
    }

    /// Every kind with its counters, in the pool's order.
    pub fn kinds(&self) -> impl Iterator<Item = (PoolKind, KindStats)> + '_ {
        PoolKind::ALL.iter().map(|&kind| (kind, self.kind(kind)))
    }

    /// States of every kind checked out now.
    pub fn in_use(&self) -> u64 {
        self.kinds.iter().map(KindStats::in_use).sum()
    }

    /// br streams holding an encoder now (at most
    /// [`CodecPoolBuilder::br_stream_limit`](crate::pool::CodecPoolBuilder::br_stream_limit)), and
    /// those waiting for their turn to draw one: `(active, waiting)`.
    pub fn br_streams(&self) -> (usize, usize) {
        (self.br_streams_active, self.br_streams_waiting)
    }
}

impl CodecPool {
    /// A snapshot of the counters.
    pub fn stats(&self) -> PoolStats {
        let (br_streams_active, br_streams_waiting) = self.turn_counts();
        PoolStats {
            kinds: std::array::from_fn(|i| self.kind_stats(PoolKind::ALL[i].kind())),
            br_streams_active,
            br_streams_waiting,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_own_slot_and_name() {
        for (i, a) in PoolKind::ALL.iter().enumerate() {
            assert_eq!(*a as usize, i);
            assert!(i < Kind::SLOTS);
            for b in &PoolKind::ALL[i + 1..] {
                assert_ne!(a.kind(), b.kind());
                assert_ne!(a.name(), b.name());
            }
        }
        let kinds: Vec<_> = PoolStats::default().kinds().map(|(k, _)| k).collect();
        assert_eq!(kinds, PoolKind::ALL);
    }
}
