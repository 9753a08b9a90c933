//! One route's learning, on the learner's thread: samples in, a dictionary built once enough
//! are in, checked on fresh samples, rebuilt when what it saves falls.

use std::time::Instant;

use bytes::{Bytes, BytesMut};
use sha2::{Digest, Sha256};

use super::names::StoredName;
use super::publish::{Held, Published};
use super::samples::Samples;
use super::shared::{Context, RouteShared};
use super::stats::{Gathering, LearnPhase};
use crate::codec::OneShot;
use crate::dictionary::{BuiltDictionary, DictionaryBuilder};
use crate::{CompressionLevel, ContentCoding};

/// Fresh samples a check measures at most (the newest).
const CHECKED: usize = 64;
/// Fewer fresh samples than this say nothing yet.
const MIN_CHECKED: usize = 8;

/// What the route is doing.
#[derive(Debug)]
enum RoutePhase {
    /// Building from the samples numbered `since` or later, once there are enough.
    Gathering { since: u64 },
    /// A current dictionary (`held`'s last), checked every `check_every` fresh samples
    /// against the savings it started with (`None` until its first check, for one loaded
    /// from the storage).
    Serving {
        fresh_from: u64,
        baseline: Option<f64>,
        unchecked: usize,
    },
}

#[derive(Debug)]
pub(crate) struct RouteLearning {
    pub(crate) index: usize,
    samples: Samples,
    phase: RoutePhase,
    pub(crate) published: Published,
}

impl RouteLearning {
    pub(crate) fn new(index: usize, route: &RouteShared) -> Self {
        let c = &route.config;
        RouteLearning {
            index,
            samples: Samples::new(c.max_samples, c.max_sample_bytes),
            phase: RoutePhase::Gathering { since: 0 },
            published: Published::default(),
        }
    }

    pub(crate) fn add(&mut self, client: u64, body: Bytes, cx: &Context<'_>) {
        self.samples.push(client, body);
        let min = cx.route(self.index).config.min_samples;
        let needed = cx.settings.anonymity.clients();
        match &mut self.phase {
            RoutePhase::Gathering { since } => {
                // Counting clients walks the samples: only once there are enough of them.
                if self.samples.count_since(*since) >= min
                    && self.samples.clients_since(*since) >= needed
                {
                    let since = *since;
                    self.build(since, cx);
                }
            }
            RoutePhase::Serving { unchecked, .. } => {
                *unchecked += 1;
                if *unchecked >= cx.settings.check_every {
                    self.check(cx);
                }
            }
        }
        self.report(cx);
    }

    fn build(&mut self, since: u64, cx: &Context<'_>) {
        let route = cx.route(self.index);
        route
            .counters
            .update(|s| s.phase = Some(LearnPhase::Building));
        let samples = self.samples.with_clients(since);
        let started = Instant::now();
        let (built, fragments) = make(&samples, route, cx);
        let took = started.elapsed();
        let next = self.samples.next();
        let built = match built {
            Ok(built) => built,
            Err(error) => {
                tracing::warn!(route = route.pattern.as_str(), %error, "learned dictionary: build failed");
                route.counters.update(|s| {
                    s.failed_builds += 1;
                    s.last_failure = Some(error);
                });
                self.phase = RoutePhase::Gathering { since: next };
                return;
            }
        };
        let savings = built_savings(&built);
        let name = StoredName {
            version: self.newest_version() + 1,
            dcz_level: built.dcz_level,
            dcb_quality: built.dcb_quality.unwrap_or(0),
            hash: Sha256::digest(&built.bytes).into(),
        };
        tracing::info!(
            route = route.pattern.as_str(),
            samples = samples.len(),
            fragments,
            len = built.bytes.len(),
            ms = took.as_millis() as u64,
            savings,
            "learned dictionary built"
        );
        route.counters.update(|s| s.builds += 1);
        if self.publish(name, built.bytes, savings, cx) {
            self.phase = RoutePhase::Serving {
                fresh_from: next,
                baseline: Some(savings),
                unchecked: 0,
            };
        } else {
            self.phase = RoutePhase::Gathering { since: next };
        }
    }

    /// Measures the current dictionary on the newest fresh samples; starts gathering for
    /// the next one when its savings fell by more than the margin.
    fn check(&mut self, cx: &Context<'_>) {
        let RoutePhase::Serving {
            fresh_from,
            baseline,
            unchecked,
        } = &mut self.phase
        else {
            return;
        };
        let Some(current) = self.published.current() else {
            return;
        };
        let fresh: Vec<&Bytes> = self
            .samples
            .since(*fresh_from)
            .rev()
            .take(CHECKED)
            .collect();
        if fresh.len() < MIN_CHECKED {
            return;
        }
        *unchecked = 0;
        let savings = savings(&fresh, current);
        let route = cx.route(self.index);
        route.counters.update(|s| {
            if let Some(c) = s.current.as_mut() {
                c.savings = Some(savings);
            }
        });
        match *baseline {
            None => *baseline = Some(savings),
            Some(built) if savings < built - cx.settings.margin => {
                tracing::info!(
                    route = route.pattern.as_str(),
                    built,
                    savings,
                    "learned dictionary: savings fell, building the next"
                );
                self.phase = RoutePhase::Gathering {
                    since: self.samples.next(),
                };
            }
            Some(_) => {}
        }
    }

