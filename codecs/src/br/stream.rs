//! The [`DecodeCore`] of br and `dcb`: one brotli stream (RFC 7932 has no framing around
//! it), its state let go as soon as it ends, and any byte after it an error.

use brotli_decompressor::{Allocator, BrotliState, HuffmanCode};
use bytes::{Bytes, BytesMut};

use super::{DecodeStep, decode_step};
use crate::DecodeError;
use crate::DecodeErrorKind;
use crate::decoding::{DecodeCore, Stepped};

/// A br decoder state (the pool's, or `dcb`'s primed with a dictionary), as [`BrStream`]
/// runs it.
pub(crate) trait BrState {
    /// The allocator of its brotli state.
    type Alloc: Allocator<u8> + Allocator<u32> + Allocator<HuffmanCode>;
    /// What `decode` says about bytes after the end of the stream.
    const TRAILING: &'static str;
    /// What `finish` says when the body ends inside the stream.
    const TRUNCATED: &'static str;

    /// Its brotli state.
    fn core(&mut self) -> &mut BrotliState<Self::Alloc, Self::Alloc, Self::Alloc>;

    /// The dictionary lent to every decode call (`dcb`'s, attached to the state as an
    /// external dictionary so that it is not copied per stream); none for br.
    fn dictionary(&self) -> Bytes {
        Bytes::new()
    }

    /// Lets go of a state that saw an error.
    fn discard(self);
}

/// The [`DecodeCore`] of br and `dcb`: one stream (RFC 7932 has no framing around it), its
/// state let go as soon as it ends, and any byte after it an error.
pub(crate) struct BrStream<S> {
    /// `None` after the end of the stream or a failure.
    state: Option<S>,
    done: bool,
}

impl<S> BrStream<S> {
    pub(crate) fn new(state: S) -> Self {
        BrStream {
            state: Some(state),
            done: false,
        }
    }

    #[cfg(test)]
    pub(crate) fn holds_state(&self) -> bool {
        self.state.is_some()
    }
}

impl<S> std::fmt::Debug for BrStream<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrStream")
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl<S: BrState> DecodeCore for BrStream<S> {
    const TRUNCATED: &'static str = S::TRUNCATED;

    fn step(&mut self, input: &[u8], out: &mut BytesMut, budget: &mut usize) -> Stepped {
        let (consumed, stop) = match self.state.as_mut() {
            Some(state) => {
                let dictionary = state.dictionary();
                decode_step(state.core(), &dictionary, input, out, budget)
            }
            None => (0, Ok(DecodeStep::End)),
        };
        let stopped = match stop {
            Ok(DecodeStep::End) => {
                self.done = true;
                if consumed < input.len() {
                    Err(DecodeError::new(DecodeErrorKind::TrailingData, S::TRAILING))
                } else {
                    // Back to the pool now, not when the decoder is dropped.
                    self.state = None;
                    Ok(false)
                }
            }
            Ok(DecodeStep::Budget) => Ok(true),
            Ok(DecodeStep::Input) => Ok(false),
            Err(e) => Err(e),
        };
        (consumed, stopped)
    }

    fn fail(&mut self) {
        if let Some(state) = self.state.take() {
            state.discard();
        }
    }

    fn is_stream_end(&self) -> bool {
        self.done
    }

    fn members(&self) -> u64 {
        u64::from(self.done)
    }
}
