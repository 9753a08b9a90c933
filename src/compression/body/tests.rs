//! Unit tests of the streaming compression body: streams under the hold limit keep their
//! pooled codec state, and a full slice yields. What idle and stalled streams hold is
//! counted by an allocator, in `tests/held_memory.rs`.

use std::convert::Infallible;

use super::*;
use crate::CodecPool;
use crate::codec::Decoder;
use crate::{CompressionLevel, ContentCoding};
use tower_gzip_support::bodies::Rows;

/// A body that yields its queued chunks, then `Pending` until more are pushed through
/// the shared handle.
#[derive(Clone, Default)]
struct Trickle(std::sync::Arc<std::sync::Mutex<(std::collections::VecDeque<Bytes>, bool)>>);

impl Trickle {
    fn push(&self, chunk: Bytes) {
        self.0.lock().unwrap().0.push_back(chunk);
    }

    fn end(&self) {
        self.0.lock().unwrap().1 = true;
    }
}

impl Body for Trickle {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let mut state = self.0.lock().unwrap();
        match state.0.pop_front() {
            Some(chunk) => Poll::Ready(Some(Ok(Frame::data(chunk)))),
            None if state.1 => Poll::Ready(None),
            None => Poll::Pending,
        }
    }
}

/// Polls until `Pending` or the end; returns the bytes emitted.
fn drain(body: &mut Pin<Box<CompressionBody<Trickle>>>) -> Vec<u8> {
    let waker = std::task::Waker::noop();
    let mut cx = Context::from_waker(waker);
    let mut out = Vec::new();
    while let Poll::Ready(Some(frame)) = body.as_mut().poll_frame(&mut cx) {
        if let Ok(data) = frame.unwrap().into_data() {
            out.extend_from_slice(&data);
        }
    }
    out
}

fn decode_prefix(coding: ContentCoding, wire: &[u8]) -> Vec<u8> {
    let pool = CodecPool::new();
    let mut decoder = Decoder::for_coding(coding, None, &pool).unwrap();
    let mut out = BytesMut::new();
    let mut input = wire;
    while !input.is_empty() || decoder.has_pending_output() {
        let n = decoder.decode(input, &mut out, usize::MAX).unwrap();
        input = &input[n..];
    }
    out.to_vec()
}

