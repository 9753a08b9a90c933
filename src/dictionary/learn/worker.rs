//! The learner's thread: takes finished samples from a bounded queue, builds and checks
//! dictionaries, and polls the storage. A plain thread, not a runtime's worker, so that a
//! build (seconds of CPU) never holds up a response; it ends when the last handle is gone.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Instant;

use super::LearnError;
use super::config::LearnerBuilder;
use super::route::RouteLearning;
use super::shared::{Context, Shared, ThreadSettings};

/// A finished sample: its route, its client's keyed hash, its body.
pub(crate) type Taken = (usize, u64, bytes::Bytes);

pub(crate) fn spawn(
    shared: Arc<Shared>,
    queue: Receiver<Taken>,
    config: LearnerBuilder,
) -> Result<(), LearnError> {
    let settings = ThreadSettings::new(config);
    let routes = (shared.routes.iter().enumerate())
        .map(|(i, r)| RouteLearning::new(i, r))
        .collect();
    std::thread::Builder::new()
        .name("tower-gzip-learner".into())
        .spawn(move || run(&shared, &settings, routes, &queue))
        .map_err(LearnError::Io)?;
    Ok(())
}

fn run(
    shared: &Shared,
    settings: &ThreadSettings,
    mut routes: Vec<RouteLearning>,
    queue: &Receiver<Taken>,
) {
    let cx = Context { shared, settings };
    let poll = |routes: &mut Vec<RouteLearning>| routes.iter_mut().for_each(|r| r.poll(&cx));
    poll(&mut routes);
    routes.iter().for_each(|r| r.report(&cx));
    let mut next_poll = Instant::now() + settings.poll_interval;
    loop {
        let wait = next_poll.saturating_duration_since(Instant::now());
        match queue.recv_timeout(wait) {
            Ok((route, client, body)) => routes[route].add(client, body, &cx),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        if Instant::now() >= next_poll {
            poll(&mut routes);
            next_poll = Instant::now() + settings.poll_interval;
        }
    }
}
