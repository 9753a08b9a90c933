//! The cache's one promise, as a property: whatever the mix of bodies (look-alikes whose
//! fingerprints collide among them), codings, levels and dictionaries, served by several
//! threads at once while the worker recompresses, every answer decodes to the identity body
//! of the request that asked for it.

use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use proptest::prelude::*;

use crate::cache::{Lookup, Variant, VariantCache};
use crate::codec::OneShot;
use crate::dictionary::Dictionary;
use crate::{CompressionLevel, ContentCoding};

/// Bodies that share what the fingerprint samples: one base, twins differing in one byte
/// between the sampled words, and a shorter cut.
fn bodies() -> Vec<Bytes> {
    let base: String = (0..200)
        .map(|i| format!(r#"{{"id":{i},"name":"n{}","ok":{}}},"#, i % 17, i % 2 == 0))
        .collect();
    let base = base.into_bytes();
    let twin = |at: usize| {
        let mut twin = base.clone();
        twin[at] ^= 0x01;
        Bytes::from(twin)
    };
    let mid = base.len() / 2 + 5;
    vec![
        Bytes::from(base.clone()),
        twin(mid),
        twin(mid + 1),
        Bytes::copy_from_slice(&base[..base.len() - 64]),
    ]
}

/// Dictionaries for `dcz`/`dcb`: two, so an entry under one is never served under the other.
#[cfg(dictionary)]
fn dictionaries() -> Vec<Dictionary> {
    let make = |seed: u8| {
        let text: Vec<u8> = (0..1024u32)
            .flat_map(|i| {
                format!(r#""name":"n{}","ok":{},"#, (i + u32::from(seed)) % 23, seed).into_bytes()
            })
            .collect();
        Dictionary::new(text, None).unwrap()
    };
    vec![make(1), make(2)]
}

/// No dictionary coding is compiled in: none is asked for.
#[cfg(not(dictionary))]
fn dictionaries() -> Vec<Dictionary> {
    Vec::new()
}

/// One request: a body, a coding, a level and (for dictionary codings) a dictionary.
#[derive(Clone, Copy, Debug)]
struct Ask {
    body: usize,
    coding: usize,
    fast: bool,
    dictionary: usize,
}

fn asks() -> impl Strategy<Value = Vec<Ask>> {
    let ask = (
        0..4usize,
        0..ContentCoding::ALL.len(),
        any::<bool>(),
        0..2usize,
    )
        .prop_map(|(body, coding, fast, dictionary)| Ask {
            body,
            coding,
            fast,
            dictionary,
        });
    proptest::collection::vec(ask, 1..48)
}

/// Serves one ask as the layer does (a hit as it is; otherwise compressed, and filed when
/// the cache says so) and checks the answer decodes to the body asked for.
fn serve(cache: &VariantCache, bodies: &[Bytes], dictionaries: &[Dictionary], ask: Ask) {
    let coding = ContentCoding::ALL[ask.coding];
    let body = &bodies[ask.body];
    let level = match ask.fast {
        true => CompressionLevel::Fastest,
        false => CompressionLevel::Default,
    };
    let dictionary = coding
        .needs_dictionary()
        .then(|| &dictionaries[ask.dictionary]);
    let variant = Variant {
        coding,
        level: level.native(coding),
        dictionary: dictionary.map(|d| d.hash()),
    };
    let one_shot = OneShot::new(coding)
        .level(level)
        .against(dictionary.map(Dictionary::codec));
    let compress = || {
        let mut out = BytesMut::new();
        one_shot.encode(body, &mut out).unwrap();
        out
    };
    let wire = match cache.lookup(body, variant, dictionary) {
        Lookup::Hit(bytes) => bytes,
        Lookup::Miss(fill) => {
            let out = compress();
            cache.record(fill).whole(&out);
            out.freeze()
        }
        Lookup::Unseen => compress().freeze(),
    };
    let decoded = OneShot::new(coding)
        .against(dictionary.map(Dictionary::codec))
        .decode(&wire, 1 << 20)
        .unwrap();
    assert_eq!(decoded, body, "{ask:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn every_answer_decodes_to_the_body_asked_for(threads in proptest::collection::vec(asks(), 3)) {
        let cache = VariantCache::builder().recompress(Some(1.0)).build();
        let (bodies, dictionaries) = (Arc::new(bodies()), Arc::new(dictionaries()));
        let workers: Vec<_> = threads
            .into_iter()
            .map(|asks| {
                let (cache, bodies, dictionaries) = (cache.clone(), bodies.clone(), dictionaries.clone());
                std::thread::spawn(move || {
                    // Each list twice: the second round meets what the first filed.
                    for ask in asks.iter().chain(&asks) {
                        serve(&cache, &bodies, &dictionaries, *ask);
                    }
                })
            })
            .collect();
        for worker in workers {
            worker.join().unwrap();
        }
    }
}
