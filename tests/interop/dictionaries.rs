//! Dictionary transport (RFC 9842) in headless Chromium against the demo: the API
//! dictionary learned from a cold start and used as `dcz` or `dcb`, the script's versions as
//! deltas, and a learned dictionary rotated when the API's schema changes.

use std::time::Duration;

use crate::chromium::{
    CHROMIUM_GETS, TempDir, autotest_result, dump_dom_in, dump_dom_within, fnv1a, have_chromium,
};
use crate::demo::Server;

/// Dictionary transport (RFC 9842) in headless Chromium: the demo learns the API dictionary
/// from 1,000 responses; the page announces it (`Link` header and `<link>`); `?autotest=dict`
/// waits until Chromium has stored it (it fetches it when idle; the page fetches it itself
/// after 2 s), then fetches `/api/items?n=5&start=S` (S unseen by the learner) and ten more,
/// and `/assets/app-v2.js` after `/assets/app-v1.js`. With `args` the server prefers
/// `want`; Chromium offers both.
fn chromium_decodes_dictionary_codings(args: &[&str], want: &str) {
    if !have_chromium() {
        return;
    }
    let server = Server::start(args);
    // A cold start: 1,000 API responses teach the dictionary the page then announces.
    server.visit_api(0, 1000);
    server.learned(1);
    const START: u64 = 987_654_321;
    let url = server.url(&format!("/?autotest=dict&start={START}"));
    // About 4 s when all goes well; the page waits in real time until Chromium uses the
    // dictionary (at most 60 s on a slow machine), and two tries of at most 120 s each keep
    // the test bounded.
    let limit = Duration::from_secs(120);
    let result = autotest_result(&dump_dom_within(&url, 30_000, limit))
        .or_else(|| {
            eprintln!("no autotest result on the first try; retrying once");
            autotest_result(&dump_dom_within(&url, 30_000, limit))
        })
        .expect("the demo page wrote no finished result into <pre id=\"autotest\">");
    eprintln!("chromium dictionary autotest ({want}): {result}");
    assert!(result.get("error").is_none(), "the page failed: {result}");
    // `link`: Chromium fetched the dictionary the page's `Link` announced, by itself (seen
    // with Chromium 156); otherwise the page fetched it (`dictionary` in the result).
    if result["link"] != true {
        eprintln!("Chromium had not fetched the Link dictionary after 2 s; the page did");
    }
    assert_eq!(
        result["ready"], true,
        "Chromium never used the API dictionary: {result}"
    );

    // The API response: decoded against the trained dictionary, identical to identity.
    let path = format!("/api/items?n=5&start={START}");
    let plain = server.identity(&path);
    let items = &result["items"];
    assert_eq!(items["status"], 200, "{result}");
    assert_eq!(items["encoding"], want, "{result}");
    assert_eq!(items["length"], plain.len(), "{result}");
    assert_eq!(items["fnv1a"], fnv1a(&plain), "{result}");
    assert_eq!(items["decoded"], plain.len(), "{result}");
    let wire = items["wire"].as_u64().unwrap();
    assert!(
        wire < plain.len() as u64 / 2,
        "{want}: {wire} bytes for {}",
        plain.len()
    );

    // Ten more responses it never saw: dcz at most 0.75x plain zstd's bytes (dcb is
    // weighed against br by the crate's benches). A k-anonymous dictionary holds only what
    // 3 clients were sent: 0.70-0.71x here, where one with every sample's bytes made 0.65x
    // (BENCHMARKS.md, "Learned dictionaries: what k-anonymity costs").
    if want == "dcz" {
        let (mut dictionary, mut zstd) = (0, 0);
        for item in result["batch"].as_array().expect("a batch") {
            assert_eq!(item["encoding"], want, "{result}");
            dictionary += item["wire"].as_u64().unwrap();
            let path = item["path"].as_str().unwrap();
            let (head, body) = server.raw(path, &[("Accept-Encoding", "zstd")]);
            assert!(head.contains("content-encoding: zstd\r\n"), "{head}");
            zstd += body.len() as u64;
        }
        let ratio = dictionary as f64 / zstd as f64;
        eprintln!(
            "learned dictionary, unseen API responses: dcz {dictionary} B, zstd {zstd} B: {ratio:.3}x"
        );
        assert!(
            ratio <= 0.75,
            "dcz {dictionary} B against zstd {zstd} B: {ratio:.3}x"
        );
    }

    // v1 plainly compressed, then v2 as a delta against it.
    let v1 = server.identity("/assets/app-v1.js");
    assert_eq!(result["v1"]["fnv1a"], fnv1a(&v1), "{result}");
    assert_eq!(result["v1"]["encoding"], CHROMIUM_GETS, "{result}");
    let v2 = server.identity("/assets/app-v2.js");
    assert_ne!(v1, v2);
    let got = &result["v2"];
    assert_eq!(got["status"], 200, "{result}");
    assert_eq!(got["encoding"], want, "{result}");
    assert_eq!(got["length"], v2.len(), "{result}");
    assert_eq!(got["fnv1a"], fnv1a(&v2), "{result}");
    // The delta against v1 (not v2 against itself): what the server sends to a request
    // naming v1, byte for byte as long.
    assert!(
        result["v1_again"]["encoding"] == want,
        "Chromium never held v1 as a dictionary: {result}"
    );
    let v1_dictionary = tower_gzip::dictionary::Dictionary::new(
        v1.clone(),
        tower_gzip::dictionary::UseAsDictionary::new("/assets/app-v*.js"),
    )
    .unwrap();
    let (head, delta) = server.raw(
        "/assets/app-v2.js",
        &[
            ("Accept-Encoding", "gzip, deflate, br, zstd, dcb, dcz"),
            (
                "Available-Dictionary",
                v1_dictionary.available_dictionary().to_str().unwrap(),
            ),
            ("Sec-Fetch-Site", "same-origin"),
        ],
    );
    assert!(
        head.contains(&format!("content-encoding: {want}\r\n")),
        "{head}"
    );
    let wire = got["wire"].as_u64().unwrap();
    assert_eq!(
        wire,
        delta.len() as u64,
        "{want} delta against v1: {result}"
    );
    assert!(
        wire < v2.len() as u64 / 50,
        "{want} delta: {wire} bytes for {}",
        v2.len()
    );

    // The page's Dictionaries card, its buttons pressed: API and v2 by dictionary.
    let api = result["button_api"].as_str().unwrap_or_default();
    assert!(api.contains(&format!("{want}: ")), "{result}");
    let assets = result["button_assets"].as_str().unwrap_or_default();
    assert!(assets.contains("/assets/app-v2.js"), "{result}");
    assert!(
        assets.trim_end().ends_with(")") && assets.contains(&format!("{want}: ")),
        "{result}"
    );

    // The server's view: hits for both, no request refused by the gate.
    let server_side = &result["server"];
    assert!(server_side["hits"].as_u64().unwrap() >= 2, "{result}");
    assert_eq!(server_side["refused"], 0, "{result}");
}

