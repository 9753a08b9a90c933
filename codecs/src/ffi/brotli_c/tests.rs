//! The safe API over C brotli: round trips with and without a prepared dictionary, the
//! lifetimes it promises (a dictionary outlives the encoders using it, blocks go back to
//! the arena), and a decoder that errs on bad input and never writes past its budget.

use std::sync::Arc;

use bytes::{Bytes, BytesMut};

use super::{Decoder, Encoder, Failure, Operation, Params, PreparedDictionary, Stop};

fn text(n: usize, seed: u32) -> Vec<u8> {
    (0..n as u32)
        .flat_map(|i| format!("{{\"id\":{},\"name\":\"user {}\"}},", i ^ seed, i % 97).into_bytes())
        .take(n)
        .collect()
}

fn params(quality: u32, size_hint: Option<usize>) -> Params {
    Params {
        quality,
        lgwin: 18,
        size_hint,
    }
}

/// Decodes a whole stream with `budget` bytes per call.
fn decode(dictionary: Option<&Bytes>, wire: &[u8], budget: usize) -> Result<Vec<u8>, Failure> {
    let mut decoder = Decoder::new(dictionary, 1 << 20)?;
    let mut out = BytesMut::new();
    let mut rest = wire;
    loop {
        let before = out.len();
        let mut room = budget;
        let (consumed, stop) = decoder.decode(rest, &mut out, &mut room);
        assert!(out.len() - before <= budget, "past the budget");
        rest = &rest[consumed..];
        match stop? {
            Stop::End if rest.is_empty() => return Ok(out.to_vec()),
            Stop::End => return Err(Failure::Corrupt(0)),
            Stop::Input if rest.is_empty() => return Err(Failure::Corrupt(1)),
            _ => {}
        }
    }
}

fn encode(
    encoder: &mut Encoder,
    dictionary: Option<Arc<PreparedDictionary>>,
    body: &[u8],
) -> BytesMut {
    encoder
        .start(params(5, Some(body.len())), dictionary)
        .unwrap();
    let mut wire = BytesMut::new();
    encoder
        .compress(Operation::Finish, body, &mut wire)
        .unwrap();
    assert!(encoder.is_finished());
    encoder.end();
    wire
}

#[test]
fn round_trips_with_a_prepared_dictionary_and_uses_it() {
    let source = Bytes::from(text(16 * 1024, 1));
    let prepared = Arc::new(PreparedDictionary::new(&source).unwrap());
    assert!(prepared.size() > 0);
    let body = text(4000, 1);
    let mut encoder = Encoder::new(4 << 20);
    let with = encode(&mut encoder, Some(prepared.clone()), &body);
    let without = encode(&mut encoder, None, &body);
    assert!(
        with.len() * 2 < without.len(),
        "{} vs {}",
        with.len(),
        without.len()
    );
    assert_eq!(decode(Some(&source), &with, 100).unwrap(), body);
    assert_eq!(decode(None, &without, 100_000).unwrap(), body);
    // Without its dictionary the stream does not decode to the body.
    assert_ne!(
        decode(None, &with, 100_000).ok().as_deref(),
        Some(&body[..])
    );
}

#[test]
fn the_dictionary_outlives_its_other_owners() {
    let source = Bytes::from(text(8000, 2));
    let prepared = Arc::new(PreparedDictionary::new(&source).unwrap());
    let expected = source.to_vec();
    let body = text(3000, 2);
    let mut encoder = Encoder::new(0);
    encoder
        .start(params(6, None), Some(prepared.clone()))
        .unwrap();
    // Every other handle on the dictionary and its bytes goes: the encoder's Arc keeps both.
    drop(prepared);
    drop(source);
    let mut wire = BytesMut::new();
    encoder
        .compress(Operation::Process, &body, &mut wire)
        .unwrap();
    encoder.compress(Operation::Finish, &[], &mut wire).unwrap();
    drop(encoder);
    let source = Bytes::from(expected);
    assert_eq!(decode(Some(&source), &wire, 1 << 20).unwrap(), body);
}

#[test]
fn each_flushed_prefix_decodes() {
    let source = Bytes::from(text(4000, 3));
    let prepared = Arc::new(PreparedDictionary::new(&source).unwrap());
    let body = text(20_000, 3);
    let mut encoder = Encoder::new(4 << 20);
    encoder.start(params(9, None), Some(prepared)).unwrap();
    let mut wire = BytesMut::new();
    let mut decoder = Decoder::new(Some(&source), 0).unwrap();
    let mut plain = BytesMut::new();
    let mut fed = 0;
    for (i, chunk) in body.chunks(1500).enumerate() {
        encoder
            .compress(Operation::Process, chunk, &mut wire)
            .unwrap();
        encoder.compress(Operation::Flush, &[], &mut wire).unwrap();
        let mut budget = usize::MAX;
        let (consumed, stop) = decoder.decode(&wire[fed..], &mut plain, &mut budget);
        fed += consumed;
        assert_eq!(stop, Ok(Stop::Input));
        assert_eq!(&plain[..], &body[..plain.len()]);
        assert_eq!(
            plain.len(),
            (i * 1500 + chunk.len()).min(body.len()),
            "chunk {i}"
        );
    }
    encoder.compress(Operation::Finish, &[], &mut wire).unwrap();
    let (_, stop) = decoder.decode(&wire[fed..], &mut plain, &mut usize::MAX.clone());
    assert_eq!(stop, Ok(Stop::End));
    assert_eq!(&plain[..], &body[..]);
}

