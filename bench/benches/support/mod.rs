//! What the benches add to the support crate's workloads: the crate's own types (levels,
//! dictionaries) beside tower-http's.
#![allow(dead_code)]

pub use tower_gzip_support::bench::*;

/// Our level and tower-http's for a deflate level the benches use (6, or 1 for fastest).
pub fn levels(level: u32) -> (tower_gzip::CompressionLevel, tower_http::CompressionLevel) {
    match level {
        1 => (
            tower_gzip::CompressionLevel::Fastest,
            tower_http::CompressionLevel::Fastest,
        ),
        _ => (
            tower_gzip::CompressionLevel::Default,
            tower_http::CompressionLevel::Default,
        ),
    }
}

/// A 16 KiB dictionary trained on 400 responses of the [`json`] API numbered from 10^6
/// (records the measured bodies, numbered from 0, do not contain), and a store holding it.
#[cfg(feature = "dcz")]
pub fn trained_dictionary() -> (
    tower_gzip::dictionary::Dictionary,
    tower_gzip::dictionary::DictionaryStore,
) {
    use tower_gzip::dictionary::UseAsDictionary;
    use tower_gzip::dictionary::{Dictionary, DictionaryStore};
    use tower_gzip_support::samples::train;
    let samples = dictionary_samples();
    let trained = train(&samples, 16 * 1024).expect("training");
    let dictionary = Dictionary::new(trained, UseAsDictionary::new("/*")).unwrap();
    let store = DictionaryStore::new(1 << 20);
    store.insert(dictionary.clone());
    (dictionary, store)
}

/// The dictionary `DictionaryBuilder` chooses from the same 400 responses as
/// [`trained_dictionary`], a store holding it, and the `dcz` level and `dcb` quality it chose.
#[cfg(all(feature = "dcz", feature = "dcb"))]
pub fn built_dictionary() -> (
    tower_gzip::dictionary::Dictionary,
    tower_gzip::dictionary::DictionaryStore,
    i32,
    i32,
) {
    use tower_gzip::dictionary::UseAsDictionary;
    use tower_gzip::dictionary::{Dictionary, DictionaryBuilder, DictionaryStore};
    let samples = dictionary_samples();
    let built = DictionaryBuilder::new(&samples)
        .build()
        .expect("a dictionary");
    let dcb_quality = built.dcb_quality.expect("dcb is compiled in");
    let dictionary = Dictionary::new(built.bytes, UseAsDictionary::new("/*")).unwrap();
    let store = DictionaryStore::new(1 << 20);
    store.insert(dictionary.clone());
    (dictionary, store, built.dcz_level, dcb_quality)
}
