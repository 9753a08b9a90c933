//! The shared, bounded pool of codec states every layer draws from, and its statistics:
//! [`CodecPool`] (also at the crate root), its builder and counters by kind.

pub use tower_gzip_codecs::CodecPool;
pub(crate) use tower_gzip_codecs::pool::YieldSlot;
pub use tower_gzip_codecs::pool::{CodecPoolBuilder, KindStats, PoolKind, PoolStats};
