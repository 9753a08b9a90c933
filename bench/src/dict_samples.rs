//! The API-like JSON the dictionary measuring programs (`dict_gains`, `dcb_costs`,
//! `dict_prepared_size`) train on and compress: the same generator, and so the same bytes,
//! as the crate's dictionary unit tests (the support crate's `samples`).

use tower_gzip::dictionary::Dictionary;
use tower_gzip::dictionary::UseAsDictionary;

pub use tower_gzip_support::json_samples;

/// A dictionary of `bytes` for every path (`match="/*"`).
pub fn dictionary(bytes: impl Into<bytes::Bytes>) -> Dictionary {
    Dictionary::new(bytes, UseAsDictionary::new("/*")).unwrap()
}
