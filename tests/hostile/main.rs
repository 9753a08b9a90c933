//! Hostile input, end to end over HTTP against real axum servers on loopback: malformed,
//! truncated, oversized and adversarial gzip and deflate bodies and headers (`flate`), and
//! zstd and br bodies in both directions, requests and responses (`zstd_br`). Every attack
//! must get its status (or the client its typed error), and the server must survive all of
//! them with its codec pool intact.

#[path = "../common/mod.rs"]
mod common;

mod flate;
#[cfg(any(feature = "zstd", feature = "br"))]
mod zstd_br;

/// `len` zeros with a random byte (from `common::noise` with this seed) every 64 bytes or
/// so: it compresses by tens to one in every coding, well under the ratio limit of 200:1, so
/// only the size limit can stop a large one.
fn noisy_zeros(len: usize, seed: u64) -> Vec<u8> {
    let noise = common::noise(len / 64 + 1, seed);
    let mut out = vec![0u8; len];
    for (i, b) in noise.iter().enumerate() {
        if let Some(slot) = out.get_mut(i * 64 + usize::from(*b % 64)) {
            *slot = *b;
        }
    }
    out
}
