//! How a learned dictionary is named in the storage: everything an instance needs to use it
//! (the route's folder, its version, the levels it was built for, its SHA-256) in the name,
//! so that loading one is a `get` and checking it is a hash.

use crate::hex;

/// A learned dictionary's name, parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StoredName {
    pub(crate) version: u64,
    pub(crate) dcz_level: i32,
    /// 0 when it was built without `dcb`.
    pub(crate) dcb_quality: i32,
    pub(crate) hash: [u8; 32],
}

impl StoredName {
    /// `<route key>/v<version>-z<level>-b<quality>-<sha-256 hex>.dict`.
    pub(crate) fn to_name(self, key: &str) -> String {
        format!(
            "{key}/v{:010}-z{}-b{}-{}.dict",
            self.version,
            self.dcz_level,
            self.dcb_quality,
            hex::encode(&self.hash)
        )
    }

    /// The name's parts, if it is one of `key`'s dictionaries.
    pub(crate) fn parse(key: &str, name: &str) -> Option<StoredName> {
        let file = name.strip_prefix(key)?.strip_prefix('/')?;
        let stem = file.strip_suffix(".dict")?;
        let mut parts = stem.splitn(4, '-');
        let version = parts.next()?.strip_prefix('v')?.parse().ok()?;
        let dcz_level = parts.next()?.strip_prefix('z')?.parse().ok()?;
        let dcb_quality = parts.next()?.strip_prefix('b')?.parse().ok()?;
        let hash = hex::parse_sha256(parts.next()?)?;
        Some(StoredName {
            version,
            dcz_level,
            dcb_quality,
            hash,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_strangers_are_ignored() {
        let name = StoredName {
            version: 12,
            dcz_level: 6,
            dcb_quality: 5,
            hash: [0xab; 32],
        };
        let text = name.to_name("0123abcd");
        assert!(text.starts_with("0123abcd/v0000000012-z6-b5-abab"));
        assert_eq!(StoredName::parse("0123abcd", &text), Some(name));
        assert_eq!(StoredName::parse("ffff", &text), None);
        for stranger in [
            "0123abcd/notes.txt",
            "0123abcd/v1-z3-b5-00.dict",
            "0123abcd/vX-z3-b5-abab.dict",
            "0123abcd",
        ] {
            assert_eq!(StoredName::parse("0123abcd", stranger), None, "{stranger}");
        }
    }
}
