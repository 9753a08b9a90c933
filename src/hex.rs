//! Hex, as dictionary hashes are written in URLs, storage names and reports.

/// Lower-case hex.
pub(crate) fn encode(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// A SHA-256 written as 64 hex digits (either case).
#[cfg(feature = "learn")]
pub(crate) fn parse_sha256(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

#[cfg(all(test, feature = "learn"))]
mod tests {
    use super::*;

    #[test]
    fn round_trip_in_either_case() {
        let hash = [0xab; 32];
        assert_eq!(parse_sha256(&encode(&hash)), Some(hash));
        assert_eq!(parse_sha256(&encode(&hash).to_uppercase()), Some(hash));
        assert_eq!(parse_sha256(&encode(&hash[..31])), None);
        assert_eq!(parse_sha256(&"g".repeat(64)), None);
    }
}
