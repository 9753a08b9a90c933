//! Allocations and bytes per dictionary-compressed response: a 1 KiB and a 16 KiB JSON body
//! through `CompressionLayer` as `dcz` and `dcb` (a 16 KiB dictionary trained on other
//! responses of the same API), beside plain `zstd` and `br` from the same layer.
//!
//! ```text
//! cargo run --release -p tower-gzip-bench --bin dict_allocs
//! ```
//!
//! Then the bytes on API-like JSON as a public API serves it (pretty-printed records of a
//! GitHub-style issues API: URLs, nested users, labels, free text): a dictionary trained on
//! 300 responses, measured on 200 others whose ids, users and texts it has not seen.
//!
//! Each case runs 50 warm-up responses, then averages 200. Counted: Rust's allocator (the
//! tests' counting allocator); libzstd's own `malloc` calls are not seen here
//! (`bench/src/bin/allocs.rs` counts those), and a pooled, warm zstd context makes none.
//! Prints PASS/FAIL for the target "dcz allocates at most plain zstd's + 2 per 1 KiB response";
//! the exit status is 0 either way.

use tower_gzip_support::alloc;
use tower_gzip_support::bench as support;
tower_gzip_support::count_allocations!();

use tower::{Layer, service_fn};
use tower_gzip::CodecPool;
use tower_gzip::ContentCoding;
use tower_gzip::compression::CompressionLayer;
use tower_gzip::dictionary::Dictionary;
use tower_gzip::dictionary::UseAsDictionary;
use tower_gzip_support::samples::train;

use support::{expect_coding, full_response, json, respond};

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let (dictionary, store) = trained_dictionary();
    let offering =
        |accept: &'static str| support::offering(accept, dictionary.available_dictionary());
    println!("| body | coding | bytes | of identity | allocations | bytes allocated |");
    println!("|---|---|--:|--:|--:|--:|");
    let mut per_response = std::collections::HashMap::new();
    for size in [1024, 16 * 1024] {
        let payload = json(size);
        for (name, codings) in [
            ("zstd", &[][..]),
            ("dcz", &[ContentCoding::Dcz][..]),
            ("br", &[][..]),
            ("dcb", &[ContentCoding::Dcb][..]),
        ] {
            let p = payload.clone();
            let svc = CompressionLayer::new()
                .pool(CodecPool::new())
                .dictionaries(store.clone())
                .dictionary_codings(codings)
                .layer(service_fn(move |_| full_response(p.clone())));
            let wire = rt.block_on(expect_coding(&svc, offering(name), name));
            for _ in 0..50 {
                rt.block_on(respond(&svc, offering(name)));
            }
            let before = alloc::total();
            const N: u64 = 200;
            for _ in 0..N {
                std::hint::black_box(rt.block_on(respond(&svc, offering(name))));
            }
            let cost = alloc::total().since(before);
            let allocs = cost.allocations as f64 / N as f64;
            per_response.insert((size, name), allocs);
            println!(
                "| {} KiB | {name} | {wire} | {:.1}% | {allocs:.1} | {:.0} |",
                size / 1024,
                100.0 * wire as f64 / size as f64,
                cost.bytes as f64 / N as f64
            );
        }
    }
    api_json_bytes();
    let (dcz, zstd) = (per_response[&(1024, "dcz")], per_response[&(1024, "zstd")]);
    println!(
        "\n{}: dcz {dcz:.1} allocations per 1 KiB response, plain zstd {zstd:.1} (target: at most +2)",
        if dcz <= zstd + 2.0 { "PASS" } else { "FAIL" }
    );
}

/// A word from a fixed list, picked by `seed`.
fn word(seed: u64) -> &'static str {
    const WORDS: &[&str] = &[
        "crash",
        "when",
        "parsing",
        "large",
        "headers",
        "timeout",
        "connection",
        "reset",
        "support",
        "for",
        "http2",
        "trailers",
        "memory",
        "leak",
        "in",
        "pool",
        "docs",
        "typo",
        "example",
        "fails",
        "on",
        "windows",
        "feature",
        "request",
        "add",
        "zstd",
        "level",
        "option",
        "regression",
        "after",
        "upgrade",
        "panic",
        "decoder",
        "stream",
    ];
    WORDS[(seed % WORDS.len() as u64) as usize]
}

fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// An issue's `user` object.
fn user(login: &str, user_id: u64) -> serde_json::Value {
    serde_json::json!({
        "login": login,
        "id": user_id,
        "node_id": format!("MDQ6VXNlcj{user_id}"),
        "avatar_url": format!("https://avatars.example.com/u/{user_id}?v=4"),
        "gravatar_id": "",
        "url": format!("https://api.example.com/users/{login}"),
        "html_url": format!("https://example.com/{login}"),
        "followers_url": format!("https://api.example.com/users/{login}/followers"),
        "following_url": format!("https://api.example.com/users/{login}/following{{/other_user}}"),
        "gists_url": format!("https://api.example.com/users/{login}/gists{{/gist_id}}"),
        "starred_url": format!("https://api.example.com/users/{login}/starred{{/owner}}{{/repo}}"),
        "subscriptions_url": format!("https://api.example.com/users/{login}/subscriptions"),
        "organizations_url": format!("https://api.example.com/users/{login}/orgs"),
        "repos_url": format!("https://api.example.com/users/{login}/repos"),
        "type": "User",
        "site_admin": false
    })
}

