//! Bounded, deterministic versions of the fuzz targets in `fuzz/`: the same properties
//! (`fuzz/src/props.rs`, included here), driven by proptest with a fixed number of cases, so
//! regressions are caught in CI without a fuzzer.
//!
//! Each property takes raw bytes and derives its case from them (see `props.rs`); the
//! strategies below pick the leading control bytes so every mode is reached, and random
//! payloads for the rest.

#[path = "../../fuzz/src/props.rs"]
#[allow(dead_code)]
mod props;

use proptest::prelude::*;

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..max)
}

/// Compressible payloads (a few words, repeated) as well as random bytes.
fn payload(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        bytes(max),
        (proptest::collection::vec(0u8..8, 0..max / 8)).prop_map(|words| {
            let dict: [&[u8]; 8] = [
                b"alpha ",
                b"beta ",
                b"gamma\n",
                b"{\"k\":1}",
                b" ",
                b"zzzz",
                b"\x00\x01",
                b"e",
            ];
            words
                .iter()
                .flat_map(|&w| dict[usize::from(w)].iter().copied())
                .collect()
        }),
    ]
}

/// Accept-Encoding-like values: tokens, q-values and junk, joined by separators.
fn accept_encoding() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        Just(&b"gzip"[..]),
        Just(&b"GZip"[..]),
        Just(&b"x-gzip"[..]),
        Just(&b"deflate"[..]),
        Just(&b"identity"[..]),
        Just(&b"*"[..]),
        Just(&b"br"[..]),
        Just(&b"zstd"[..]),
        Just(&b"ZStd"[..]),
        Just(&b";q=0"[..]),
        Just(&b";q=0.5"[..]),
        Just(&b";q=1.000"[..]),
        Just(&b";q=1.5"[..]),
        Just(&b";Q=0.001"[..]),
        Just(&b";q="[..]),
        Just(&b"\""[..]),
        Just(&b","[..]),
        Just(&b", "[..]),
        Just(&b" \t"[..]),
        Just(&b"\xff"[..]),
    ];
    prop_oneof![
        proptest::collection::vec(token, 0..16).prop_map(|parts| parts.concat()),
        bytes(64),
    ]
}

fn content_encoding() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        Just(&b"gzip"[..]),
        Just(&b"X-GZIP"[..]),
        Just(&b"deflate"[..]),
        Just(&b"identity"[..]),
        Just(&b"br"[..]),
        Just(&b"zstd"[..]),
        Just(&b"compress"[..]),
        Just(&b""[..]),
        Just(&b" "[..]),
        Just(&b"\x80"[..]),
    ];
    proptest::collection::vec(token, 0..6).prop_map(|parts| parts.join(&b","[..]))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn negotiate_accept_encoding(value in accept_encoding()) {
        props::check_accept_encoding(&value);
    }

    #[test]
    fn negotiate_content_encoding(value in content_encoding(), body in bytes(64)) {
        props::check_content_encoding(&value, &body);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn decoder(control in any::<u8>(), params in bytes(13), payload in payload(4096)) {
        let mut data = vec![control];
        data.extend(params.iter().chain(std::iter::repeat(&0)).take(13));
        data.extend(payload);
        props::check_decoder(&data);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn roundtrip(control in any::<u8>(), params in bytes(10), payload in payload(2048)) {
        let mut data = vec![control];
        data.extend(params.iter().chain(std::iter::repeat(&0)).take(10));
        data.extend(payload);
        props::check_roundtrip(&data);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn request(control in any::<u8>(), params in bytes(15), payload in payload(2048)) {
        let mut data = vec![control];
        data.extend(params.iter().chain(std::iter::repeat(&0)).take(15));
        data.extend(payload);
        props::check_request(&data);
    }
}

/// Every coding and every mode of `check_request` (control bits: gzip/deflate, the mode,
/// then the next codings compiled in), with limits that let the body through, that stop it
/// at the size limit, and a ratio limit.
#[test]
fn request_every_coding_and_mode() {
    let text = b"hello hello hello, a request body of every kind ".repeat(40);
    for flate in [0u8, 1] {
        for other in 0..4u8 {
            for mode in 0..4u8 {
                let control = flate | mode << 1 | other << 3;
                // (max_size code: 64 KiB, 100 bytes; ratio code: none, 2:1 burst 0 from 0)
                for (size, ratio) in [([0u8, 0], 0u8), ([1 | 99 << 2, 0], 0), ([0, 0], 1 | 1 << 2)]
                {
                    for variant in [0u8, 1, 4 * 9] {
                        let mut data = vec![control, variant, 0, size[0], size[1], ratio];
                        data.extend([37, 0, 1, 7, 200, 3, 64, 255, 2, 9]);
                        data.extend_from_slice(&text);
                        props::check_request(&data);
                    }
                }
            }
        }
    }
}

/// A valid stream of every kind decodes, whatever the budget and splits. Control bytes 2 and 3
/// are gzip and deflate; 10 and 18 the next codings compiled in (zstd, br), gzip where absent.
#[test]
fn decoder_valid_streams_every_mode() {
    let text = b"hello hello hello, a valid stream of every kind ".repeat(40);
    for control in [2u8, 3, 2 | 1 << 3, 2 | 2 << 3] {
        for variant in 0..8u8 {
            for budget in [0u8, 1, 5] {
                let mut data = vec![control, variant, budget, 0, 0, 0];
                data.extend([1, 7, 200, 3, 64, 255, 2, 9]);
                data.extend_from_slice(&text);
                props::check_decoder(&data);
            }
        }
    }
}

/// Inputs the fuzz targets found, run again on every `cargo test`.
#[test]
fn fuzz_findings_stay_fixed() {
    // br quality 8, a 7-byte payload repeated 64 times in frames with pauses, through
    // request decompression: the round trip changed the bytes.
    props::check_roundtrip(&[
        0xb3, 0xeb, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0x17, 0xff, 0x17, 0xff, 0x17, 0x5a,
    ]);
    // br quality 5, events of 1-10 bytes with pauses: resumed from a two-byte history, the
    // encoder panicked on a match from the history's last byte (a one-byte copy).
    props::check_roundtrip(&[
        0xaa, 0xdf, 0xdf, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0xd6, 0xff, 0xff, 0xff, 0xba,
        0x00,
    ]);
}
