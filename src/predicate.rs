//! When to compress a response.