#[test]
fn blocks_go_back_to_the_arena_and_are_reused() {
    let body = text(10_000, 4);
    let mut encoder = Encoder::new(8 << 20);
    encode(&mut encoder, None, &body);
    let (made, kept) = (encoder.blocks().made(), encoder.blocks().kept());
    assert!(made > 0 && kept > 0);
    assert_eq!(encoder.blocks().live(), 0, "the instance freed everything");
    encode(&mut encoder, None, &body);
    assert_eq!(
        encoder.blocks().made(),
        made,
        "the second stream made no block"
    );
    encoder.trim(0);
    assert_eq!(encoder.blocks().kept(), 0);
    // An arena that keeps nothing frees everything at once.
    let mut encoder = Encoder::new(0);
    encode(&mut encoder, None, &body);
    assert_eq!((encoder.blocks().kept(), encoder.blocks().live()), (0, 0));
}

#[test]
fn calls_without_a_stream_fail_and_dropping_an_open_encoder_is_sound() {
    let mut encoder = Encoder::new(1 << 20);
    let mut out = BytesMut::new();
    let none = encoder.compress(Operation::Process, b"x", &mut out);
    assert_eq!(none, Err(Failure::NoStream));
    assert!(!encoder.is_finished() && !encoder.is_open());
    // brotli clamps parameters out of range: a window log of 40 is 24, no large window.
    let wide = Params {
        quality: 5,
        lgwin: 40,
        size_hint: None,
    };
    encoder.start(wide, None).unwrap();
    encoder
        .compress(Operation::Finish, b"abc", &mut out)
        .unwrap();
    assert_eq!(decode(None, &out, 64).unwrap(), b"abc");
    encoder.start(params(5, None), None).unwrap();
    encoder
        .compress(Operation::Process, &text(5000, 5), &mut out)
        .unwrap();
    drop(encoder);
}

#[test]
fn a_finished_stream_refuses_more_input() {
    let mut encoder = Encoder::new(1 << 20);
    encoder.start(params(5, None), None).unwrap();
    let mut out = BytesMut::new();
    encoder
        .compress(Operation::Finish, b"abc", &mut out)
        .unwrap();
    let more = encoder.compress(Operation::Process, b"more", &mut out);
    assert_eq!(more, Err(Failure::Refused));
}

#[test]
fn the_decoder_errs_on_corrupt_truncated_and_trailing_input() {
    let source = Bytes::from(text(4000, 6));
    let prepared = Arc::new(PreparedDictionary::new(&source).unwrap());
    let body = text(9000, 6);
    let wire = encode(&mut Encoder::new(0), Some(prepared), &body);
    assert!(
        matches!(decode(Some(&source), b"\xff\xff\xff\xff", 64), Err(Failure::Corrupt(c)) if c < 0)
    );
    // Truncated: all input taken, the stream not ended.
    for cut in [1, wire.len() / 2, wire.len() - 1] {
        let mut decoder = Decoder::new(Some(&source), 0).unwrap();
        let mut out = BytesMut::new();
        let (consumed, stop) = decoder.decode(&wire[..cut], &mut out, &mut usize::MAX.clone());
        assert_eq!((consumed, stop), (cut, Ok(Stop::Input)), "cut {cut}");
    }
    // Bytes after the end are left unconsumed.
    let mut extra = wire.to_vec();
    extra.extend_from_slice(b"junk");
    assert_eq!(
        decode(Some(&source), &extra, 1 << 20),
        Err(Failure::Corrupt(0))
    );
    // Any flipped byte: an error or other bytes, never a panic or a read past the input.
    for i in 0..wire.len() {
        let mut bad = wire.to_vec();
        bad[i] ^= 0x5a;
        let _ = decode(Some(&source), &bad, 333);
    }
}

/// `body` as one brotli stream with the large-window extension (window log 26), which
/// RFC 7932 decoders (and RFC 9842's `dcb`) refuse; made by the pure-Rust encoder at
/// `quality`.
pub(crate) fn large_window_stream(body: &[u8], quality: u32) -> Vec<u8> {
    use brotli::enc::encode::{BrotliEncoderOperation, BrotliEncoderParameter as P};
    let mut core =
        brotli::enc::encode::BrotliEncoderStateStruct::new(brotli::enc::StandardAlloc::default());
    core.set_parameter(P::BROTLI_PARAM_LARGE_WINDOW, 1);
    core.set_parameter(P::BROTLI_PARAM_LGWIN, 26);
    core.set_parameter(P::BROTLI_PARAM_QUALITY, quality);
    let mut out = vec![0u8; body.len() + 1024];
    let (mut avail_in, mut in_off, mut avail_out, mut out_off) = (body.len(), 0, out.len(), 0);
    assert!(core.compress_stream(
        BrotliEncoderOperation::BROTLI_OPERATION_FINISH,
        &mut avail_in,
        body,
        &mut in_off,
        &mut avail_out,
        &mut out,
        &mut out_off,
        &mut None,
        &mut |_, _, _, _| ()
    ));
    out.truncate(out_off);
    out
}

#[test]
fn the_decoder_refuses_large_window_streams() {
    let out = large_window_stream(&text(2000, 7), 11);
    let err = decode(None, &out, 1 << 20).unwrap_err();
    assert!(matches!(err, Failure::Corrupt(c) if c < 0), "{err:?}");
}

#[test]
fn empty_or_oversized_dictionaries_are_not_prepared() {
    assert!(PreparedDictionary::new(&Bytes::new()).is_none());
    let one = PreparedDictionary::new(&Bytes::from_static(b"x")).unwrap();
    assert!(one.size() > 0);
}
