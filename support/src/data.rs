//! Deterministic test data: compressible text and incompressible noise.

/// Compressible text: JSON-ish lines, deterministic.
pub fn text(len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 64);
    let mut i = 0u64;
    while out.len() < len {
        out.extend_from_slice(
            format!("{{\"id\":{i},\"name\":\"item-{}\",\"ok\":true}}\n", i % 97).as_bytes(),
        );
        i += 1;
    }
    out.truncate(len);
    out
}

/// Incompressible bytes (xorshift64*), deterministic.
pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        out.extend_from_slice(&x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
    }
    out.truncate(len);
    out
}
