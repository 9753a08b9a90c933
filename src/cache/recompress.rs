//! The background worker: entries hit again are recompressed at their coding's densest
//! web-safe level on one thread of the cache's own (never a runtime worker), within a
//! share of one core, and pause while the layer reports CPU pressure.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};

use super::key::Key;
use super::{Fill, Shared, Stage};
use crate::codec::OneShot;
use crate::dictionary::Dictionary;
use crate::sync::lock;
use crate::{CodecPool, CompressionLevel, ContentCoding};

/// The `tracing` target of the cache's events.
const TARGET: &str = "tower_gzip::cache";

/// Jobs waiting for the worker; past this a hit does not queue its entry (a later one will).
const QUEUE: usize = 64;

/// The densest level each coding is recompressed at: br 11 and gzip/deflate 9 are their
/// codings' best; zstd stops at 19, the densest level whose window stays within RFC 9659's
/// 8 MiB.
pub(crate) fn densest(coding: ContentCoding) -> CompressionLevel {
    match coding.base() {
        ContentCoding::Zstd => CompressionLevel::Precise(19),
        _ => CompressionLevel::Best,
    }
}

/// One body to compress at its coding's densest level: its key (which says what it is
/// compressed with), its identity body, and what to do with the result. Without the body
/// (an entry filed by its validator), the worker decodes the entry's bytes for it.
pub(crate) struct Job {
    pub(crate) key: Key,
    pub(crate) body: Option<Bytes>,
    pub(crate) dictionary: Option<Dictionary>,
    pub(crate) kind: JobKind,
}

/// What a job's result is for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum JobKind {
    /// Replaces a queued entry's bytes, when smaller.
    Recompress,
    /// Files a body too large to compress on the request path (with its fingerprint).
    File(u64),
}

/// Whether the layer's CPU is under pressure (the governor's signal).
pub(crate) type Pressure = Arc<dyn Fn() -> bool + Send + Sync>;

/// What the worker has done, in counters.
#[derive(Debug, Default)]
pub(crate) struct WorkerCounts {
    pub(crate) done: AtomicU64,
    pub(crate) saved: AtomicU64,
    pub(crate) dropped: AtomicU64,
    pub(crate) busy_nanos: AtomicU64,
    pub(crate) rest_nanos: AtomicU64,
}

/// The handle the cache keeps: a sender to the worker's thread, started at the first job.
pub(crate) struct Recompressor {
    share: f64,
    pool: CodecPool,
    pressure: Option<Pressure>,
    sender: Mutex<Option<SyncSender<Job>>>,
    /// Keys with a job queued or running: a body missed again meanwhile is not queued twice.
    pending: Pending,
    pub(crate) counts: Arc<WorkerCounts>,
}

/// The keys of the jobs queued or running.
type Pending = Arc<Mutex<HashSet<Key>>>;

impl std::fmt::Debug for Recompressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recompressor")
            .field("share", &self.share)
            .field("counts", &self.counts)
            .finish_non_exhaustive()
    }
}

impl Recompressor {
    /// A worker that may use `share` of one core (0 < share <= 1).
    pub(crate) fn new(share: f64, pool: CodecPool, pressure: Option<Pressure>) -> Self {
        Recompressor {
            share: share.clamp(0.01, 1.0),
            pool,
            pressure,
            sender: Mutex::new(None),
            pending: Pending::default(),
            counts: Arc::default(),
        }
    }

    /// Queues `job` (or finds it queued already); false when the queue is full or the
    /// thread could not start.
    pub(crate) fn submit(&self, job: Job, shared: &Arc<Shared>) -> bool {
        let mut sender = lock(&self.sender);
        if sender.is_none() {
            *sender = self.start(shared.clone());
        }
        let Some(tx) = sender.as_ref() else {
            return false;
        };
        let key = job.key;
        if !lock(&self.pending).insert(key) {
            return true;
        }
        match tx.try_send(job) {
            Ok(()) => true,
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                lock(&self.pending).remove(&key);
                false
            }
        }
    }

    fn start(&self, shared: Arc<Shared>) -> Option<SyncSender<Job>> {
        let (tx, rx) = sync_channel(QUEUE);
        let worker = Worker {
            shared,
            share: self.share,
            pool: self.pool.clone(),
            pressure: self.pressure.clone(),
            pending: self.pending.clone(),
            counts: self.counts.clone(),
        };
        std::thread::Builder::new()
            .name("tower-gzip-recompress".into())
            .spawn(move || worker.run(rx))
            .ok()?;
        Some(tx)
    }
}