/// What a pause costs a stream that pauses after every event (an SSE feed) while the pool
/// is quiet: no state drawn, reset or primed after the second event (gzip and deflate park
/// their state and take it back; zstd goes on with its frame), and while it is paused the
/// state is the pool's (in use: 0). The first pause releases (its length is not known
/// yet), so the second event draws and primes once. When another stream takes the parked
/// state at each pause, every event draws a state and primes it with the stream's history
/// (gzip, deflate) or starts a new frame (zstd). br keeps its encoder over short pauses
/// (in use: 1; priming one costs more than parking saves), so nobody takes it.
#[test]
fn a_pause_in_a_quiet_pool_draws_and_primes_nothing() {
    const EVENTS: u64 = 200;
    for coding in ContentCoding::PLAIN.iter().copied() {
        for taken in [false, true] {
            // A draw takes a parked state only when parked states fill the shelf.
            let pool = CodecPool::builder()
                .max_idle(if taken { 1 } else { 8 })
                .build();
            let encoder = Encoder::new(coding, CompressionLevel::Default, &pool);
            let producer = Trickle::default();
            let mut body = Box::pin(CompressionBody::encode(producer.clone(), encoder, &pool));
            let (mut wire, mut plain) = (Vec::new(), Vec::new());
            for i in 0..EVENTS {
                let event = format!("data: {{\"tick\":{i},\"msg\":\"hello hello\"}}\n\n");
                producer.push(Bytes::from(event.clone()));
                plain.extend_from_slice(event.as_bytes());
                wire.extend(drain(&mut body));
                assert_eq!(decode_prefix(coding, &wire), plain, "{coding:?}");
                let in_use = pool.stats().in_use();
                let kept = is_br(coding) && i > 0;
                assert_eq!(in_use, u64::from(kept), "{coding:?} paused");
                if taken {
                    // Another stream draws (and so takes the parked state) and ends.
                    let mut other = Encoder::new(coding, CompressionLevel::Default, &pool);
                    other.encode(b"x", &mut BytesMut::new()).unwrap();
                }
            }
            producer.end();
            wire.extend(drain(&mut body));
            drop(body);
            assert_eq!(decode_prefix(coding, &wire), plain, "{coding:?}");
            let stats = pool.stats();
            let kind = stats
                .kinds()
                .map(|(_, kind)| kind)
                .find(|kind| kind.created > 0)
                .expect("one kind of compressor was drawn");
            let draws = kind.created + kind.reused - kind.reclaimed;
            if is_br(coding) {
                // Drawn at the first event and after the first pause; the other stream draws
                // its own at each event.
                let others = if taken { EVENTS } else { 0 };
                assert_eq!(draws, 2 + others, "{coding:?}: {kind:?}");
                assert!(kind.primed_bytes <= plain.len() as u64 / EVENTS);
                assert_eq!(
                    (kind.parked, kind.reclaimed),
                    (0, 0),
                    "{coding:?}: {kind:?}"
                );
            } else if taken {
                // The stream's draw per event, and the other stream's.
                assert_eq!(draws, 2 * EVENTS, "{coding:?}: {kind:?}");
            } else {
                let first = plain.len() as u64 / EVENTS; // about one event of history
                assert_eq!(draws, 2, "{coding:?}: {kind:?}");
                assert!(kind.primed_bytes <= first, "{coding:?}: {kind:?}");
                assert_eq!(kind.parked, EVENTS - 1, "{coding:?}: {kind:?}");
                assert_eq!(kind.reclaimed, EVENTS - 2, "{coding:?}: {kind:?}");
            }
            if matches!(coding, ContentCoding::Gzip | ContentCoding::Deflate) && taken {
                // Every event but the first primes a fresh state with the history so far.
                assert!(
                    kind.primed_bytes > (EVENTS - 1) * 30,
                    "{coding:?}: {kind:?}"
                );
            }
            if coding.as_str() == "zstd" {
                let mut decoder = Decoder::for_coding(coding, None, &CodecPool::new()).unwrap();
                decoder
                    .decode(&wire, &mut BytesMut::new(), usize::MAX)
                    .unwrap();
                let frames = if taken { EVENTS } else { 2 };
                assert_eq!(decoder.members(), frames, "zstd frames");
            }
            assert_eq!(stats.in_use(), 0, "{coding:?} ended: {stats:?}");
        }
    }
}

fn is_br(coding: ContentCoding) -> bool {
    coding.as_str() == "br"
}

/// A body streaming `chunks` ready 16 KiB chunks through a pooled encoder.
fn ready_body(
    coding: ContentCoding,
    pool: &CodecPool,
    chunks: usize,
) -> Pin<Box<CompressionBody<Rows>>> {
    let encoder = Encoder::new(coding, CompressionLevel::Default, pool);
    let producer = Rows::new(chunks, 16 * 1024);
    Box::pin(CompressionBody::encode(producer, encoder, pool))
}

/// Polls once, appending any data to `wire`; false at the end of the body.
fn poll_into(
    body: &mut Pin<Box<CompressionBody<Rows>>>,
    cx: &mut Context<'_>,
    wire: &mut Vec<u8>,
) -> bool {
    match body.as_mut().poll_frame(cx) {
        Poll::Ready(Some(frame)) => {
            if let Ok(data) = frame.unwrap().into_data() {
                wire.extend_from_slice(&data);
            }
            true
        }
        Poll::Ready(None) => false,
        Poll::Pending => true,
    }
}

/// Decodes `wire` as one complete stream; the decoded length.
fn decoded_len(coding: ContentCoding, wire: &[u8]) -> usize {
    let mut decoder = Decoder::for_coding(coding, None, &CodecPool::new()).unwrap();
    let mut plain = BytesMut::new();
    let n = decoder.decode(wire, &mut plain, usize::MAX).unwrap();
    assert_eq!(n, wire.len());
    decoder.finish().unwrap();
    plain.len()
}