/// One response of a GitHub-style `GET /repos/o/r/issues?page=P`: 1-5 issues, pretty-printed
/// as such APIs serve them.
fn issues_page(page: u64) -> Vec<u8> {
    let base = "https://api.example.com/repos/acme/widgets";
    let logins = [
        "octo-dev",
        "rustacean42",
        "mgr-bot",
        "jlee",
        "amara-k",
        "p-novak",
    ];
    let count = 1 + mix(page) % 5;
    let issues: Vec<serde_json::Value> = (0..count)
        .map(|k| {
            let n = page * 5 + k;
            let h = mix(n.wrapping_add(7));
            let login = logins[(h % logins.len() as u64) as usize];
            let user_id = 1000 + h % 90_000;
            let title: Vec<&str> = (0..4 + h % 5).map(|i| word(mix(h + i))).collect();
            let body: Vec<&str> = (0..20 + h % 30).map(|i| word(mix(h ^ i))).collect();
            serde_json::json!({
                "url": format!("{base}/issues/{n}"),
                "repository_url": base,
                "labels_url": format!("{base}/issues/{n}/labels{{/name}}"),
                "comments_url": format!("{base}/issues/{n}/comments"),
                "events_url": format!("{base}/issues/{n}/events"),
                "html_url": format!("https://example.com/acme/widgets/issues/{n}"),
                "id": 2_000_000_000 + n * 17,
                "node_id": format!("I_kwDOA{:08X}", h & 0xffff_ffff),
                "number": n,
                "title": title.join(" "),
                "user": user(login, user_id),
                "labels": [{"id": 100 + h % 7, "name": word(h >> 3), "color": format!("{:06x}", h & 0xff_ffff), "default": false}],
                "state": if h % 3 == 0 { "closed" } else { "open" },
                "locked": false,
                "assignee": null,
                "assignees": [],
                "milestone": null,
                "comments": h % 40,
                "created_at": format!("2026-{:02}-{:02}T{:02}:{:02}:{:02}Z", 1 + h % 12, 1 + h % 28, h % 24, h % 60, (h >> 8) % 60),
                "updated_at": format!("2026-{:02}-{:02}T{:02}:{:02}:{:02}Z", 1 + (h >> 4) % 12, 1 + (h >> 4) % 28, (h >> 4) % 24, (h >> 6) % 60, (h >> 9) % 60),
                "closed_at": null,
                "author_association": "CONTRIBUTOR",
                "body": body.join(" ")
            })
        })
        .collect();
    serde_json::to_vec_pretty(&issues).unwrap()
}

/// Bytes of zstd, dcz, br and dcb on unseen API responses, with a 16 KiB dictionary trained
/// on other pages of the same API.
fn api_json_bytes() {
    use tower_gzip::ContentCoding;
    use tower_gzip::codec::OneShot;
    let pool = CodecPool::new();
    let training: Vec<Vec<u8>> = (0..300).map(issues_page).collect();
    let measured: Vec<Vec<u8>> = (10_000..10_200).map(issues_page).collect();
    for size in [4 * 1024, 16 * 1024] {
        let dictionary = Dictionary::new(
            train(&training, size).expect("training"),
            UseAsDictionary::new("/repos/*"),
        )
        .unwrap();
        let (mut identity, mut zstd, mut dcz, mut br, mut dcb) = (0, 0, 0, 0, 0);
        for body in &measured {
            identity += body.len();
            let mut out = bytes::BytesMut::new();
            OneShot::new(ContentCoding::Zstd)
                .pool(&pool)
                .encode(body, &mut out)
                .unwrap();
            zstd += out.len();
            out.clear();
            OneShot::new(ContentCoding::Br)
                .pool(&pool)
                .encode(body, &mut out)
                .unwrap();
            br += out.len();
            out.clear();
            OneShot::new(ContentCoding::Dcz)
                .dictionary(&dictionary)
                .pool(&pool)
                .encode(body, &mut out)
                .unwrap();
            dcz += out.len();
            out.clear();
            OneShot::new(ContentCoding::Dcb)
                .dictionary(&dictionary)
                .pool(&pool)
                .encode(body, &mut out)
                .unwrap();
            dcb += out.len();
        }
        let pct = |n: usize| 100.0 * n as f64 / identity as f64;
        println!(
            "\nAPI-like pretty JSON, {} responses of {} B on average, {} KiB dictionary (headers included):\n\
             zstd 3 {:.1}%, dcz {:.1}% ({:.2}x zstd); br 4 {:.1}%, dcb {:.1}% ({:.2}x br)",
            measured.len(),
            identity / measured.len(),
            size / 1024,
            pct(zstd),
            pct(dcz),
            dcz as f64 / zstd as f64,
            pct(br),
            pct(dcb),
            dcb as f64 / br as f64
        );
    }
}

/// A 16 KiB dictionary trained on the benches' dictionary samples, and a store holding it.
fn trained_dictionary() -> (Dictionary, tower_gzip::dictionary::DictionaryStore) {
    let trained = train(&support::dictionary_samples(), 16 * 1024).expect("training");
    let dictionary = Dictionary::new(trained, UseAsDictionary::new("/*")).unwrap();
    let store = tower_gzip::dictionary::DictionaryStore::new(1 << 20);
    store.insert(dictionary.clone());
    (dictionary, store)
}
