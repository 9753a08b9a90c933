//! Under churn (dictionaries built here and published by other instances, in any order),
//! what a route holds, serves, stores and leaves in the storage stays within `keep`.

use std::collections::HashMap;
use std::sync::RwLock;
use std::time::Duration;

use bytes::Bytes;
use proptest::prelude::*;
use sha2::{Digest, Sha256};

use super::LearnedRoute;
use super::names::StoredName;
use super::route::RouteLearning;
use super::shared::{Context, RouteShared, Shared, ThreadSettings};
use super::storage::DictionaryStorage;
use super::tests::MemStorage;
use crate::dictionary::DictionaryStore;

#[derive(Clone, Debug)]
enum Step {
    /// A dictionary of this many bytes built here.
    Built(usize),
    /// Another instance writes one, this many versions past the newest held; then a poll.
    Foreign(u64, usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (100usize..4000).prop_map(Step::Built),
        (0u64..3, 100usize..4000).prop_map(|(ahead, len)| Step::Foreign(ahead, len)),
    ]
}

fn bytes(n: u64, len: usize) -> Bytes {
    let mut b = format!("dictionary {n} ").into_bytes();
    b.resize(len, b'.');
    Bytes::from(b)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn held_served_and_stored_dictionaries_stay_bounded(
        keep in 1usize..4,
        steps in proptest::collection::vec(step(), 1..40),
    ) {
        let route = RouteShared::new(&LearnedRoute::new("/api/*")).unwrap();
        let key = route.key.clone();
        let shared = Shared {
            routes: vec![route],
            store: DictionaryStore::new(1 << 20),
            url_prefix: "/d/".into(),
            filter: None,
            clients: super::client::Clients::new(None),
            credentials: Vec::new(),
            warned_unknown: Default::default(),
            served: RwLock::new(HashMap::new()),
        };
        let storage = MemStorage::default();
        let settings = ThreadSettings {
            storage: Some(std::sync::Arc::new(storage.clone())),
            poll_interval: Duration::from_secs(1),
            margin: 0.1,
            check_every: 10,
            keep,
            max_age: Duration::from_secs(60),
            anonymity: Default::default(),
        };
        let cx = Context { shared: &shared, settings: &settings };
        let mut learning = RouteLearning::new(0, &shared.routes[0]);
        for (n, step) in steps.into_iter().enumerate() {
            let n = n as u64;
            match step {
                Step::Built(len) => {
                    let bytes = bytes(n, len);
                    let name = StoredName {
                        version: learning.newest_version() + 1,
                        dcz_level: 3,
                        dcb_quality: 0,
                        hash: Sha256::digest(&bytes).into(),
                    };
                    prop_assert!(learning.publish(name, bytes, 0.3, &cx));
                }
                Step::Foreign(ahead, len) => {
                    let bytes = bytes(n, len);
                    let name = StoredName {
                        version: learning.newest_version() + ahead,
                        dcz_level: 3,
                        dcb_quality: 0,
                        hash: Sha256::digest(&bytes).into(),
                    };
                    storage.put(&name.to_name(&key), &bytes).unwrap();
                    learning.poll(&cx);
                    prop_assert!(storage.list("").unwrap().len() <= keep);
                }
            }
            let held = learning.published.len();
            prop_assert!(held >= 1 && held <= keep);
            prop_assert_eq!(crate::sync::recover(shared.served.read()).len(), held);
            prop_assert_eq!(shared.store.len(), held);
            let stats = shared.routes[0].counters.stats("/api/*");
            prop_assert_eq!(stats.held, held);
            let current = stats.current.expect("a current dictionary");
            let newest = learning.published.current().unwrap();
            prop_assert_eq!(current.hash, newest.name.hash);
            let adopted = stats.published + stats.loaded;
            prop_assert_eq!(stats.retired, adopted - held as u64);
        }
    }
}