/// Under the hold limit a stream keeps its state between slices: no flush, no priming, the
/// speed of one uninterrupted stream. The output is one deflate stream as flate2 writes it
/// when fed the same pieces.
#[test]
fn under_the_hold_limit_a_stream_keeps_its_state() {
    let pool = CodecPool::builder().hold_limit(1).build();
    let mut body = ready_body(ContentCoding::Gzip, &pool, 16);
    let waker = std::task::Waker::noop();
    let mut cx = Context::from_waker(waker);
    let mut wire = Vec::new();
    let mut slices = 0;
    while poll_into(&mut body, &mut cx, &mut wire) {
        slices += 1;
        if !body.is_end_stream() {
            assert_eq!(
                pool.stats()
                    .kind(crate::pool::PoolKind::DeflateCompressors)
                    .in_use(),
                1,
                "slice {slices}"
            );
        }
    }
    assert!(slices > 4, "{slices} polls for 256 KiB");
    assert_eq!(
        pool.stats()
            .kind(crate::pool::PoolKind::DeflateCompressors)
            .created,
        1
    );
    assert_eq!(decoded_len(ContentCoding::Gzip, &wire), 16 * 16 * 1024);
    // No flush anywhere: a sync or full flush writes an empty stored block (00 00 ff ff).
    assert!(
        !wire.windows(4).any(|w| w == [0, 0, 0xff, 0xff]),
        "a slice end flushed"
    );
}

