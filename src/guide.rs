//! The crate's longer documents, shipped with it so that every link in the README reaches a
//! page a reader of the package has.

#[doc = include_str!("../docs/design.md")]
pub mod design {}

#[cfg(feature = "metrics")]
#[doc = include_str!("../docs/telemetry.md")]
pub mod telemetry {}

#[doc = include_str!("../BENCHMARKS.md")]
pub mod benchmarks {}
