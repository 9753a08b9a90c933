//! Unit tests of the streaming compression body: streams under the hold limit keep their
//! pooled codec state, and a full slice yields. What idle and stalled streams hold is
//! counted by an allocator, in `tests/held_memory.rs`.

use std::convert::Infallible;

use super::*;
use crate::CodecPool;
use crate::codec::{CompressionLevel, Decoder, Format};

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
