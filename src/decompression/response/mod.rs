//! Client side: decoding response bodies.

mod future;
mod layer;
mod service;

pub use future::ResponseFuture;
pub use layer::DecompressionLayer;
pub use service::Decompression;
