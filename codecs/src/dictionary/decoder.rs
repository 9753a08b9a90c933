//! What the `dcz` and `dcb` decoders share: the header (magic and the dictionary's hash),
//! checked before any byte reaches the coding's decoder, and the error every later call
//! reports again.

use bytes::BytesMut;

use super::error::DictDecodeError;
use super::frame::HeaderReader;
use crate::Decode;
use crate::decoding::{DecodeCore, Driven};
#[cfg(all(test, both_dictionary_codings))]
use crate::one_shot::decode_loop;

/// A dictionary coding's decoder: its header, then the coding's stream through `C`.
#[derive(Debug)]
pub(crate) struct Headed<C> {
    header: HeaderReader,
    body: Driven<C>,
    failed: Option<DictDecodeError>,
}

impl<C: DecodeCore> Headed<C> {
    pub(crate) fn new(header: HeaderReader, core: C) -> Self {
        Headed {
            header,
            body: Driven::with_core(core),
            failed: None,
        }
    }

    /// Decodes from `input`, appending at most `max_out` bytes to `out`; returns the bytes
    /// consumed. After an error, every call returns it again.
    pub(crate) fn decode(
        &mut self,
        input: &[u8],
        out: &mut BytesMut,
        max_out: usize,
    ) -> Result<usize, DictDecodeError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let result = self.decode_inner(input, out, max_out);
        if let Err(e) = &result {
            self.failed = Some(e.clone());
            // The coding's state goes back now (a header error never reached it).
            self.body.fail();
        }
        result
    }

    fn decode_inner(
        &mut self,
        input: &[u8],
        out: &mut BytesMut,
        max_out: usize,
    ) -> Result<usize, DictDecodeError> {
        let mut pos = 0;
        if !self.header.is_done() {
            pos = self.header.feed(input)?;
            if !self.header.is_done() {
                return Ok(pos);
            }
        }
        let progress = Decode::decode(&mut self.body, &input[pos..], out, max_out)
            .map_err(DictDecodeError::Codec)?;
        Ok(pos + progress.consumed)
    }

    pub(crate) fn has_pending_output(&self) -> bool {
        self.body.has_pending_output()
    }

    /// The end of the body: `Ok` if it was complete (or empty). A header with nothing after
    /// it is truncated.
    pub(crate) fn finish(&self) -> Result<(), DictDecodeError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        self.header.finish()?;
        if self.header.is_untouched() {
            return Ok(());
        }
        self.body.check_end(false).map_err(DictDecodeError::Codec)
    }

    pub(crate) fn is_stream_end(&self) -> bool {
        self.body.is_stream_end()
    }

    /// Body bytes consumed so far, header included.
    pub(crate) fn total_in(&self) -> u64 {
        self.header.taken() as u64 + self.body.total_in()
    }

    pub(crate) fn total_out(&self) -> u64 {
        self.body.total_out()
    }

    pub(crate) fn members(&self) -> u64 {
        self.body.members()
    }

    /// Decodes a whole body, refusing output over `max_len` bytes (a decompression bomb).
    #[cfg(all(test, both_dictionary_codings))]
    pub(crate) fn decode_all(
        mut self,
        body: &[u8],
        max_len: usize,
    ) -> Result<BytesMut, DictDecodeError> {
        let too_large = |limit| DictDecodeError::OutputTooLarge { limit };
        let out = decode_loop(body, max_len, too_large, |input, out, budget| {
            let consumed = self.decode(input, out, budget)?;
            Ok((consumed, self.has_pending_output()))
        })?;
        self.finish()?;
        Ok(out)
    }
}

/// A dictionary decoder, `$name` over `Headed<$core>`: the `Decode` impl for `dcz` and
/// `dcb`, written once. Each coding adds its own `new`.
macro_rules! dict_decoder {
    ($(#[$doc:meta])* $name:ident, $core:ty) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub(crate) struct $name(crate::dictionary::HeadedDecoder<$core>);

        #[cfg(all(test, both_dictionary_codings))]
        impl $name {
            /// A whole body decoded, with its typed error.
            pub(crate) fn decode_all(
                self,
                body: &[u8],
                max_len: usize,
            ) -> Result<bytes::BytesMut, crate::dictionary::error::DictDecodeError> {
                self.0.decode_all(body, max_len)
            }
        }

        impl crate::Decode for $name {
            fn decode(
                &mut self,
                input: &[u8],
                out: &mut bytes::BytesMut,
                max_out: usize,
            ) -> Result<crate::Progress, crate::DecodeError> {
                let before = out.len();
                let consumed = self.0.decode(input, out, max_out).map_err(crate::DecodeError::from)?;
                Ok(crate::Progress::since(consumed, before, out))
            }

            fn has_pending_output(&self) -> bool {
                self.0.has_pending_output()
            }

            fn finish(&self) -> Result<(), crate::DecodeError> {
                self.0.finish().map_err(crate::DecodeError::from)
            }

            fn is_stream_end(&self) -> bool {
                self.0.is_stream_end()
            }

            fn total_in(&self) -> u64 {
                self.0.total_in()
            }

            fn total_out(&self) -> u64 {
                self.0.total_out()
            }

            fn members(&self) -> u64 {
                self.0.members()
            }
        }
    };
}

pub(crate) use dict_decoder;
