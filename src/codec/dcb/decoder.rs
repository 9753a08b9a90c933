//! The `dcb` decoder: the header's hash checked against the dictionary, then one brotli
//! stream decoded with the dictionary as its prefix, RFC 7932 windows only (16 MiB at most).

use brotli_decompressor::{
    Allocator, BrotliDecoderParameter, BrotliState, SliceWrapperMut, StandardAlloc as DecAlloc,
};

use crate::codec::br::{BrState, BrStream};
use crate::codec::dictionary::Dictionary;
use crate::codec::dictionary::frame::{DCB_MAGIC, HeaderReader};
use crate::codec::dictionary::{HeadedDecoder as Headed, dict_decoder};

/// A brotli decoder state primed with a dictionary (boxed: it is a few KB inline).
struct DcbState(Box<BrotliState<DecAlloc, DecAlloc, DecAlloc>>);

// The br decoder's own loop, over this decoder's dictionary-primed state.
impl BrState for DcbState {
    type Alloc = DecAlloc;
    const TRAILING: &'static str = "bytes after the end of the dcb stream";
    const TRUNCATED: &'static str = "the body ended inside the brotli stream";

    fn core(&mut self) -> &mut BrotliState<DecAlloc, DecAlloc, DecAlloc> {
        &mut self.0
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
    /// A decoder for bodies made with `dictionary` (it keeps its own copy of the bytes).
    pub(crate) fn new(dictionary: &Dictionary) -> DcbDecoder {
        let mut alloc = DecAlloc::default();
        let bytes = dictionary.bytes();
        let mut copy = <DecAlloc as Allocator<u8>>::alloc_cell(&mut alloc, bytes.len());
        copy.slice_mut().copy_from_slice(bytes);
        let mut core = Box::new(BrotliState::new_with_custom_dictionary(
            alloc,
            DecAlloc::default(),
            DecAlloc::default(),
            copy,
        ));
        // RFC 7932 windows only (at most 16 MiB), not the large-window extension.
        core.set_parameter(BrotliDecoderParameter::BROTLI_DECODER_PARAM_LARGE_WINDOW, 0);
        DcbDecoder(Headed::new(
            HeaderReader::new(&DCB_MAGIC, dictionary.hash()),
            BrStream::new(DcbState(core)),
        ))
    }
}
