//! Unit tests of the streaming compression body: when a stream holds pooled codec state
//! (idle and stalled streams give it back, streams under the hold limit keep it).

use std::collections::VecDeque;
use std::convert::Infallible;

use super::*;
use crate::CodecPool;
use crate::codec::{CompressionLevel, Decoder, Format};

/// A body that yields its queued chunks, then `Pending` until more are pushed through
/// the shared handle.
#[derive(Clone, Default)]
struct Trickle(std::sync::Arc<std::sync::Mutex<(VecDeque<Bytes>, bool)>>);

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

fn decode_prefix(format: Format, wire: &[u8]) -> Vec<u8> {
    let pool = CodecPool::new();
    let mut decoder = Decoder::new(format, &pool);
    let mut out = BytesMut::new();
    let mut input = wire;
    while !input.is_empty() || decoder.has_pending_output() {
        let n = decoder.decode(input, &mut out, usize::MAX).unwrap();
        input = &input[n..];
    }
    out.to_vec()
}

/// An idle stream (producer `Pending`) holds no codec state, whatever the coding allows
/// to give back, and no buffer beyond a history the size of its events; everything sent so
/// far decodes. Held bytes are counted with a per-thread allocation counter: 1,000 idle SSE
/// streams must cost about what they cost without compression.
#[test]
fn idle_streams_hold_no_codec_state() {
    let events: Vec<Bytes> = (0..6)
        .map(|i| {
            Bytes::from(format!(
                "event: tick\ndata: {{\"n\":{i},\"msg\":\"hello hello hello\"}}\n\n"
            ))
        })
        .collect();
    // Every coding but br, which cannot restart a stream and keeps its state.
    let formats = Format::ALL.iter().copied().filter(|&f| !is_br(f));
    for format in formats {
        // No idle shelf: a state given back is freed, so live bytes show what the body holds.
        let pool = CodecPool::builder().max_idle(0).build();
        let encoder = Encoder::new(format, CompressionLevel::Default, &pool);
        let producer = Trickle::default();
        let mut body = Box::pin(CompressionBody::encode(producer.clone(), encoder));
        let mut wire = Vec::new();
        let mut plain = Vec::new();
        let mut held = 0;
        for event in &events {
            producer.push(event.clone());
            plain.extend_from_slice(event);
            let before = live::bytes();
            let sent = drain(&mut body);
            // What the body kept: live bytes now, less the test's own copy of the frames.
            held += live::bytes() - before - sent.capacity() as isize;
            assert!(
                held < 2048,
                "{format:?}: an idle stream holds {held} bytes after {} B of events",
                plain.len()
            );
            wire.extend(sent);
            let stats = pool.stats();
            assert_eq!(stats.in_use(), 0, "{format:?} idle: {stats:?}");
            assert_eq!(decode_prefix(format, &wire), plain, "{format:?}");
        }
        producer.end();
        wire.extend(drain(&mut body));
        assert!(body.is_end_stream());
        let pool = CodecPool::new();
        let mut decoder = Decoder::new(format, &pool);
        let mut out = BytesMut::new();
        let n = decoder.decode(&wire, &mut out, usize::MAX).unwrap();
        assert_eq!(n, wire.len());
        decoder.finish().unwrap();
        assert_eq!(&out[..], &plain[..], "{format:?}");
    }
}

