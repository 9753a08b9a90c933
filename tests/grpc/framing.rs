//! The `grpc_framing` fuzz target's property (`fuzz/src/grpc.rs`, included), driven by
//! proptest with a fixed number of cases: the leading control byte reaches every encoding,
//! limit and mode (raw bytes, whole messages, one byte flipped, cut short).

#[path = "../../fuzz/src/grpc.rs"]
mod props;

use proptest::prelude::*;

/// Words, so that messages compress, or random bytes.
fn rest() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..600),
        proptest::collection::vec(0u8..4, 0..300).prop_map(|words| {
            let dict: [&[u8]; 4] = [b"alpha ", b"beta ", b"\x00\x00\x00\x01", b"{\"k\":1}"];
            words
                .iter()
                .flat_map(|&w| dict[usize::from(w)].iter().copied())
                .collect()
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn framing_holds(control in any::<u8>(), cut in any::<u8>(), rest in rest()) {
        let mut data = vec![control, cut];
        data.extend_from_slice(&rest);
        props::check_framing(&data);
    }
}
