//! Not API: the read side's frame parser and inflater for `fuzz/` (built only with
//! `--cfg fuzzing`, re-exported by `crate::fuzzing`).

use super::frame::{Header, OpCode};
use super::history::History;
use super::inbound::{Inbound, InboundCodec, Step};
use crate::CodecPool;

/// Feeds `data` to an armed read side in pieces of `piece` bytes (server role when
/// `server`, a parked window when `takeover`), and checks what it hands tungstenite: whole
/// frames, RSV1 clear, no message past `limit`. Returns the close code it failed with.
pub fn inbound_frames(
    data: &[u8],
    piece: usize,
    server: bool,
    takeover: bool,
    limit: usize,
) -> Option<u16> {
    let mut inbound = Inbound::new(server);
    inbound.arm(InboundCodec {
        pool: CodecPool::global().clone(),
        limit,
        history: takeover.then(|| History::new(15)),
    });
    let mut checker = Checker {
        handed: Vec::new(),
        message: 0,
        checking: true,
        fed: 0,
        limit: limit as u64,
    };
    for chunk in data.chunks(piece.max(1)) {
        checker.fed += chunk.len() as u64;
        inbound.raw.extend_from_slice(chunk);
        loop {
            match inbound.step() {
                Ok(Step::Progress) => {}
                Ok(Step::NeedMore) => break,
                Err(fault) => return Some(fault.code()),
            }
            checker.take(&inbound.out.split());
        }
    }
    None
}

/// What tungstenite was handed so far, checked frame by frame.
struct Checker {
    /// Bytes handed and not yet checked (a frame's start, when it is not all there).
    handed: Vec<u8>,
    /// The current message's bytes so far.
    message: u64,
    /// Off once a passed-through length runs past memory.
    checking: bool,
    /// Bytes fed to the read side so far.
    fed: u64,
    limit: u64,
}

impl Checker {
    fn take(&mut self, out: &[u8]) {
        if !self.checking {
            return;
        }
        self.handed.extend_from_slice(out);
        // Only the adapter's own frames (compressed messages re-emitted) are checked:
        // what it passes through, tungstenite checks.
        while let Some((header, at)) = Header::parse(&self.handed) {
            // A passed-through length past memory (tungstenite refuses it) ends the
            // checking: what follows is that frame's payload.
            let Some(end) = usize::try_from(header.len)
                .ok()
                .and_then(|n| n.checked_add(at))
            else {
                self.handed.clear();
                self.checking = false;
                return;
            };
            if self.handed.len() < end {
                return;
            }
            assert!(!header.rsv1, "tungstenite must never see RSV1");
            if !header.is_control() {
                // A text or binary frame starts a message (after an unfinished one,
                // tungstenite fails the connection: that one is not counted on).
                if matches!(header.opcode, OpCode::Text | OpCode::Binary) {
                    self.message = 0;
                }
                self.message += header.len;
                // Past the limit only what came in as it is (uncompressed messages are
                // tungstenite's to bound): never more than was fed.
                assert!(
                    self.message <= self.limit || self.message <= self.fed,
                    "a message inflated past the limit"
                );
                if header.fin {
                    self.message = 0;
                }
            }
            self.handed.drain(..end);
        }
    }
}