#[cfg(feature = "zstd")]
#[test]
fn headless_chromium_decodes_dcz() {
    chromium_decodes_dictionary_codings(&[], "dcz");
}

#[cfg(all(feature = "dcz", feature = "dcb"))]
#[test]
fn headless_chromium_decodes_dcb() {
    chromium_decodes_dictionary_codings(&["--prefer", "dcb"], "dcb");
}

/// Rotation in Chromium: it holds the learned v1 and gets API responses against it; the
/// items' schema changes and the demo learns v2; the same browser profile, loading the page
/// again, moves to v2 (its requests name v2), and no response fails to decode on the way.
#[test]
fn headless_chromium_moves_to_the_next_learned_dictionary() {
    if !have_chromium() {
        return;
    }
    let server = Server::start(&[]);
    server.visit_api(0, 1000);
    server.learned(1);
    let profile = TempDir::new("chromium-rotation");
    // The page waits in real time for each move (at most 60 s on a slow machine).
    let limit = Duration::from_secs(120);
    let run = |want: &str| {
        let url = server.url(&format!("/?autotest=rotate&want={want}"));
        let result = autotest_result(&dump_dom_in(&profile, &url, 30_000, limit))
            .expect("the demo page wrote no finished result into <pre id=\"autotest\">");
        eprintln!("chromium rotation ({want}): {result}");
        assert_eq!(result["errors"], 0, "a response failed to decode: {result}");
        assert_eq!(
            result["moved"], true,
            "never got dcz against {want}: {result}"
        );
        result
    };
    run("v1");

    let (head, _) = server.request("POST", "/api/schema?v=1", &[]);
    assert!(head.starts_with("http/1.0 200"), "{head}");
    let v2 = server.visit_until_learned(1000, 2);
    assert_eq!(v2["version"], 2, "{v2}");
    let result = run("v2");
    // Each response it saw decoded: against v1 until it held v2, then against v2.
    let seen: Vec<&str> = result["seen"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s.as_str())
        .collect();
    assert!(
        seen.iter()
            .all(|s| s.starts_with("dcz:") || s.starts_with("zstd")),
        "{result}"
    );
    let stats = server.stats();
    assert_eq!(stats["dictionaries"]["refused"], 0, "{stats}");
}
