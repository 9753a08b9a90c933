//! A br stream's turn: br encoders are the largest states, so a pool lets only so many
//! streams hold one at once (`CodecPoolBuilder::br_stream_limit`).

use std::task::{Context, Poll};

use crate::pool::CodecPool;
use crate::pool::turns::Ticket;

/// A held turn of a pool's br streams; given back when dropped.
pub(crate) struct Turn {
    pool: CodecPool,
}

impl Turn {
    /// Polls for a br stream turn in `pool`.
    pub(crate) fn poll_br(
        pool: &CodecPool,
        ticket: &mut Ticket,
        cx: &mut Context<'_>,
    ) -> Poll<Turn> {
        pool.turns()
            .poll_take(ticket, cx)
            .map(|()| Turn { pool: pool.clone() })
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        self.pool.turns().give_back();
    }
}

impl std::fmt::Debug for Turn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Turn").finish_non_exhaustive()
    }
}
