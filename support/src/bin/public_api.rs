//! Counts the public API from rustdoc's JSON: the items and inherent methods the crate
//! defines and exports, each once (however many paths reach it), and lists the items that
//! more than one path reaches. `-l` lists every item.
//!
//! ```sh
//! RUSTC_BOOTSTRAP=1 cargo rustdoc --lib --all-features -- -Z unstable-options --output-format json
//! cargo run -q -p tower-gzip-support --bin public_api -- target/doc/tower_gzip.json
//! ```

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

struct Walk<'a> {
    index: &'a serde_json::Map<String, Value>,
    /// Each item's paths, the first one it was reached by first.
    paths: HashMap<String, Vec<String>>,
}

fn kind(item: &Value) -> &str {
    item["inner"]
        .as_object()
        .and_then(|o| o.keys().next())
        .map_or("?", |k| k.as_str())
}

impl Walk<'_> {
    fn module(&mut self, id: &str, path: &str) {
        let items = self.index[id]["inner"]["module"]["items"]
            .as_array()
            .cloned();
        for child in items.unwrap_or_default() {
            let Some(item) = self.index.get(&child.to_string()) else {
                continue;
            };
            match kind(item) {
                "use" => self.reexport(&item["inner"]["use"], path),
                "impl" => {}
                _ => {
                    let name = item["name"].as_str().unwrap_or("?");
                    self.visit(&child.to_string(), &format!("{path}::{name}"));
                }
            }
        }
    }

    fn reexport(&mut self, used: &Value, path: &str) {
        let Some(target) = used["id"].as_u64().map(|id| id.to_string()) else {
            return;
        };
        let ours = self.index.get(&target).is_some_and(|t| t["crate_id"] == 0);
        if !ours {
            return;
        }
        match used["is_glob"].as_bool() == Some(true) {
            true => self.module(&target, path),
            false => self.visit(
                &target,
                &format!("{path}::{}", used["name"].as_str().unwrap_or("?")),
            ),
        }
    }

    fn visit(&mut self, id: &str, path: &str) {
        let first = !self.paths.contains_key(id);
        self.paths
            .entry(id.to_owned())
            .or_default()
            .push(path.to_owned());
        if !first {
            return;
        }
        let item = &self.index[id];
        let kind = kind(item);
        if kind == "module" {
            self.module(id, path);
        }
        let impls = item["inner"][kind]["impls"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for imp in impls {
            let Some(imp) = self.index.get(&imp.to_string()) else {
                continue;
            };
            let imp = &imp["inner"]["impl"];
            let inherent = imp["trait"].is_null() && imp["is_synthetic"] != true;
            if !inherent || !imp["blanket_impl"].is_null() {
                continue;
            }
            for method in imp["items"].as_array().cloned().unwrap_or_default() {
                let id = method.to_string();
                let Some(m) = self.index.get(&id) else {
                    continue;
                };
                if m["visibility"] == "public" && !self.paths.contains_key(&id) {
                    let name = m["name"].as_str().unwrap_or("?");
                    self.paths.insert(id, vec![format!("{path}::{name}")]);
                }
            }
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let file = args
        .next()
        .unwrap_or_else(|| "target/doc/tower_gzip.json".into());
    let list = args.any(|a| a == "-l");
    let json: Value =
        serde_json::from_slice(&std::fs::read(&file).expect("rustdoc JSON")).expect("JSON");
    let index = json["index"].as_object().expect("an index");
    let mut walk = Walk {
        index,
        paths: HashMap::new(),
    };
    let root = json["root"].to_string();
    walk.module(&root, "tower_gzip");
    let mut kinds = BTreeMap::<&str, usize>::new();
    for id in walk.paths.keys() {
        *kinds.entry(kind(&index[id])).or_default() += 1;
    }
    let types: usize = ["struct", "enum", "trait", "type_alias", "union"]
        .iter()
        .map(|k| kinds.get(k).copied().unwrap_or(0))
        .sum();
    println!(
        "public items: {} types: {types} {kinds:?}",
        walk.paths.len()
    );
    let mut twice: Vec<String> = walk
        .paths
        .iter()
        .filter(|(id, paths)| paths.len() > 1 && kind(&index[id.as_str()]) != "module")
        .map(|(_, paths)| paths.join(" = "))
        .collect();
    twice.sort();
    println!("items with more than one path: {}", twice.len());
    for paths in twice {
        println!("  {paths}");
    }
    if list {
        let mut all: Vec<_> = walk
            .paths
            .iter()
            .map(|(id, p)| (p[0].clone(), kind(&index[id])))
            .collect();
        all.sort();
        for (path, kind) in all {
            println!("{kind} {path}");
        }
    }
}
