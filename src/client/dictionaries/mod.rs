//! The client side of Compression Dictionary Transport (RFC 9842): learning dictionaries
//! from responses and offering them on later requests.
//!
//! [`DecompressionLayer::dictionaries`](crate::decompression::DecompressionLayer::dictionaries)
//! turns it on with a [`ClientDictionaryStore`]. Then, as Chromium does:
//!
//! - a `2xx` response to a `GET` with `Use-As-Dictionary` (a `match` URL pattern on the same
//!   origin) and a freshness lifetime is stored once its body has been read in full and
//!   decoded;
//! - a later request whose URL matches a fresh dictionary of its origin offers `dcz` and
//!   `dcb` in `Accept-Encoding` and names the dictionary in `Available-Dictionary` (and
//!   `Dictionary-ID`); a request that matches none goes out exactly as without the store;
//! - a `dcz` or `dcb` response is decoded with the offered dictionary, after checking that
//!   the hash in its header names it.

mod freshness;
mod link;
mod pattern;
mod store;
#[cfg(test)]
mod tests;

pub use link::linked_dictionaries;
pub(crate) use store::Candidate;
pub use store::{ClientDictionaryStats, ClientDictionaryStore, ClientDictionaryStoreBuilder};
