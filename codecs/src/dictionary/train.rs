//! Training a dictionary from sample bodies with zstd's trainer (`ZDICT_trainFromBuffer`).
//!
//! The result starts with zstd's dictionary magic (`37 a4 30 ec`) and a header of entropy
//! tables; [`Dictionary`] still uses all of it as raw content, as RFC 9842
//! clients do, so the header bytes are just a little less useful content. The trainer is
//! deterministic: the same samples give the same bytes, so every server of a deploy that
//! trains on the same corpus serves the same dictionary (and hash).

use bytes::Bytes;

use super::DictionaryError;
use super::MAX_DICTIONARY_LEN;

/// The most sample bytes accepted: zstd's trainer works in memory, on 32-bit offsets.
const MAX_SAMPLES_LEN: usize = 1 << 30;

/// Trains a dictionary of at most `max_size` bytes on `samples` (typical response bodies,
/// each one sample; a few hundred or more work best, zstd suggests ~100x the dictionary
/// size in total).
///
/// Fails with [`DictionaryError::Training`] when zstd's trainer refuses the samples (too
/// few, too small or too uniform), and [`DictionaryError::Empty`] or
/// [`DictionaryError::TooLarge`] for a `max_size` of zero or over
/// 128 MiB.
pub fn train<S: AsRef<[u8]>>(samples: &[S], max_size: usize) -> Result<Bytes, DictionaryError> {
    if max_size == 0 {
        return Err(DictionaryError::Empty);
    }
    if max_size > MAX_DICTIONARY_LEN {
        return Err(DictionaryError::TooLarge {
            len: max_size as u64,
        });
    }
    let total: usize = samples.iter().map(|s| s.as_ref().len()).sum();
    if total > MAX_SAMPLES_LEN {
        return Err(DictionaryError::Training(format!(
            "{total} sample bytes are over the {MAX_SAMPLES_LEN} byte limit"
        )));
    }
    let mut buffer = Vec::with_capacity(total);
    let mut sizes = Vec::with_capacity(samples.len());
    for sample in samples {
        buffer.extend_from_slice(sample.as_ref());
        sizes.push(sample.as_ref().len());
    }
    let mut dictionary = Vec::with_capacity(max_size);
    zstd_safe::train_from_buffer(&mut dictionary, &buffer, &sizes)
        .map_err(|code| DictionaryError::Training(zstd_safe::get_error_name(code).to_owned()))?;
    if dictionary.is_empty() {
        return Err(DictionaryError::Training(
            "zstd made an empty dictionary".into(),
        ));
    }
    Ok(Bytes::from(dictionary))
}

#[cfg(all(test, feature = "dcb"))] // the samples live in the tests of both codings
mod tests {
    use super::*;
    use crate::dictionary::tests::json_samples;

    #[test]
    fn training_is_deterministic() {
        let samples = json_samples(600, 1);
        let a = train(&samples, 8 * 1024).unwrap();
        let b = train(&samples, 8 * 1024).unwrap();
        assert_eq!(a, b);
        assert!(a.len() <= 8 * 1024 && a.len() > 1024, "{}", a.len());
        assert_eq!(
            &a[..4],
            &[0x37, 0xa4, 0x30, 0xec],
            "zstd's dictionary magic"
        );
        let other = train(&json_samples(600, 2), 8 * 1024).unwrap();
        assert_ne!(a, other);
    }

    #[test]
    fn bad_training_input_is_a_typed_error() {
        assert!(matches!(
            train(&[b"x"], 1024),
            Err(DictionaryError::Training(_))
        ));
        let none: [&[u8]; 0] = [];
        assert!(matches!(
            train(&none, 1024),
            Err(DictionaryError::Training(_))
        ));
        assert!(matches!(train(&[b"x"], 0), Err(DictionaryError::Empty)));
        assert!(matches!(
            train(&[b"x"], MAX_DICTIONARY_LEN + 1),
            Err(DictionaryError::TooLarge { .. })
        ));
    }
}
