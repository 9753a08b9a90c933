//! The learner's thread: takes finished samples from a bounded queue, builds and checks
//! dictionaries, and polls the storage. A plain thread, not a runtime's worker, so that a
//! build (seconds of CPU) never holds up a response; it ends when the last handle is gone.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::LearnError;
use super::config::LearnerBuilder;
use super::learner::{RouteShared, Shared};
use super::route::RouteLearning;
use super::storage::DictionaryStorage;

/// What the thread was configured with.
pub(crate) struct Settings {
    pub(crate) storage: Option<Arc<dyn DictionaryStorage>>,
    pub(crate) poll_interval: Duration,
    pub(crate) margin: f64,
    pub(crate) check_every: usize,
    pub(crate) keep: usize,
    pub(crate) max_age: Duration,
}

/// What a route's learning reads besides itself.
pub(crate) struct Context<'a> {
    pub(crate) shared: &'a Shared,
    pub(crate) settings: &'a Settings,
}

impl Context<'_> {
    pub(crate) fn route(&self, index: usize) -> &RouteShared {
        &self.shared.routes[index]
    }
}

pub(crate) fn spawn(
    shared: Arc<Shared>,
    queue: Receiver<(usize, Bytes)>,
    config: LearnerBuilder,
) -> Result<(), LearnError> {
    let settings = Settings {
        storage: config.storage,
        poll_interval: config.poll_interval,
        margin: config.margin,
        check_every: config.check_every,
        keep: config.keep,
        max_age: config.max_age,
    };
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
    settings: &Settings,
    mut routes: Vec<RouteLearning>,
    queue: &Receiver<(usize, Bytes)>,
) {
    let cx = Context { shared, settings };
    let poll = |routes: &mut Vec<RouteLearning>| routes.iter_mut().for_each(|r| r.poll(&cx));
    poll(&mut routes);
    routes.iter().for_each(|r| r.report(&cx));
    let mut next_poll = Instant::now() + settings.poll_interval;
    loop {
        let wait = next_poll.saturating_duration_since(Instant::now());
        match queue.recv_timeout(wait) {
            Ok((route, body)) => routes[route].add(body, &cx),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        if Instant::now() >= next_poll {
            poll(&mut routes);
            next_poll = Instant::now() + settings.poll_interval;
        }
    }
}