/// What a pause costs a stream that pauses after every event (an SSE feed) while the pool
/// is quiet: no state drawn, reset or primed after the second event (gzip and deflate park
/// their state and take it back; zstd goes on with its frame; br keeps its state), and
/// while it is paused the state is the pool's (in use: 0, except br's). The first pause
/// releases (its length is not known yet), so the second event draws and primes once.
/// When another stream takes the parked state at each pause, every event draws a state and
/// primes it with the stream's history (gzip, deflate) or starts a new frame (zstd).
#[test]
fn a_pause_in_a_quiet_pool_draws_and_primes_nothing() {
    const EVENTS: u64 = 200;
    for format in Format::ALL.iter().copied() {
        for taken in [false, true] {
            if taken && is_br(format) {
                continue; // br keeps its state: nothing to take
            }
            // A draw takes a parked state only when parked states fill the shelf.
            let pool = CodecPool::builder()
                .max_idle(if taken { 1 } else { 8 })
                .build();
            let encoder = Encoder::new(format, CompressionLevel::Default, &pool);
            let producer = Trickle::default();
            let mut body = Box::pin(CompressionBody::encode(producer.clone(), encoder));
            let (mut wire, mut plain) = (Vec::new(), Vec::new());
            for i in 0..EVENTS {
                let event = format!("data: {{\"tick\":{i},\"msg\":\"hello hello\"}}\n\n");
                producer.push(Bytes::from(event.clone()));
                plain.extend_from_slice(event.as_bytes());
                wire.extend(drain(&mut body));
                assert_eq!(decode_prefix(format, &wire), plain, "{format:?}");
                let in_use = pool.stats().in_use();
                assert_eq!(in_use, u64::from(is_br(format)), "{format:?} paused");
                if taken {
                    // Another stream draws (and so takes the parked state) and ends.
                    let mut other = Encoder::new(format, CompressionLevel::Default, &pool);
                    other.encode(b"x", &mut BytesMut::new()).unwrap();
                }
            }
            producer.end();
            wire.extend(drain(&mut body));
            drop(body);
            assert_eq!(decode_prefix(format, &wire), plain, "{format:?}");
            let stats = pool.stats();
            let kind = stats
                .kinds()
                .into_iter()
                .map(|(_, kind)| kind)
                .find(|kind| kind.created > 0)
                .expect("one kind of compressor was drawn");
            let draws = kind.created + kind.reused - kind.reclaimed;
            if taken {
                // The stream's draw per event, and the other stream's.
                assert_eq!(draws, 2 * EVENTS, "{format:?}: {kind:?}");
            } else if is_br(format) {
                assert_eq!(
                    (draws, kind.parked, kind.primed_bytes),
                    (1, 0, 0),
                    "{kind:?}"
                );
            } else {
                let first = plain.len() as u64 / EVENTS; // about one event of history
                assert_eq!(draws, 2, "{format:?}: {kind:?}");
                assert!(kind.primed_bytes <= first, "{format:?}: {kind:?}");
                assert_eq!(kind.parked, EVENTS - 1, "{format:?}: {kind:?}");
                assert_eq!(kind.reclaimed, EVENTS - 2, "{format:?}: {kind:?}");
            }
            if matches!(format, Format::Gzip | Format::Deflate) && taken {
                // Every event but the first primes a fresh state with the history so far.
                assert!(
                    kind.primed_bytes > (EVENTS - 1) * 30,
                    "{format:?}: {kind:?}"
                );
            }
            if format.as_str() == "zstd" {
                let mut decoder = Decoder::new(format, &CodecPool::new());
                decoder
                    .decode(&wire, &mut BytesMut::new(), usize::MAX)
                    .unwrap();
                let frames = if taken { EVENTS } else { 2 };
                assert_eq!(decoder.members(), frames, "zstd frames");
            }
            assert_eq!(stats.in_use(), 0, "{format:?} ended: {stats:?}");
        }
    }
}

fn is_br(format: Format) -> bool {
    format.as_str() == "br"
}

/// A producer with everything ready: `chunks` frames of `size` bytes of text.
struct Ready {
    left: usize,
    size: usize,
}

impl Body for Ready {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.left == 0 {
            return Poll::Ready(None);
        }
        self.left -= 1;
        // JSON-like rows with varied numbers: compressible, but not to nothing.
        let mut seed = self.left as u64 + 1;
        let mut chunk = Vec::with_capacity(self.size + 64);
        while chunk.len() < self.size {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            chunk.extend_from_slice(
                format!("{{\"id\":{},\"score\":{}}},", seed >> 40, seed % 9973).as_bytes(),
            );
        }
        chunk.truncate(self.size);
        Poll::Ready(Some(Ok(Frame::data(Bytes::from(chunk)))))
    }
}

/// A body streaming `chunks` ready 16 KiB chunks through a pooled encoder.
fn ready_body(format: Format, pool: &CodecPool, chunks: usize) -> Pin<Box<CompressionBody<Ready>>> {
    let encoder = Encoder::new(format, CompressionLevel::Default, pool);
    let producer = Ready {
        left: chunks,
        size: 16 * 1024,
    };
    Box::pin(CompressionBody::encode(producer, encoder))
}

