//! Group `response_dict/reddit`: the dictionary `DictionaryBuilder` chooses (its defaults)
//! from the training side of the recorded corpus's split
//! (`tower_gzip_support::corpus::recorded_split`), served through our layer for the 300
//! held-out bodies in turn, one response per iteration: `dcz_built` and `dcb_built` at the
//! chosen level and quality, beside plain `zstd` 3, `br` 4 and `br_same_quality` (br at
//! `dcb`'s quality). Setup prints each coding's bytes over the 300 bodies. Skipped when the
//! corpus is absent.

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use criterion::Criterion;
use tower::{Layer, service_fn};
use tower_gzip::compression::CompressionLayer;
use tower_gzip::dictionary::UseAsDictionary;
use tower_gzip::dictionary::{BuiltDictionary, Dictionary, DictionaryBuilder, DictionaryStore};
use tower_gzip::{CompressionLevel, ContentCoding};
use tower_gzip_support::corpus::{Recorded, recorded, recorded_split};

use super::support::{expect_coding, full_response, offering, respond};
use super::{configure, runtime};

/// The group (see the module's comment).
pub fn response_dict_recorded(c: &mut Criterion) {
    let Some(responses) = recorded() else {
        return;
    };
    let split = recorded_split(&responses);
    let built = build(&split.training);
    let quality = built.dcb_quality.expect("dcb is compiled in");
    let dictionary = Dictionary::new(built.bytes, UseAsDictionary::new("/*")).unwrap();
    let store = DictionaryStore::new(4 << 20);
    store.insert(dictionary.clone());
    let bodies: Arc<Vec<Bytes>> = Arc::new(
        split
            .held_out
            .iter()
            .map(|r| Bytes::from(r.body.clone()))
            .collect(),
    );
    let rt = runtime();
    let mut group = configure(c, "response_dict/reddit", 4096);
    for (name, coding, level) in [
        ("zstd", ContentCoding::Zstd, 3),
        ("dcz_built", ContentCoding::Dcz, built.dcz_level),
        ("br", ContentCoding::Br, 4),
        ("br_same_quality", ContentCoding::Br, quality),
        ("dcb_built", ContentCoding::Dcb, quality),
    ] {
        let with_dictionary = matches!(coding, ContentCoding::Dcz | ContentCoding::Dcb);
        let codings = [coding];
        let next = Arc::new(AtomicUsize::new(0));
        let served = bodies.clone();
        let svc = CompressionLayer::new()
            .level(coding, CompressionLevel::Precise(level))
            // Every held-out body is compressed: some are under the default floor.
            .min_size(0)
            .dictionaries(store.clone())
            .dictionary_codings(&codings[..usize::from(with_dictionary)])
            .layer(service_fn(move |_| {
                let i = next.fetch_add(1, Ordering::Relaxed) % served.len();
                full_response(served[i].clone())
            }));
        let accept = coding.as_str();
        let request = || offering(accept, dictionary.available_dictionary());
        let bytes: usize = (0..bodies.len())
            .map(|_| rt.block_on(expect_coding(&svc, request(), accept)))
            .sum();
        eprintln!(
            "response_dict/reddit/{name} (level {level}): {bytes} bytes for {} bodies",
            bodies.len()
        );
        group.bench_function(name, |b| {
            b.iter(|| black_box(rt.block_on(respond(&svc, request()))))
        });
    }
    group.finish();
}

/// The builder's choice (its defaults) from the training side, printed.
fn build(training: &[&Recorded]) -> BuiltDictionary {
    let training: Vec<&[u8]> = training.iter().map(|r| r.body.as_slice()).collect();
    let built = DictionaryBuilder::new(&training)
        .build()
        .expect("a dictionary");
    eprintln!(
        "response_dict/reddit: built {} B ({:?}), dcz {}, dcb {:?}, served {} B",
        built.bytes.len(),
        built.kind,
        built.dcz_level,
        built.dcb_quality,
        built.served_len
    );
    built
}