struct Worker {
    shared: Arc<Shared>,
    share: f64,
    pool: CodecPool,
    pressure: Option<Pressure>,
    pending: Pending,
    counts: Arc<WorkerCounts>,
}

impl Worker {
    /// Runs jobs until every cache holding the sender is gone.
    fn run(self, jobs: Receiver<Job>) {
        for job in jobs {
            if self.pressure.as_ref().is_some_and(|pressed| pressed()) {
                self.dropped(&job);
            } else {
                let started = Instant::now();
                self.recompress(&job);
                self.rest_after(started.elapsed());
            }
            lock(&self.pending).remove(&job.key);
        }
    }

    fn recompress(&self, job: &Job) {
        let coding = job.key.variant().coding;
        let one_shot = OneShot::new(coding)
            .pool(&self.pool)
            .against(job.dictionary.as_ref().map(Dictionary::codec));
        let decoded;
        let body = match &job.body {
            Some(body) => &body[..],
            None => match self.identity_of(&job.key, &one_shot) {
                Some(body) => {
                    decoded = body;
                    &decoded[..]
                }
                None => return self.dropped(job),
            },
        };
        let mut out = BytesMut::new();
        let encoded = one_shot.level(densest(coding)).encode(body, &mut out);
        if encoded.is_err() {
            self.dropped(job);
            return;
        }
        match job.kind {
            JobKind::Recompress => {
                let bytes = Bytes::copy_from_slice(&out);
                let saved = self.shared.store.recompressed(&job.key, bytes);
                tracing::debug!(
                    target: TARGET,
                    coding = coding.as_str(),
                    bytes = out.len(),
                    saved,
                    "recompressed"
                );
                self.counts.done.fetch_add(1, Ordering::Relaxed);
                self.counts.saved.fetch_add(saved, Ordering::Relaxed);
            }
            JobKind::File(print) => {
                // The densest level is not always the smallest (br 11 can lose to a lower
                // level on long repetitive text): the entry is the smaller of it and what
                // the layer's own level makes, as a recompression would keep.
                let level = CompressionLevel::Precise(job.key.variant().level.into());
                let mut served = BytesMut::new();
                let smaller = match one_shot.level(level).encode(body, &mut served) {
                    Ok(()) if served.len() < out.len() => &served,
                    _ => &out,
                };
                let fill = Fill {
                    key: job.key,
                    print,
                    lifetime: None,
                };
                self.shared.file(fill, smaller, Stage::Densest);
                self.counts.done.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// The identity bytes of the entry under `key`, decoded from what it holds (none when
    /// it is gone, or does not decode within the largest body the cache looks at).
    fn identity_of(&self, key: &Key, one_shot: &OneShot<'_>) -> Option<BytesMut> {
        let held = self.shared.store.peek(key)?;
        one_shot.decode(&held, self.shared.max_body).ok()
    }

    /// A job given up: a queued entry goes back to waiting for a later hit.
    fn dropped(&self, job: &Job) {
        if let JobKind::Recompress = job.kind {
            self.shared.store.unqueue(&job.key);
        }
        self.counts.dropped.fetch_add(1, Ordering::Relaxed);
    }

    /// Sleeps so that `busy` is at most `share` of the time since the job began.
    fn rest_after(&self, busy: Duration) {
        let rest = busy.mul_f64(1.0 / self.share - 1.0);
        nanos(&self.counts.busy_nanos, busy);
        nanos(&self.counts.rest_nanos, rest);
        std::thread::sleep(rest);
    }
}

fn nanos(counter: &AtomicU64, duration: Duration) {
    let nanos = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
    counter.fetch_add(nanos, Ordering::Relaxed);
}
