//! Server side: decoding request bodies.

mod body;
mod future;
mod layer;
mod service;

pub use body::RequestDecompressionResponseBody;
pub use future::RequestDecompressionFuture;
pub use layer::RequestDecompressionLayer;
pub use service::RequestDecompression;