/// Polls once, appending any data to `wire`; false at the end of the body.
fn poll_into(
    body: &mut Pin<Box<CompressionBody<Ready>>>,
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
fn decoded_len(format: Format, wire: &[u8]) -> usize {
    let mut decoder = Decoder::new(format, &CodecPool::new());
    let mut plain = BytesMut::new();
    let n = decoder.decode(wire, &mut plain, usize::MAX).unwrap();
    assert_eq!(n, wire.len());
    decoder.finish().unwrap();
    plain.len()
}

/// In a crowded pool (more streams than its hold limit; here the limit is 0), a slow
/// reader takes one frame and stalls: what the body pins meanwhile is bounded by the
/// history it keeps (32 KiB) and its output block, not a codec state (~190 KB for
/// zlib-rs at level 6). Counted with a per-thread allocation counter, not RSS.
#[test]
fn a_stalled_reader_pins_no_codec_state_in_a_crowded_pool() {
    for format in [Format::Gzip, Format::Deflate] {
        // No idle shelf: a state given back is freed, so live bytes show what is held.
        let pool = CodecPool::builder().max_idle(0).hold_limit(0).build();
        let before = live::bytes();
        let mut body = ready_body(format, &pool, 64);
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        let frame = loop {
            match body.as_mut().poll_frame(&mut cx) {
                Poll::Ready(Some(Ok(frame))) => break frame,
                Poll::Pending => continue,
                other => panic!("{format:?}: {:?}", other.map(|f| f.map(|r| r.is_ok()))),
            }
        };
        let first = frame.into_data().unwrap_or_default();
        assert!(!first.is_empty());
        let pinned = live::bytes() - before;
        assert_eq!(pool.stats().in_use(), 0, "{format:?}");
        // The frame the reader holds (a 32 KiB output block) and the 32 KiB dictionary;
        // none of the producer's chunks (an emptied view of one used to pin it whole:
        // 82,632 bytes here, now 66,144).
        assert!(
            pinned < 72 * 1024,
            "{format:?}: a stalled reader pins {pinned} bytes"
        );
        // Reading on still yields one valid stream.
        let mut wire = first.to_vec();
        while poll_into(&mut body, &mut cx, &mut wire) {}
        assert!(body.is_end_stream());
        assert_eq!(decoded_len(format, &wire), 64 * 16 * 1024);
    }
}

/// Under the hold limit a stream keeps its state between slices: no full flush, no
/// priming, the speed of one uninterrupted stream. The output is one deflate stream as
/// flate2 writes it when fed the same pieces.
#[test]
fn under_the_hold_limit_a_stream_keeps_its_state() {
    let pool = CodecPool::builder().hold_limit(1).build();
    let mut body = ready_body(Format::Gzip, &pool, 16);
    let waker = std::task::Waker::noop();
    let mut cx = Context::from_waker(waker);
    let mut wire = Vec::new();
    let mut slices = 0;
    while poll_into(&mut body, &mut cx, &mut wire) {
        slices += 1;
        if !body.is_end_stream() {
            assert_eq!(pool.stats().compressors.in_use(), 1, "slice {slices}");
        }
    }
    assert!(slices > 4, "{slices} polls for 256 KiB");
    assert_eq!(pool.stats().compressors.created, 1);
    assert_eq!(decoded_len(Format::Gzip, &wire), 16 * 16 * 1024);
    // No full flush anywhere: a full flush writes an empty stored block (00 00 ff ff).
    assert!(
        !wire.windows(4).any(|w| w == [0, 0, 0xff, 0xff]),
        "a slice end flushed"
    );
}

/// Live heap bytes allocated and not freed by this thread.
mod live {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    thread_local! {
        static LIVE: Cell<isize> = const { Cell::new(0) };
    }

    pub(super) fn bytes() -> isize {
        LIVE.with(Cell::get)
    }

    fn add(n: isize) {
        // `try_with`: the counter may be gone while a thread shuts down.
        let _ = LIVE.try_with(|live| live.set(live.get() + n));
    }

    struct Counting;

    // SAFETY: every call is forwarded to `System` with the same arguments; the counter
    // neither allocates nor panics. A realloc counts as a free of the old size and an
    // allocation of the new one.
    #[allow(unsafe_code)]
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            add(layout.size() as isize);
            unsafe { System.alloc(layout) }
        }

        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            add(layout.size() as isize);
            unsafe { System.alloc_zeroed(layout) }
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            add(new_size as isize - layout.size() as isize);
            unsafe { System.realloc(ptr, layout, new_size) }
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            add(-(layout.size() as isize));
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    #[global_allocator]
    static GLOBAL: Counting = Counting;
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
    let mut body = ready_body(Format::Gzip, &CodecPool::new(), 32);
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
