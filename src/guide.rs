// The crate's longer documents, shipped with it so that every link in the README reaches a
// page a reader of the package has: one page, a chapter each.
#![doc = include_str!("../docs/design.md")]
#![doc = "\n\n"]
#![cfg_attr(feature = "metrics", doc = include_str!("../docs/telemetry.md"))]
#![doc = "\n\n"]
#![doc = include_str!("../BENCHMARKS.md")]
