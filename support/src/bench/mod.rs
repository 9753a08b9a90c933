//! What the benches and the measuring programs drive: workloads and the codec floors.

pub mod floors;
pub mod workload;

pub use floors::*;
pub use workload::*;
