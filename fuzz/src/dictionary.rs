//! The dictionary codecs (`dcz`, `dcb`) on their own: round trips one shot and streamed, and
//! decoders fed arbitrary bodies behind a valid header.

use std::sync::OnceLock;

use bytes::BytesMut;
use tower_gzip::codec::{Decoder, Encoder, OneShot};
use tower_gzip::dictionary::Dictionary;
use tower_gzip::{CodecPool, CompressionLevel, ContentCoding};

fn pool() -> &'static CodecPool {
    static POOL: OnceLock<CodecPool> = OnceLock::new();
    POOL.get_or_init(CodecPool::new)
}

/// What the input's first bytes choose: a coding and level, and a dictionary made of the
/// bytes that follow; the rest is the body.
struct Case<'a> {
    coding: ContentCoding,
    level: CompressionLevel,
    dictionary: Dictionary,
    body: &'a [u8],
    step: usize,
}

fn case(data: &[u8]) -> Option<Case<'_>> {
    let (&[choice, level, a, b], rest) = data.split_first_chunk::<4>()?;
    let dcb = choice & 1 == 1 && ContentCoding::Dcb.is_compiled();
    let (coding, level) = match dcb {
        // Qualities up to 9 and levels up to 12: what responses use, fast enough to fuzz.
        true => (ContentCoding::Dcb, 5 + i32::from(level % 5)),
        false => (ContentCoding::Dcz, 1 + i32::from(level % 12)),
    };
    let len = 1 + usize::from(u16::from_le_bytes([a, b])) % 8192;
    let (dictionary, body) = rest.split_at(len.min(rest.len()));
    let dictionary = Dictionary::new(dictionary.to_vec(), None).ok()?;
    Some(Case {
        coding,
        level: CompressionLevel::Precise(level),
        dictionary,
        body,
        step: 1 + usize::from(choice >> 1) * 37,
    })
}

/// Encodes one shot and streamed (flushing at every other chunk), and checks both decode to
/// the body, one shot and in small steps; a strict prefix of the body is refused.
pub fn check_round_trip(data: &[u8]) {
    let Some(case) = case(data) else { return };
    let one_shot = OneShot::new(case.coding)
        .dictionary(&case.dictionary)
        .level(case.level)
        .pool(pool());
    let mut wire = BytesMut::new();
    one_shot.encode(case.body, &mut wire).expect("one-shot encode");
    let limit = case.body.len();
    assert_eq!(one_shot.decode(&wire, limit).expect("decode"), case.body);
    if !wire.is_empty() {
        assert!(one_shot.decode(&wire[..wire.len() - 1], limit + 1).is_err());
    }
    let mut encoder =
        Encoder::for_coding(case.coding, case.level, Some(&case.dictionary), pool()).unwrap();
    let mut streamed = BytesMut::new();
    for (i, chunk) in case.body.chunks(case.step).enumerate() {
        encoder.encode(chunk, &mut streamed).expect("encode");
        if i % 2 == 0 {
            encoder.flush(&mut streamed).expect("flush");
            // Everything given so far is decodable now.
            let upto = (i + 1) * case.step;
            let decoded = decode_in_steps(&case, &streamed, 1 + case.step % 97, false);
            assert_eq!(decoded, &case.body[..upto.min(limit)]);
        }
    }
    encoder.finish(&mut streamed).expect("finish");
    assert_eq!(decode_in_steps(&case, &streamed, 1 + case.step % 61, true), case.body);
}

/// `wire` decoded with budgets of `budget` bytes per call; `complete` asks `finish` to agree.
fn decode_in_steps(case: &Case<'_>, wire: &[u8], budget: usize, complete: bool) -> Vec<u8> {
    let mut decoder = Decoder::for_coding(case.coding, Some(&case.dictionary), pool()).unwrap();
    let mut out = BytesMut::new();
    let mut input = wire;
    loop {
        let before = out.len();
        let consumed = decoder.decode(input, &mut out, budget).expect("decode");
        assert!(out.len() - before <= budget, "the budget is a bound");
        input = &input[consumed..];
        if input.is_empty() && !decoder.has_pending_output() {
            break;
        }
        assert!(consumed > 0 || out.len() > before, "a decoder with room makes progress");
    }
    if complete {
        decoder.finish().expect("a complete body");
    }
    out.to_vec()
}

/// A body of arbitrary bytes behind the dictionary's valid header (or none): the decoder
/// never panics, never writes past its budget nor the one-shot limit, and a decoder drawn
/// after it from the same pool decodes a known body.
pub fn check_decoder(data: &[u8]) {
    let Some(case) = case(data) else { return };
    let mut body = Vec::new();
    if case.step % 3 != 0 {
        let magic: &[u8] = match case.coding {
            ContentCoding::Dcz => &[0x5e, 0x2a, 0x4d, 0x18, 0x20, 0, 0, 0],
            _ => &[0xff, 0x44, 0x43, 0x42],
        };
        body.extend_from_slice(magic);
        body.extend_from_slice(&case.dictionary.hash());
    }
    body.extend_from_slice(case.body);
    let one_shot = OneShot::new(case.coding).dictionary(&case.dictionary).pool(pool());
    if let Ok(out) = one_shot.decode(&body, 1 << 16) {
        assert!(out.len() <= 1 << 16);
    }
    let mut decoder = Decoder::for_coding(case.coding, Some(&case.dictionary), pool()).unwrap();
    let mut out = BytesMut::new();
    let budget = 1 + case.step % 4096;
    let mut input = &body[..];
    while out.len() < 1 << 16 {
        let before = out.len();
        match decoder.decode(input, &mut out, budget) {
            Ok(consumed) => {
                assert!(out.len() - before <= budget);
                input = &input[consumed..];
                if (input.is_empty() && !decoder.has_pending_output())
                    || (consumed == 0 && out.len() == before)
                {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    drop(decoder);
    let known = b"a known body, after whatever came before";
    let mut wire = BytesMut::new();
    one_shot.encode(known, &mut wire).unwrap();
    assert_eq!(one_shot.decode(&wire, known.len()).unwrap(), &known[..]);
}
