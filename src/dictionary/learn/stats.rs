//! What a learner did, per route: samples taken and refused, builds, dictionaries published,
//! loaded and retired, and what the current one saves.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::Refusal;
use crate::sync::lock;

/// One route's learning. Its `Debug` names each refusal and prints the hash in hex.
#[derive(Clone)]
#[non_exhaustive]
pub struct LearnedRouteStats {
    /// The route's `match` pattern.
    pub pattern: String,
    /// What the learner is doing for it.
    pub phase: LearnPhase,
    /// Responses taken as samples.
    pub taken: u64,
    /// Responses considered and refused, by [`Refusal::index`] order (see [`refusals`](Self::refusals)).
    refused: [u64; Refusal::ALL.len()],
    /// Samples held now, and their bytes.
    pub samples: usize,
    /// The bytes of [`samples`](Self::samples).
    pub sample_bytes: usize,
    /// Dictionaries built here.
    pub builds: u64,
    /// Builds that found nothing worth serving (samples with nothing in common).
    pub failed_builds: u64,
    /// Why the last build failed, in words (also a `warn` event each time), if one did.
    pub last_failure: Option<String>,
    /// Dictionaries this instance published (built here and, with storage, written there).
    pub published: u64,
    /// Dictionaries loaded from the storage (published by another instance).
    pub loaded: u64,
    /// Dictionaries retired (no longer used, oldest first).
    pub retired: u64,
    /// Dictionaries usable now (the current one and those kept for clients that hold them).
    pub held: usize,
    /// The dictionary announced now, if any.
    pub current: Option<CurrentDictionary>,
    /// How many distinct clients the samples gathered for the next build were sent to (the
    /// samples held, while a dictionary is current).
    pub clients: usize,
    /// How many distinct clients a dictionary's content must come from
    /// ([`Anonymity`](super::Anonymity)'s `k`): nothing is built before samples from that
    /// many are in.
    pub clients_needed: usize,
    /// Why no dictionary is published yet, in words (`None` once one is current).
    pub pending: Option<String>,
}

impl LearnedRouteStats {
    /// How many responses were refused, by reason: every [`Refusal`] with its count, zeros
    /// included.
    pub fn refusals(&self) -> impl Iterator<Item = (Refusal, u64)> + '_ {
        Refusal::ALL.into_iter().zip(self.refused.iter().copied())
    }

    /// How many responses were refused for `reason`.
    #[cfg(test)]
    pub(crate) fn refused(&self, reason: Refusal) -> u64 {
        self.refused[reason.index()]
    }
}

/// What the learner is doing for a route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LearnPhase {
    /// Taking samples for the first dictionary, or for the next once the current one's
    /// savings fell.
    Gathering,
    /// Building a dictionary (on the learner's thread).
    Building,
    /// Serving the current dictionary and checking what it saves.
    Serving,
}

impl fmt::Debug for LearnedRouteStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let refused: BTreeMap<&str, u64> = self
            .refusals()
            .map(|(reason, count)| (reason.as_str(), count))
            .filter(|&(_, count)| count > 0)
            .collect();
        f.debug_struct("LearnedRouteStats")
            .field("pattern", &self.pattern)
            .field("phase", &self.phase)
            .field("taken", &self.taken)
            .field("refused", &refused)
            .field("samples", &self.samples)
            .field("sample_bytes", &self.sample_bytes)
            .field("builds", &self.builds)
            .field("failed_builds", &self.failed_builds)
            .field("last_failure", &self.last_failure)
            .field("published", &self.published)
            .field("loaded", &self.loaded)
            .field("retired", &self.retired)
            .field("held", &self.held)
            .field("current", &self.current)
            .field("clients", &self.clients)
            .field("clients_needed", &self.clients_needed)
            .field("pending", &self.pending)
            .finish()
    }
}

/// The dictionary a route announces now. Its `Debug` prints the hash in hex.
#[derive(Clone)]
#[non_exhaustive]
pub struct CurrentDictionary {
    /// Its SHA-256.
    pub hash: [u8; 32],
    /// Its version (the `id` it is served with is `v<version>`).
    pub version: u64,
    /// Its length in bytes.
    pub len: usize,
    /// Where it is served.
    pub url: String,
    /// The `dcz` level it was built for.
    pub dcz_level: i32,
    /// The share of plain zstd 3's bytes it saved on the samples that judged it when built
    /// (`None` for one loaded from storage: unknown until checked).
    pub built_savings: Option<f64>,
    /// The share it saved at its last check on fresh samples, if checked yet.
    pub savings: Option<f64>,
}