/// After the frame of a full slice the body yields once (waking itself at once), so a
/// consumer that polls again straight away, as hyper does, cannot compress a whole large
/// body in one task turn while other streams wait: every stream gets a slice per turn.
#[test]
fn a_full_slice_yields_before_the_next() {
    struct Flag(std::sync::atomic::AtomicBool);
    impl std::task::Wake for Flag {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
    let flag = std::sync::Arc::new(Flag(std::sync::atomic::AtomicBool::new(false)));
    let waker = std::task::Waker::from(flag.clone());
    let mut cx = Context::from_waker(&waker);
    let mut body = ready_body(ContentCoding::Gzip, &CodecPool::new(), 32);
    let (mut frames, mut yields) = (0, 0);
    let mut after_frame = false;
    loop {
        flag.0.store(false, std::sync::atomic::Ordering::SeqCst);
        match body.as_mut().poll_frame(&mut cx) {
            Poll::Ready(Some(frame)) => {
                assert!(!after_frame, "two frames in a row, no yield between");
                frame.unwrap();
                frames += 1;
                after_frame = true;
            }
            Poll::Ready(None) => break,
            Poll::Pending => {
                assert!(
                    flag.0.load(std::sync::atomic::Ordering::SeqCst),
                    "a yield must wake the task"
                );
                yields += 1;
                after_frame = false;
            }
        }
    }
    // 512 KiB of input in 64 KiB slices: a yield after each slice but the last, whether
    // the slice ended with a frame or deflate still held its output.
    assert!(frames >= 2, "{frames} frames");
    assert!(yields >= 7, "{yields} yields");
}

/// Text that compresses but not to nothing, `len` bytes, owned by something that sets
/// `dropped` when the last view of it goes.
fn tracked_input(len: usize, dropped: &std::sync::Arc<std::sync::atomic::AtomicBool>) -> Bytes {
    struct Owner(Vec<u8>, std::sync::Arc<std::sync::atomic::AtomicBool>);
    impl AsRef<[u8]> for Owner {
        fn as_ref(&self) -> &[u8] {
            &self.0
        }
    }
    impl Drop for Owner {
        fn drop(&mut self) {
            self.1.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
    let mut seed = 1u64;
    let mut text = Vec::with_capacity(len + 64);
    while text.len() < len {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        text.extend_from_slice(
            format!("{{\"id\":{},\"n\":{}}},", seed >> 40, seed % 97).as_bytes(),
        );
    }
    text.truncate(len);
    Bytes::from_owner(Owner(text, dropped.clone()))
}

/// A stream over a body handed over in one 512 KiB frame, on `pool`.
fn whole_body(pool: &CodecPool, input: Bytes) -> Pin<Box<CompressionBody<Trickle>>> {
    let producer = Trickle::default();
    producer.push(input);
    producer.end();
    let encoder = Encoder::new(ContentCoding::Gzip, CompressionLevel::Default, pool);
    Box::pin(CompressionBody::encode(producer, encoder, pool))
}

/// Polls to the end; the wire and how many times the body went pending on the way.
fn poll_to_end(
    body: &mut Pin<Box<CompressionBody<Trickle>>>,
    cx: &mut Context<'_>,
) -> (Vec<u8>, usize) {
    let (mut wire, mut pendings) = (Vec::new(), 0);
    loop {
        match body.as_mut().poll_frame(cx) {
            Poll::Ready(Some(frame)) => {
                wire.extend_from_slice(&frame.unwrap().into_data().unwrap())
            }
            Poll::Ready(None) => return (wire, pendings),
            Poll::Pending => pendings += 1,
        }
    }
}

/// With the yield limit reached, a stream with a large body in hand compresses it through
/// without yielding (its input freed at its end rather than after every other stream's
/// turn); the stream on the slot yields after each slice, and gives the slot back at its end.
#[test]
fn past_the_yield_limit_a_large_body_is_compressed_through() {
    const LEN: usize = 512 * 1024;
    let pool = CodecPool::builder().yield_limit(1).build();
    let flags = [(); 2].map(|_| std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)));
    let mut first = whole_body(&pool, tracked_input(LEN, &flags[0]));
    let mut second = whole_body(&pool, tracked_input(LEN, &flags[1]));
    let mut cx = Context::from_waker(std::task::Waker::noop());
    let mut wire = Vec::new();
    while wire.is_empty() {
        assert!(
            poll_into_trickle(&mut first, &mut cx, &mut wire),
            "ended early"
        );
    }
    assert_eq!(pool.yielding(), 1, "the first stream holds the slot");
    assert!(
        first.as_mut().poll_frame(&mut cx).is_pending(),
        "on a slot it yields"
    );

    let (through, pendings) = poll_to_end(&mut second, &mut cx);
    assert_eq!(pendings, 0, "past the limit no yield between slices");
    assert_eq!(decoded_len(ContentCoding::Gzip, &through), LEN);
    assert!(
        flags[1].load(std::sync::atomic::Ordering::SeqCst),
        "its input is freed"
    );
    assert!(!flags[0].load(std::sync::atomic::Ordering::SeqCst));

    let (rest, pendings) = poll_to_end(&mut first, &mut cx);
    assert!(pendings >= 4, "{pendings} yields for 448 KiB more");
    wire.extend_from_slice(&rest);
    assert_eq!(decoded_len(ContentCoding::Gzip, &wire), LEN);
    assert_eq!(pool.yielding(), 0, "the slot is given back at the end");
}

/// A stream compressing through stops yielding only while the large body is in hand: once
/// it is used up (and freed), the stream waits on its producer as any other, and the next
/// large body takes a slot if one is free.
#[test]
fn a_body_compressed_through_is_freed_before_the_stream_ends() {
    let pool = CodecPool::builder().yield_limit(0).build();
    let dropped = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let producer = Trickle::default();
    producer.push(tracked_input(300 * 1024, &dropped));
    let encoder = Encoder::new(ContentCoding::Gzip, CompressionLevel::Default, &pool);
    let mut body = Box::pin(CompressionBody::encode(producer.clone(), encoder, &pool));
    let mut cx = Context::from_waker(std::task::Waker::noop());
    let mut wire = Vec::new();
    let mut frames = 0;
    while let Poll::Ready(Some(frame)) = body.as_mut().poll_frame(&mut cx) {
        wire.extend_from_slice(&frame.unwrap().into_data().unwrap());
        frames += 1;
    }
    assert!(frames >= 2, "{frames} frames");
    assert!(
        dropped.load(std::sync::atomic::Ordering::SeqCst),
        "pending on the producer, it holds none of the body it was given"
    );
    producer.end();
    let (rest, _) = poll_to_end(&mut body, &mut cx);
    wire.extend_from_slice(&rest);
    assert_eq!(decoded_len(ContentCoding::Gzip, &wire), 300 * 1024);
}

/// Polls once, appending any data to `wire`; false at the end of the body.
fn poll_into_trickle(
    body: &mut Pin<Box<CompressionBody<Trickle>>>,
    cx: &mut Context<'_>,
    wire: &mut Vec<u8>,
) -> bool {
    match body.as_mut().poll_frame(cx) {
        Poll::Ready(Some(frame)) => {
            wire.extend_from_slice(&frame.unwrap().into_data().unwrap());
            true
        }
        Poll::Ready(None) => false,
        Poll::Pending => true,
    }
}
