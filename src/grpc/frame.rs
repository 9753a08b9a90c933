//! The gRPC message framing: a 5-byte prefix (a compressed flag, then the message length as
//! a big-endian `u32`) before each message, messages cut anywhere across a body's chunks.
//!
//! [`MessageReader`] reassembles messages from chunks, one at a time: a message that lies
//! whole in a chunk is sliced out of it without a copy; one cut across chunks is gathered in
//! one buffer, which is all the reader holds.

use bytes::{Buf, Bytes, BytesMut};

use super::status::GrpcStatus;

/// The length of a message's prefix: the flag byte and the `u32` length.
pub(crate) const PREFIX_LEN: usize = 5;

/// A message's prefix, read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Prefix {
    /// The compressed flag: the message is in the stream's `grpc-encoding`.
    pub(crate) compressed: bool,
    /// The length of the message after the prefix.
    pub(crate) len: usize,
}

impl Prefix {
    /// Reads a prefix from the first five bytes of `bytes`: `None` while fewer are there, an
    /// `INTERNAL` status for a flag other than 0 or 1, `RESOURCE_EXHAUSTED` for a length past
    /// `max_len`.
    pub(crate) fn read(bytes: &[u8], max_len: usize) -> Result<Option<Prefix>, GrpcStatus> {
        let Some(head) = bytes.first_chunk::<PREFIX_LEN>() else {
            return Ok(None);
        };
        let compressed = match head[0] {
            0 => false,
            1 => true,
            _ => {
                return Err(GrpcStatus::internal(
                    "malformed message prefix: flag not 0 or 1",
                ));
            }
        };
        let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
        if len > max_len {
            return Err(GrpcStatus::resource_exhausted(
                "message on the wire larger than the limit",
            ));
        }
        Ok(Some(Prefix { compressed, len }))
    }

    /// Writes a prefix for a message of `len` bytes.
    #[cfg(test)]
    pub(crate) fn write(out: &mut BytesMut, compressed: bool, len: usize) {
        use bytes::BufMut;
        out.put_u8(u8::from(compressed));
        out.put_u32(u32::try_from(len).unwrap_or(u32::MAX));
    }

    /// Overwrites the prefix at the start of `frame` for the message after it.
    pub(crate) fn patch(frame: &mut [u8], compressed: bool) {
        let len = u32::try_from(frame.len() - PREFIX_LEN).unwrap_or(u32::MAX);
        frame[0] = u8::from(compressed);
        frame[1..PREFIX_LEN].copy_from_slice(&len.to_be_bytes());
    }
}

/// One message, prefix included.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Message {
    /// The compressed flag.
    pub(crate) compressed: bool,
    /// The prefix and the message.
    pub(crate) frame: Bytes,
}

impl Message {
    /// The message without its prefix.
    pub(crate) fn payload(&self) -> &[u8] {
        &self.frame[PREFIX_LEN..]
    }
}

/// Reassembles messages from a body's chunks, at most one message held.
#[derive(Debug)]
pub(crate) struct MessageReader {
    /// What is left of the last chunk pushed.
    chunk: Bytes,
    /// A message gathered across chunks, prefix first.
    partial: BytesMut,
    /// The longest message accepted on the wire.
    max_len: usize,
}

impl MessageReader {
    /// A reader refusing messages longer than `max_len` on the wire.
    pub(crate) fn new(max_len: usize) -> Self {
        MessageReader {
            chunk: Bytes::new(),
            partial: BytesMut::new(),
            max_len,
        }
    }

    /// Takes the next chunk of the body (the bodies call it once
    /// [`next_message`](Self::next_message) has used up the last one).
    pub(crate) fn push(&mut self, mut data: impl Buf) {
        let chunk = data.copy_to_bytes(data.remaining());
        if self.chunk.is_empty() {
            self.chunk = chunk;
        } else {
            // Not reached by the bodies, which push only when asked; kept correct anyway.
            let mut joined = BytesMut::from(&self.chunk[..]);
            joined.extend_from_slice(&chunk);
            self.chunk = joined.freeze();
        }
    }

