//! Turns: a bound on how many streams hold a large codec state at once, the others waiting
//! first come, first served.
//!
//! A streaming br encoder holds megabytes while its stream runs. Without a bound, every
//! in-flight br response held one: 256 concurrent downloads held 2.3 GB. With it, at most
//! `limit` streams compress at once and the rest wait for a turn before drawing state.
// Only br streams take turns.
#![cfg_attr(not(feature = "br"), allow(dead_code))]

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

/// The turns of one kind of stream.
pub(crate) struct Turns {
    limit: usize,
    queue: Mutex<Queue>,
}

struct Queue {
    held: usize,
    next_ticket: u64,
    /// Streams waiting, oldest first, each with the waker of its last poll.
    waiting: VecDeque<(u64, Waker)>,
}

/// A stream's place in line, kept between polls while it waits.
#[derive(Debug, Default)]
pub(crate) struct Ticket(Option<u64>);

impl Turns {
    pub(crate) fn new(limit: usize) -> Self {
        Turns {
            limit: limit.max(1),
            queue: Mutex::new(Queue {
                held: 0,
                next_ticket: 0,
                waiting: VecDeque::new(),
            }),
        }
    }

    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Turns held now.
    pub(crate) fn held(&self) -> usize {
        self.lock().held
    }

    /// Streams waiting now.
    pub(crate) fn waiting(&self) -> usize {
        self.lock().waiting.len()
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        crate::sync::lock(&self.queue)
    }

    /// A turn if one is free and nobody who came earlier is waiting; else the stream joins
    /// (or stays in) the line and is woken when its turn may have come.
    pub(crate) fn poll_take(&self, ticket: &mut Ticket, cx: &mut Context<'_>) -> Poll<()> {
        let mut queue = self.lock();
        let first = match ticket.0 {
            Some(id) => queue.waiting.front().is_some_and(|(front, _)| *front == id),
            None => queue.waiting.is_empty(),
        };
        if first && queue.held < self.limit {
            if ticket.0.take().is_some() {
                queue.waiting.pop_front();
            }
            queue.held += 1;
            // Several turns may be free (a burst of streams ended): let the next in line look.
            if queue.held < self.limit {
                if let Some((_, next)) = queue.waiting.front() {
                    next.wake_by_ref();
                }
            }
            return Poll::Ready(());
        }
        match ticket.0 {
            Some(id) => {
                if let Some((_, waker)) = queue.waiting.iter_mut().find(|(i, _)| *i == id) {
                    waker.clone_from(cx.waker());
                }
            }
            None => {
                let id = queue.next_ticket;
                queue.next_ticket += 1;
                queue.waiting.push_back((id, cx.waker().clone()));
                ticket.0 = Some(id);
            }
        }
        Poll::Pending
    }

    /// Gives a turn back and wakes the first stream in line.
    pub(crate) fn give_back(&self) {
        let mut queue = self.lock();
        queue.held = queue.held.saturating_sub(1);
        if let Some((_, next)) = queue.waiting.front() {
            next.wake_by_ref();
        }
    }

    /// A waiting stream went away (its body was dropped): it leaves the line, and if it was
    /// first, the next one looks.
    pub(crate) fn leave(&self, ticket: &mut Ticket) {
        let Some(id) = ticket.0.take() else {
            return;
        };
        let mut queue = self.lock();
        let Some(at) = queue.waiting.iter().position(|(i, _)| *i == id) else {
            return;
        };
        queue.waiting.remove(at);
        if at == 0 && queue.held < self.limit {
            if let Some((_, next)) = queue.waiting.front() {
                next.wake_by_ref();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn waker() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        (count.clone(), Waker::from(count))
    }

    #[test]
    fn first_come_first_served_within_the_limit() {
        let turns = Turns::new(2);
        let (_, w) = waker();
        let mut cx = Context::from_waker(&w);
        let mut t = [Ticket::default(), Ticket::default(), Ticket::default()];
        assert!(turns.poll_take(&mut t[0], &mut cx).is_ready());
        assert!(turns.poll_take(&mut t[1], &mut cx).is_ready());
        let (woken, w2) = waker();
        let mut cx2 = Context::from_waker(&w2);
        assert!(turns.poll_take(&mut t[2], &mut cx2).is_pending());
        assert_eq!((turns.held(), turns.waiting()), (2, 1));
        // A newcomer does not jump the line, even once a turn is free.
        let mut late = Ticket::default();
        assert!(turns.poll_take(&mut late, &mut cx).is_pending());
        turns.give_back();
        assert_eq!(
            woken.0.load(Ordering::SeqCst),
            1,
            "the first in line is woken"
        );
        assert!(turns.poll_take(&mut late, &mut cx).is_pending());
        assert!(turns.poll_take(&mut t[2], &mut cx2).is_ready());
        assert_eq!((turns.held(), turns.waiting()), (2, 1));
        turns.leave(&mut late);
        assert_eq!(turns.waiting(), 0);
    }

    #[test]
    fn a_waiter_that_leaves_passes_the_turn_on() {
        let turns = Turns::new(1);
        let (_, w) = waker();
        let mut cx = Context::from_waker(&w);
        let mut holder = Ticket::default();
        assert!(turns.poll_take(&mut holder, &mut cx).is_ready());
        let mut first = Ticket::default();
        let (woken, w2) = waker();
        let mut cx2 = Context::from_waker(&w2);
        assert!(turns.poll_take(&mut first, &mut cx).is_pending());
        let mut second = Ticket::default();
        assert!(turns.poll_take(&mut second, &mut cx2).is_pending());
        turns.give_back();
        turns.leave(&mut first);
        assert!(
            woken.0.load(Ordering::SeqCst) >= 1,
            "the next in line looks"
        );
        assert!(turns.poll_take(&mut second, &mut cx2).is_ready());
        assert_eq!((turns.held(), turns.waiting()), (1, 0));
    }
}