impl fmt::Debug for CurrentDictionary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CurrentDictionary")
            .field("hash", &crate::hex::encode(&self.hash))
            .field("version", &self.version)
            .field("len", &self.len)
            .field("url", &self.url)
            .field("dcz_level", &self.dcz_level)
            .field("built_savings", &self.built_savings)
            .field("savings", &self.savings)
            .finish()
    }
}

/// The counters the request path bumps (atomics) and the snapshot the learner's thread
/// writes (a lock taken by it and by [`Learner::stats`](super::Learner::stats) only).
#[derive(Debug, Default)]
pub(crate) struct RouteCounters {
    taken: AtomicU64,
    refused: [AtomicU64; Refusal::ALL.len()],
    snapshot: Mutex<Snapshot>,
}

/// What the learner's thread reports.
#[derive(Clone, Debug, Default)]
pub(crate) struct Snapshot {
    pub(crate) phase: Option<LearnPhase>,
    pub(crate) samples: usize,
    pub(crate) sample_bytes: usize,
    pub(crate) builds: u64,
    pub(crate) failed_builds: u64,
    pub(crate) last_failure: Option<String>,
    pub(crate) published: u64,
    pub(crate) loaded: u64,
    pub(crate) retired: u64,
    pub(crate) held: usize,
    pub(crate) current: Option<CurrentDictionary>,
    pub(crate) gathering: Gathering,
}

/// Where the samples for the next build stand.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Gathering {
    /// Samples since the last build (or since the current dictionary).
    pub(crate) fresh: usize,
    /// How many a build waits for.
    pub(crate) needed: usize,
    /// Distinct clients among them.
    pub(crate) clients: usize,
    /// How many distinct clients a build waits for.
    pub(crate) clients_needed: usize,
}

impl RouteCounters {
    pub(crate) fn taken(&self) {
        self.taken.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn refused(&self, reason: Refusal) {
        self.refused[reason.index()].fetch_add(1, Ordering::Relaxed);
        tracing::debug!(
            reason = reason.as_str(),
            "learned dictionaries: sample refused"
        );
    }

    pub(crate) fn update(&self, change: impl FnOnce(&mut Snapshot)) {
        change(&mut lock(&self.snapshot));
    }

    pub(crate) fn stats(&self, pattern: &str) -> LearnedRouteStats {
        let s = lock(&self.snapshot).clone();
        let refused = std::array::from_fn(|i| self.refused[i].load(Ordering::Relaxed));
        let taken = self.taken.load(Ordering::Relaxed);
        let pending = s.current.is_none().then(|| pending(&s, taken, &refused));
        LearnedRouteStats {
            pattern: pattern.to_owned(),
            phase: s.phase.unwrap_or(LearnPhase::Gathering),
            taken,
            refused,
            samples: s.samples,
            sample_bytes: s.sample_bytes,
            builds: s.builds,
            failed_builds: s.failed_builds,
            last_failure: s.last_failure,
            published: s.published,
            loaded: s.loaded,
            retired: s.retired,
            held: s.held,
            current: s.current,
            clients: s.gathering.clients,
            clients_needed: s.gathering.clients_needed,
            pending,
        }
    }
}

/// Why a route has no dictionary yet, in words.
fn pending(s: &Snapshot, taken: u64, refused: &[u64; Refusal::ALL.len()]) -> String {
    let g = s.gathering;
    let unknown = refused[Refusal::UnknownClient.index()];
    if taken == 0 && unknown > 0 {
        return format!(
            "no client is known for any request ({unknown} refused): give the learner the \
             peer's address or a ClientId (LearnerBuilder::client); without them nothing \
             is published"
        );
    }
    let clients = format!(
        "samples from {} distinct clients, {} needed",
        g.clients, g.clients_needed
    );
    match s.phase {
        Some(LearnPhase::Building) => format!("building ({clients})"),
        _ if g.clients < g.clients_needed => format!(
            "{clients}: a dictionary holds only what that many clients were sent \
             ({} samples in, a build needs {})",
            g.fresh, g.needed
        ),
        _ if g.fresh < g.needed => format!("{} of {} samples in ({clients})", g.fresh, g.needed),
        _ => match &s.last_failure {
            Some(why) => format!("the last build failed: {why}"),
            None => format!("{} samples in ({clients})", g.fresh),
        },
    }
}
