//! The cache of compressed representations, end to end through the layer: what background
//! recompression buys on recorded traffic, and that nothing it holds reaches a client it
//! was not for.

mod never_larger;
#[cfg(all(feature = "zstd", feature = "br"))]
mod recompressed;
mod shared;
