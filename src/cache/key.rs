//! What a cached representation is filed under: a keyed BLAKE3 hash of the identity body and
//! everything else that changes the bytes. A fingerprint of a few sampled bytes comes first,
//! so a body seen once costs no full hash.

use std::hash::{BuildHasher, Hash, Hasher};

use crate::ContentCoding;

/// The process's secret hashing key: 128 bits from the OS through std's `RandomState`
/// (SipHash keys), spread over BLAKE3's 32-byte key. Unknown to a remote attacker, so no
/// crafted body can collide with another's key.
pub(crate) fn process_key() -> [u8; 32] {
    let random = std::collections::hash_map::RandomState::new();
    let mut key = [0u8; 32];
    for (i, word) in key.chunks_exact_mut(8).enumerate() {
        word.copy_from_slice(&random.hash_one(i as u64).to_le_bytes());
    }
    key
}

/// Everything a compressed representation depends on besides its identity body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Variant {
    pub(crate) coding: ContentCoding,
    /// The level the layer asked for (the entry may hold a denser one later).
    pub(crate) level: u8,
    /// The dictionary's SHA-256, for `dcz` and `dcb`.
    pub(crate) dictionary: Option<[u8; 32]>,
}

/// The secret validator keys are hashed with, derived from the bodies' one.
pub(crate) fn validator_key(secret: &[u8; 32]) -> [u8; 32] {
    blake3::derive_key("tower-gzip cache validator keys", secret)
}

/// A cache key: the identity body's keyed hash and its variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    body: [u8; 32],
    variant: Variant,
}

impl Key {
    /// The key of `body` under `variant`, hashed with `secret`.
    pub(crate) fn new(secret: &[u8; 32], body: &[u8], variant: Variant) -> Key {
        Key {
            body: *blake3::keyed_hash(secret, body).as_bytes(),
            variant,
        }
    }

    /// The key of a streamed response under `variant`: its validator's identity (scheme,
    /// authority, path and query, strong `ETag`), hashed with `secret` (the validator
    /// secret, not the bodies': the two kinds of keys cannot meet, whatever a body holds).
    pub(crate) fn validated(secret: &[u8; 32], identity: &[u8], variant: Variant) -> Key {
        Key {
            body: *blake3::keyed_hash(secret, identity).as_bytes(),
            variant,
        }
    }

    /// The key of a body whose digest is known already (a pinned body).
    pub(crate) fn from_digest(digest: [u8; 32], variant: Variant) -> Key {
        Key {
            body: digest,
            variant,
        }
    }

    /// The body's part of the key.
    pub(crate) fn digest(&self) -> [u8; 32] {
        self.body
    }

    /// What the entry's bytes are compressed with.
    pub(crate) fn variant(&self) -> Variant {
        self.variant
    }

    /// Which shard holds this key (the hash is uniform already).
    pub(crate) fn shard(&self, shards: usize) -> usize {
        let word = u64::from_le_bytes(self.body[..8].try_into().expect("8 bytes"));
        (word % shards as u64) as usize
    }
}

/// Bytes sampled for a fingerprint: both ends and this many evenly spaced words between.
const SAMPLES: usize = 32;
const ENDS: usize = 128;

/// A cheap, keyed summary of a body (its length, both ends, a few words between), only to
/// tell "surely never seen" from "maybe seen": bodies that share it pay a full hash, and
/// the full hash alone decides what is served.
pub(crate) fn fingerprint(random: &std::collections::hash_map::RandomState, body: &[u8]) -> u64 {
    let mut hasher = random.build_hasher();
    body.len().hash(&mut hasher);
    let ends = ENDS.min(body.len());
    hasher.write(&body[..ends]);
    hasher.write(&body[body.len() - ends..]);
    if body.len() > 2 * ENDS + 8 {
        let step = (body.len() - 8) / SAMPLES;
        for i in 0..SAMPLES {
            hasher.write(&body[i * step..i * step + 8]);
        }
    }
    hasher.finish()
}
