//! Hex, as dictionary hashes are written in URLs, storage names and reports.

/// Lower-case hex.
pub(crate) fn encode(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}
