//! A route's dictionaries: published (built here), loaded (published by another instance),
//! announced (the newest), and retired (oldest first, past the number kept).

use bytes::Bytes;
use sha2::{Digest, Sha256};

use super::names::StoredName;
use super::shared::{Announcement, Context, RouteShared};
use super::stats::CurrentDictionary;
use crate::ContentCoding;
use crate::codec::MAX_DICTIONARY_LEN;
use crate::dictionary::{Dictionary, DictionaryService, link_header};
use crate::headers::UseAsDictionary;
use crate::sync::recover;

/// A dictionary a route can use, and its name in the storage.
#[derive(Debug)]
pub(crate) struct Held {
    pub(crate) name: StoredName,
    pub(crate) dictionary: Dictionary,
}

/// A route's usable dictionaries, oldest first (by version, then hash); the last is current.
#[derive(Debug, Default)]
pub(crate) struct Published {
    held: Vec<Held>,
}

impl Published {
    /// The current dictionary: the newest.
    pub(crate) fn current(&self) -> Option<&Held> {
        self.held.last()
    }

    /// How many are held.
    pub(crate) fn len(&self) -> usize {
        self.held.len()
    }

    /// The newest version held, 0 when none is.
    pub(crate) fn newest_version(&self) -> u64 {
        self.held.iter().map(|h| h.name.version).max().unwrap_or(0)
    }

    /// Publishes a dictionary built here: to the storage (if any), then for use. `false` if
    /// it could not be used.
    pub(crate) fn publish(
        &mut self,
        route: &RouteShared,
        name: StoredName,
        bytes: Bytes,
        savings: f64,
        cx: &Context<'_>,
    ) -> bool {
        if let Some(storage) = &cx.settings.storage {
            if let Err(error) = storage.put(&name.to_name(&route.key), &bytes) {
                // Still used here; other instances build their own.
                tracing::warn!(route = route.pattern.as_str(), %error, "learned dictionary: not stored");
            }
        }
        if !self.adopt(route, name, bytes, cx) {
            return false;
        }
        route.counters.update(|s| {
            s.published += 1;
            if let Some(c) = s.current.as_mut().filter(|c| c.hash == name.hash) {
                c.built_savings = Some(savings);
            }
        });
        true
    }

    /// Makes `bytes` usable: stored, served, announced if it is the newest; then retires the
    /// oldest past the number kept. `false` if it is no dictionary.
    fn adopt(
        &mut self,
        route: &RouteShared,
        name: StoredName,
        bytes: Bytes,
        cx: &Context<'_>,
    ) -> bool {
        let metadata =
            UseAsDictionary::new(route.pattern.as_str()).with_id(format!("v{}", name.version));
        let Ok(mut dictionary) = Dictionary::new(bytes, metadata) else {
            return false;
        };
        dictionary = dictionary.with_level(ContentCoding::Dcz, name.dcz_level);
        if name.dcb_quality > 0 {
            dictionary = dictionary.with_level(ContentCoding::Dcb, name.dcb_quality);
        }
        cx.shared.store.insert(dictionary.clone());
        let service = DictionaryService::new(dictionary.clone()).max_age(cx.settings.max_age);
        recover(cx.shared.served.write()).insert(name.hash, service);
        self.held.push(Held { name, dictionary });
        self.held.sort_by_key(|h| (h.name.version, h.name.hash));
        self.retire(route, cx);
        self.announce(route, cx);
        true
    }

    /// Retires the oldest dictionaries past the number kept: no longer served, used, or
    /// (with a storage) stored.
    fn retire(&mut self, route: &RouteShared, cx: &Context<'_>) {
        while self.held.len() > cx.settings.keep {
            let old = self.held.remove(0);
            cx.shared.store.remove(&old.name.hash);
            recover(cx.shared.served.write()).remove(&old.name.hash);
            if let Some(storage) = &cx.settings.storage {
                if let Err(error) = storage.delete(&old.name.to_name(&route.key)) {
                    tracing::warn!(%error, "learned dictionary: not deleted");
                }
            }
            tracing::info!(
                route = route.pattern.as_str(),
                version = old.name.version,
                "learned dictionary retired"
            );
            route.counters.update(|s| s.retired += 1);
        }
    }

    /// Announces the newest dictionary (`Link` on the route's responses) and reports it.
    fn announce(&self, route: &RouteShared, cx: &Context<'_>) {
        let Some(current) = self.held.last() else {
            return;
        };
        let url = format!(
            "{}{}",
            cx.shared.url_prefix,
            crate::hex::encode(&current.name.hash)
        );
        *recover(route.link.write()) = link_header(&url).map(|link| Announcement {
            link,
            held: current.dictionary.available_dictionary(),
        });
        let snapshot = CurrentDictionary {
            hash: current.name.hash,
            version: current.name.version,
            len: current.dictionary.bytes().len(),
            url,
            dcz_level: current.name.dcz_level,
            built_savings: None,
            savings: None,
        };
        route.counters.update(|s| {
            if s.current.as_ref().map(|c| c.hash) != Some(snapshot.hash) {
                s.current = Some(snapshot);
            }
            s.held = self.held.len();
        });
    }

    /// Loads the route's dictionaries another instance published (the newest kept, those
    /// not held yet), checking each against the hash in its name. `true` if the current
    /// dictionary changed.
    pub(crate) fn poll(&mut self, route: &RouteShared, cx: &Context<'_>) -> bool {
        let Some(storage) = &cx.settings.storage else {
            return false;
        };
        let names = match storage.list(&format!("{}/", route.key)) {
            Ok(names) => names,
            Err(error) => {
                tracing::warn!(%error, "learned dictionaries: storage not listed");
                return false;
            }
        };
        let mut listed: Vec<StoredName> = names
            .iter()
            .filter_map(|n| StoredName::parse(&route.key, n))
            .collect();
        listed.sort_by_key(|n| std::cmp::Reverse((n.version, n.hash)));
        // Past the newest kept, every instance would retire them: the storage stays bounded.
        for old in listed.split_off(cx.settings.keep.min(listed.len())) {
            if let Err(error) = storage.delete(&old.to_name(&route.key)) {
                tracing::warn!(%error, "learned dictionary: not deleted");
            }
        }
        let current = self.held.last().map(|h| h.name);
        for name in listed.into_iter().rev() {
            if self.held.iter().any(|h| h.name.hash == name.hash)
                || !self.newer_than_oldest_kept(name, cx)
            {
                continue;
            }
            match storage.get(&name.to_name(&route.key), MAX_DICTIONARY_LEN) {
                Ok(Some(bytes)) if Sha256::digest(&bytes)[..] == name.hash => {
                    if self.adopt(route, name, bytes.into(), cx) {
                        route.counters.update(|s| s.loaded += 1);
                        tracing::info!(
                            route = route.pattern.as_str(),
                            version = name.version,
                            "learned dictionary loaded"
                        );
                    }
                }
                Ok(Some(_)) => tracing::warn!(
                    version = name.version,
                    "learned dictionary: bytes do not match its name"
                ),
                Ok(None) => {}
                Err(error) => tracing::warn!(%error, "learned dictionary: not read"),
            }
        }
        self.held.last().map(|h| h.name) != current
    }

    /// Whether `name` would be kept beside what is held (else loading it is wasted).
    fn newer_than_oldest_kept(&self, name: StoredName, cx: &Context<'_>) -> bool {
        self.held.len() < cx.settings.keep
            || self.held.first().is_some_and(|oldest| {
                (name.version, name.hash) > (oldest.name.version, oldest.name.hash)
            })
    }
}
