//! The `dcb` decoder: the header's hash checked against the dictionary, then one brotli
//! stream decoded with the dictionary as its raw prefix, RFC 7932 windows only (16 MiB at
//! most).
//!
//! `brotli-decompressor` rather than Google's C decoder: with the dictionary lent to each call
//! (not copied per body) it is as fast or faster on this crate's bodies (`cargo bench -p tower-gzip-bench --bench
//! brotli_c -- dcb_lib_decode`, where `rust` is this decoder).

use brotli_decompressor::{BrotliState, StandardAlloc as DecAlloc};
use bytes::Bytes;

use crate::br::{BrState, BrStream};
use crate::dictionary::Dictionary;
use crate::dictionary::frame::{DCB_MAGIC, HeaderReader};
use crate::dictionary::{HeadedDecoder as Headed, dict_decoder};

/// A brotli decoder state with a dictionary attached as external (boxed: it is a few KB
/// inline), and the dictionary's bytes, lent to each decode call.
struct DcbState {
    core: Box<BrotliState<DecAlloc, DecAlloc, DecAlloc>>,
    dictionary: Bytes,
}

// The br decoder's own loop, over this decoder's dictionary-primed state.
impl BrState for DcbState {
    type Alloc = DecAlloc;
    const TRAILING: &'static str = "bytes after the end of the dcb stream";
    const TRUNCATED: &'static str = "the body ended inside the brotli stream";

    fn core(&mut self) -> &mut BrotliState<DecAlloc, DecAlloc, DecAlloc> {
        &mut self.core
    }

    fn dictionary(&self) -> Bytes {
        self.dictionary.clone()
    }

    fn discard(self) {}
}

dict_decoder!(
    /// A streaming `dcb` decoder: checks the header's hash, then decodes one brotli stream
    /// with the dictionary as its prefix, refusing windows over 16 MiB (no large-window
    /// streams). Output is bounded per call.
    DcbDecoder,
    BrStream<DcbState>
);

impl DcbDecoder {
    /// A decoder for bodies made with `dictionary` (it keeps a handle on the bytes, which
    /// brotli reads in place).
    pub(crate) fn new(dictionary: &Dictionary) -> DcbDecoder {
        let alloc = DecAlloc::default;
        // Strict: RFC 7932 windows only (at most 16 MiB), not the large-window extension.
        let mut core = Box::new(BrotliState::new_strict(alloc(), alloc(), alloc()));
        // A new state takes one external dictionary of up to 2 GiB (a `Dictionary` is at
        // most 128 MiB), so this does not fail.
        let attached = core.attach_external_dictionary(dictionary.len());
        debug_assert!(attached, "a new state takes the dictionary");
        let state = DcbState {
            core,
            dictionary: dictionary.bytes().clone(),
        };
        DcbDecoder(Headed::new(
            HeaderReader::new(&DCB_MAGIC, dictionary.hash()),
            BrStream::new(state),
        ))
    }
}
