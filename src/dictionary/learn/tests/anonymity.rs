//! What k-anonymity keeps: only runs enough clients were sent, whatever the builder then
//! makes of them (trained and raw candidates alike).

use bytes::Bytes;
use proptest::prelude::*;

use crate::dictionary::build::candidate_bytes;
use crate::dictionary::learn::Anonymity;

/// A 24-character token drawn from `state` (splitmix64): as random as a session id.
fn token(state: &mut u64) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    (0..24)
        .map(|_| {
            *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = *state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ALPHABET[((z ^ (z >> 31)) % ALPHABET.len() as u64) as usize] as char
        })
        .collect()
}

/// API JSON alike across clients (shared keys, a small shared vocabulary of values), some
/// clients' responses carrying their own token, some pairs of clients sharing one (fewer
/// than `k`). Returns the samples and every token that must stay out.
fn corpus(seed: u64, clients: u64, per_client: u64) -> (Vec<(u64, Bytes)>, Vec<String>) {
    let mut state = seed;
    let own: Vec<String> = (0..clients).map(|_| token(&mut state)).collect();
    let pairs: Vec<String> = (0..clients / 2).map(|_| token(&mut state)).collect();
    let mut samples = Vec::new();
    for c in 0..clients {
        for r in 0..per_client {
            let n = (c * 7 + r * 13) % 5;
            let mut body = format!(
                "{{\"kind\":\"Listing\",\"data\":{{\"after\":\"t3_{n}\",\"dist\":{n},\"children\":[{{\"kind\":\"t3\",\"data\":{{\"subreddit\":\"rust\",\"score\":{},\"over_18\":false}}}}]",
                r % 3
            );
            if c % 2 == 0 {
                body.push_str(&format!(
                    ",\"session\":\"{}\",\"modhash\":\"{}\"",
                    own[c as usize], own[c as usize]
                ));
            }
            if c % 3 == 0 {
                body.push_str(&format!(
                    ",\"pair\":\"{}\"",
                    pairs[(c / 2) as usize % pairs.len().max(1)]
                ));
            }
            body.push_str("}}");
            samples.push((c, Bytes::from(body)));
        }
    }
    let secrets = own.into_iter().chain(pairs).collect();
    (samples, secrets)
}

/// The shortest piece of a secret that may not appear: 8 random characters of 62 match
/// anything else by chance with odds of 1 in 2 × 10^14.
const PIECE: usize = 8;

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    #[test]
    fn no_dictionary_holds_what_fewer_than_k_clients_were_sent(
        seed in any::<u64>(),
        clients in 6u64..12,
        per_client in 3u64..6,
    ) {
        let (samples, secrets) = corpus(seed, clients, per_client);
        let fragments = Anonymity::new(3, 16).fragments(&samples);
        let training: Vec<&[u8]> = fragments.iter().map(|f| &f[..]).collect();
        let candidates = candidate_bytes(&training, 4 << 10);
        prop_assert!(!candidates.is_empty(), "the common content makes candidates");
        for (kind, bytes) in &candidates {
            for secret in &secrets {
                for piece in secret.as_bytes().windows(PIECE) {
                    prop_assert!(
                        !bytes.windows(PIECE).any(|w| w == piece),
                        "{kind:?} holds {:?} of {secret}", std::str::from_utf8(piece)
                    );
                }
            }
        }
    }
}

#[test]
fn only_runs_from_k_clients_are_kept() {
    let common = b"{\"kind\":\"Listing\",\"children\":[]}".to_vec();
    let sample = |c: u64, tail: &str| {
        let mut body = common.clone();
        body.extend_from_slice(tail.as_bytes());
        (c, Bytes::from(body))
    };
    // Client 0 sends its value three times: one client, however often, is one.
    let samples = vec![
        sample(0, "only-zero-sees-this"),
        sample(0, "only-zero-sees-this"),
        sample(0, "only-zero-sees-this"),
        sample(1, ""),
        sample(2, ""),
    ];
    let kept = Anonymity::new(3, 8).fragments(&samples);
    assert_eq!(kept.len(), 5);
    assert!(kept.iter().all(|f| f[..] == common[..]), "{kept:?}");
    // Two clients are not enough for k = 3; everything is for k = 1.
    assert!(Anonymity::new(3, 8).fragments(&samples[..4]).is_empty());
    let all = Anonymity::new(1, 1).fragments(&samples);
    assert_eq!(
        all.iter().map(Bytes::len).sum::<usize>(),
        samples.iter().map(|s| s.1.len()).sum::<usize>()
    );
}

#[test]
fn short_and_empty_samples_and_gaps_are_handled() {
    let samples: Vec<(u8, Bytes)> = vec![
        (0, Bytes::new()),
        (1, Bytes::from_static(b"abc")),
        (2, Bytes::from_static(b"0123456789 x 0123456789")),
        (3, Bytes::from_static(b"0123456789 y 0123456789")),
        (4, Bytes::from_static(b"0123456789 z 0123456789")),
    ];
    let kept = Anonymity::new(3, 4).fragments(&samples);
    // Each sample: its two runs of digits (and the space after or before), not its letter.
    assert_eq!(kept.len(), 6);
    assert!(
        kept.iter().all(|f| !f.contains(&b'x') && f.len() >= 4),
        "{kept:?}"
    );
    assert!(Anonymity::new(3, 100).fragments(&samples).is_empty());
    assert_eq!(Anonymity::new(0, 0), Anonymity::new(1, 1));
}