    /// Whether a message has been begun and not finished: at the end of the body, the
    /// body was truncated.
    pub(crate) fn is_mid_message(&self) -> bool {
        !self.partial.is_empty() || !self.chunk.is_empty()
    }

    /// The next complete message, `None` until one is in hand, or a status for a malformed
    /// prefix or a message over the limit.
    pub(crate) fn next_message(&mut self) -> Result<Option<Message>, GrpcStatus> {
        if self.partial.is_empty() {
            if let Some(prefix) = Prefix::read(&self.chunk, self.max_len)? {
                if self.chunk.len() >= PREFIX_LEN + prefix.len {
                    let frame = self.chunk.split_to(PREFIX_LEN + prefix.len);
                    let compressed = prefix.compressed;
                    return Ok(Some(Message { compressed, frame }));
                }
            }
        }
        self.gather()
    }

    /// Moves bytes from the chunk into the partial message until it is complete or the
    /// chunk is used up.
    fn gather(&mut self) -> Result<Option<Message>, GrpcStatus> {
        loop {
            let prefix = Prefix::read(&self.partial, self.max_len)?;
            let need = prefix.map_or(PREFIX_LEN, |p| PREFIX_LEN + p.len);
            if let Some(prefix) = prefix.filter(|_| self.partial.len() == need) {
                let frame = self.partial.split().freeze();
                let compressed = prefix.compressed;
                return Ok(Some(Message { compressed, frame }));
            }
            if self.chunk.is_empty() {
                return Ok(None);
            }
            let take = (need - self.partial.len()).min(self.chunk.len());
            self.partial.extend_from_slice(&self.chunk[..take]);
            self.chunk.advance(take);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grpc::status::Code;

    fn framed(messages: &[(bool, &[u8])]) -> Vec<u8> {
        let mut out = BytesMut::new();
        for (compressed, payload) in messages {
            Prefix::write(&mut out, *compressed, payload.len());
            out.extend_from_slice(payload);
        }
        out.to_vec()
    }

    fn read_all(wire: &[u8], cut: usize) -> Result<Vec<Message>, GrpcStatus> {
        let mut reader = MessageReader::new(1024);
        let mut messages = Vec::new();
        for chunk in wire.chunks(cut.max(1)) {
            reader.push(chunk);
            while let Some(message) = reader.next_message()? {
                messages.push(message);
            }
        }
        assert!(!reader.is_mid_message());
        Ok(messages)
    }

    #[test]
    fn messages_come_whole_however_the_body_is_cut() {
        let wire = framed(&[(false, b"hello"), (true, b""), (false, &[7; 300])]);
        for cut in [1, 2, 4, 5, 6, 9, 64, 1000] {
            let messages = read_all(&wire, cut).unwrap();
            assert_eq!(messages.len(), 3, "cut {cut}");
            assert_eq!(messages[0].payload(), b"hello");
            assert!(messages[1].compressed && messages[1].payload().is_empty());
            assert_eq!(messages[2].payload(), &[7; 300][..]);
        }
    }

    #[test]
    fn a_bad_flag_or_a_long_message_is_refused_at_its_prefix() {
        let error = read_all(&[2, 0, 0, 0, 0], 5).unwrap_err();
        assert_eq!(error.code(), Code::Internal);
        let error = read_all(&[0, 0, 0, 4, 1], 2).unwrap_err();
        assert_eq!(error.code(), Code::ResourceExhausted);
    }

    #[test]
    fn a_cut_message_is_still_pending_at_the_end() {
        let mut reader = MessageReader::new(1024);
        reader.push(&framed(&[(false, b"hello")])[..7]);
        assert_eq!(reader.next_message().unwrap(), None);
        assert!(reader.is_mid_message());
    }

    #[test]
    fn a_patched_prefix_counts_what_follows() {
        let mut frame = vec![0; PREFIX_LEN + 3];
        Prefix::patch(&mut frame, true);
        assert_eq!(frame[..PREFIX_LEN], [1, 0, 0, 0, 3]);
    }
}