    /// A dictionary of this route is now current (built here or loaded): check it from the
    /// next sample on.
    pub(crate) fn serve_from_now(&mut self, baseline: Option<f64>) {
        self.phase = RoutePhase::Serving {
            fresh_from: self.samples.next(),
            baseline,
            unchecked: 0,
        };
    }

    pub(crate) fn newest_version(&self) -> u64 {
        self.published.newest_version()
    }

    /// Publishes a dictionary built here (see [`Published::publish`]).
    pub(crate) fn publish(
        &mut self,
        name: StoredName,
        bytes: Bytes,
        savings: f64,
        cx: &Context<'_>,
    ) -> bool {
        let route = cx.route(self.index);
        self.published.publish(route, name, bytes, savings, cx)
    }

    /// Loads what other instances published; a new current dictionary is checked from the
    /// next sample on.
    pub(crate) fn poll(&mut self, cx: &Context<'_>) {
        if self.published.poll(cx.route(self.index), cx) {
            self.serve_from_now(None);
            self.report(cx);
        }
    }

    pub(crate) fn report(&self, cx: &Context<'_>) {
        let phase = match self.phase {
            RoutePhase::Gathering { .. } => LearnPhase::Gathering,
            RoutePhase::Serving { .. } => LearnPhase::Serving,
        };
        // Gathering, the samples for the next build; serving, all held.
        let since = match self.phase {
            RoutePhase::Gathering { since } => since,
            RoutePhase::Serving { .. } => 0,
        };
        let route = cx.route(self.index);
        let gathering = Gathering {
            fresh: self.samples.count_since(since),
            needed: route.config.min_samples,
            clients: self.samples.clients_since(since),
            clients_needed: cx.settings.anonymity.clients(),
        };
        route.counters.update(|s| {
            s.phase = Some(phase);
            s.samples = self.samples.len();
            s.sample_bytes = self.samples.bytes();
            s.held = self.published.len();
            s.gathering = gathering;
        });
    }
}

/// Builds from the fragments of `samples` enough clients were sent (the builders see only
/// those: whatever kind of dictionary they make, its content comes from them); a failure
/// in words. Returns how many fragments there were.
fn make(
    samples: &[(u64, Bytes)],
    route: &RouteShared,
    cx: &Context<'_>,
) -> (Result<BuiltDictionary, String>, usize) {
    let anonymity = cx.settings.anonymity;
    let material = anonymity.fragments_by_sample(samples);
    let whole: Vec<&Bytes> = samples.iter().map(|(_, body)| body).collect();
    // Held-out samples judge whole; the training ones' fragments make the candidates.
    let built = DictionaryBuilder::new(&whole)
        .material(&material)
        .max_size(route.config.max_dictionary_size)
        .cpu_budget(route.config.cpu_budget.0, route.config.cpu_budget.1)
        .build()
        .map_err(|error| {
            let kept: usize = material.iter().flatten().map(Bytes::len).sum();
            format!(
                "{error} (of {} samples, {} runs of {kept} B in all were sent to {} clients \
                 or more)",
                samples.len(),
                material.iter().map(Vec::len).sum::<usize>(),
                anonymity.clients()
            )
        });
    let fragments = material.iter().map(Vec::len).sum();
    (built, fragments)
}

/// The share of plain zstd 3's bytes the chosen dictionary saved on the builder's held-out
/// samples.
fn built_savings(built: &BuiltDictionary) -> f64 {
    let plain = built
        .report
        .iter()
        .find(|r| r.kind.is_none() && r.coding == ContentCoding::Zstd)
        .map_or(0, |r| r.bytes);
    let chosen = built
        .report
        .iter()
        .find(|r| r.chosen && r.coding == ContentCoding::Dcz)
        .map_or(plain, |r| r.bytes);
    1.0 - chosen as f64 / plain.max(1) as f64
}

/// The share of plain zstd 3's bytes `held` saves on `samples`, at its `dcz` level.
fn savings(samples: &[&Bytes], held: &Held) -> f64 {
    let plain = OneShot::new(ContentCoding::Zstd).level(CompressionLevel::Precise(3));
    let level = CompressionLevel::Precise(held.name.dcz_level);
    let dcz = OneShot::new(ContentCoding::Dcz)
        .level(level)
        .dictionary(&held.dictionary);
    let (mut a, mut b) = (0usize, 0usize);
    let mut out = BytesMut::new();
    for sample in samples {
        out.clear();
        if plain.encode(sample, &mut out).is_err() {
            continue;
        }
        let plain_len = out.len();
        out.clear();
        if dcz.encode(sample, &mut out).is_ok() {
            a += plain_len;
            b += out.len();
        }
    }
    1.0 - b as f64 / a.max(1) as f64
}
