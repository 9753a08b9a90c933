//! `CompressionLayer::breach_jitter` against the attack it is for (BREACH): a page holds a
//! secret and reflects the request's query; an attacker tries 16 guesses of the secret's
//! next 8 characters and ranks them by response length. Without jitter the right guess is
//! the strictly shortest response in every coding. With it, one response per guess says
//! nothing, and the mean of 256 responses per guess makes no confident call when the jitter
//! is large against the gap; the minimum of many responses does recover the gap in the end
//! (the table of `length_hiding_table`, BENCHMARKS.md "Length hiding").

#![cfg(all(feature = "dcz", feature = "dcb"))]

use http::Request;
use http::header::ACCEPT_ENCODING;
use tower_gzip::codec::OneShot;
use tower_gzip::compression::CompressionLayer;
use tower_gzip::dictionary::{Dictionary, DictionaryStore, UseAsDictionary};
use tower_gzip::{CodecPool, ContentCoding};

use crate::common::StutterBody;
use crate::support::{collect, respond, typed};

/// The secret's known prefix; the attacker guesses what follows.
const KNOWN: &str = "token_7f3a";
/// The secret's next 8 characters: guess 0.
const RIGHT: &str = "9c2e51d8";
/// The codings a browser may get.
const CODINGS: [ContentCoding; 6] = [
    ContentCoding::Gzip,
    ContentCoding::Deflate,
    ContentCoding::Br,
    ContentCoding::Zstd,
    ContentCoding::Dcz,
    ContentCoding::Dcb,
];

/// The 16 guesses: the right one first, then 15 wrong ones of the same length.
fn guesses() -> Vec<String> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut out = vec![RIGHT.to_owned()];
    while out.len() < 16 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let guess = format!("{:08x}", x as u32);
        if guess.as_bytes()[0] != RIGHT.as_bytes()[0] {
            out.push(guess);
        }
    }
    out
}

/// The page: a template, the secret, and the reflected query.
fn page(query: &str) -> String {
    let rows: String = (0..12)
        .map(|i| format!("<li class=\"order\"><a href=\"/orders/{i}\">Order {i}</a></li>\n"))
        .collect();
    format!(
        "<!doctype html><html><head><title>Your account</title></head><body>\n\
         <form action=\"/transfer\" method=\"post\"><input type=\"hidden\" name=\"csrf\" \
         value=\"secret={KNOWN}{RIGHT}4b60\"></form>\n<ul>{rows}</ul>\n\
         <p class=\"search\">You searched for: {query}</p>\n</body></html>\n"
    )
}

/// The site's earlier page, as the dictionary of `dcz` and `dcb`: the template without the
/// secret.
fn dictionary() -> Dictionary {
    let template = page("shoes").replace(RIGHT, "00000000");
    Dictionary::new(template.into_bytes(), UseAsDictionary::new("/*")).unwrap()
}

/// The layer, with `jitter` and the dictionary.
fn layer(jitter: u16, dictionary: &Dictionary) -> CompressionLayer {
    let store = DictionaryStore::new(1 << 20);
    assert!(store.insert(dictionary.clone()));
    CompressionLayer::new()
        .pool(CodecPool::new())
        .dictionaries(store)
        .breach_jitter(jitter)
}

/// A browser's request accepting only `coding` (with the dictionary for `dcz`/`dcb`).
fn request(coding: ContentCoding, dictionary: &Dictionary) -> Request<()> {
    let mut req = Request::builder()
        .uri("/account")
        .header(ACCEPT_ENCODING, coding.as_str())
        .header("sec-fetch-site", "same-origin")
        .header("sec-fetch-mode", "cors");
    if coding.needs_dictionary() {
        req = req.header("available-dictionary", dictionary.available_dictionary());
    }
    req.body(()).unwrap()
}

/// What the attacker sees: `samples` response lengths for each guess, in `coding`. Each
/// body is checked to decode to the page.
async fn lengths(
    coding: ContentCoding,
    jitter: u16,
    samples: usize,
    dictionary: &Dictionary,
) -> Vec<Vec<usize>> {
    let layer = layer(jitter, dictionary);
    let mut all = Vec::new();
    for guess in guesses() {
        let page = page(&format!("secret={KNOWN}{guess}"));
        let mut lengths = Vec::with_capacity(samples);
        for i in 0..samples {
            let res = typed("text/html", page.clone());
            let out = collect(respond(&layer, request(coding, dictionary), res).await).await;
            assert_eq!(out.headers["content-encoding"], coding.as_str());
            if i == 0 {
                let one_shot = OneShot::new(coding).dictionary(dictionary);
                let plain = one_shot.decode(&out.body, 1 << 20).unwrap();
                assert_eq!(&plain[..], page.as_bytes(), "{coding:?}");
            }
            lengths.push(out.body.len());
        }
        all.push(lengths);
    }
    all
}

fn mean(xs: &[usize]) -> f64 {
    xs.iter().sum::<usize>() as f64 / xs.len() as f64
}

fn variance(xs: &[usize]) -> f64 {
    let m = mean(xs);
    xs.iter().map(|&x| (x as f64 - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64
}

/// The smallest z-score of the right guess's mean below a wrong guess's mean (Welch): the
/// attacker's confidence that the right guess is shorter than every other.
fn weakest_z(lengths: &[Vec<usize>]) -> f64 {
    let right = &lengths[0];
    lengths[1..]
        .iter()
        .map(|wrong| {
            let se = (variance(right) / right.len() as f64 + variance(wrong) / wrong.len() as f64)
                .sqrt();
            (mean(wrong) - mean(right)) / se
        })
        .fold(f64::INFINITY, f64::min)
}

/// The right guess's rank (1 = shortest; ties count against it) by `stat` of each guess's
/// lengths.
fn rank(lengths: &[Vec<usize>], stat: impl Fn(&[usize]) -> f64) -> usize {
    let right = stat(&lengths[0]);
    1 + lengths[1..].iter().filter(|w| stat(w) <= right).count()
}

/// The bytes by which the right guess's single (unpadded) length is below the shortest
/// wrong one's.
fn gap(lengths: &[Vec<usize>]) -> i64 {
    let wrong = lengths[1..].iter().map(|w| w[0]).min().unwrap();
    wrong as i64 - lengths[0][0] as i64
}

#[tokio::test]
async fn without_jitter_the_right_guess_is_strictly_shortest() {
    let dictionary = dictionary();
    for coding in CODINGS {
        let lengths = lengths(coding, 0, 2, &dictionary).await;
        for guess in &lengths {
            assert_eq!(guess[0], guess[1], "{coding:?}: no jitter, one length");
        }
        assert!(gap(&lengths) > 0, "{coding:?}: {lengths:?}");
    }
}

/// With 256 bytes of jitter, one response per guess tells nothing: every guess's lengths
/// spread over many values, and the right guess's range overlaps every wrong guess's, so
/// no threshold on one response separates them. (That the ranges never overlap has a
/// probability far below 2^-60 for a gap of a few bytes.)
#[tokio::test]
async fn with_jitter_one_response_does_not_tell_the_right_guess() {
    let dictionary = dictionary();
    for coding in CODINGS {
        let lengths = lengths(coding, 256, 64, &dictionary).await;
        for guess in &lengths {
            let mut distinct = guess.clone();
            distinct.sort_unstable();
            distinct.dedup();
            assert!(distinct.len() >= 20, "{coding:?}: {distinct:?}");
        }
        let right_max = lengths[0].iter().max().unwrap();
        for wrong in &lengths[1..] {
            assert!(wrong.iter().min().unwrap() < right_max, "{coding:?}");
        }
    }
}

/// With 4,096 bytes of jitter, the mean of 256 responses per guess makes no confident call:
/// the right guess's mean is never 4 standard errors below every wrong guess's. The
/// padding's standard error on a difference of two means is 4096 / sqrt(6 * 256), 64
/// bytes, against a gap of 4 to 7 bytes: the right mean would have to fall about 4 of its
/// own standard errors low (a chance near 3e-5) and no wrong mean with it. The minimum is
/// another matter: see the table.
#[tokio::test]
async fn with_jitter_the_mean_of_256_responses_makes_no_confident_call() {
    let dictionary = dictionary();
    for coding in [ContentCoding::Br, ContentCoding::Zstd] {
        let lengths = lengths(coding, 4_096, 256, &dictionary).await;
        let z = weakest_z(&lengths);
        assert!(z < 4.0, "{coding:?}: z {z:.2}");
    }
}

/// A streamed body (pending between chunks, so the streaming encoders) is padded too: its length
/// varies from response to response, and it decodes to the page (plain codings by the
/// support crate's decoders, which are not this crate's: flate2, libzstd, `brotli`).
#[tokio::test]
async fn streamed_responses_are_padded_in_every_coding() {
    let dictionary = dictionary();
    let layer = layer(256, &dictionary);
    let page = page("secret=token_7f3a00000000");
    for coding in CODINGS {
        let mut lengths = Vec::new();
        for _ in 0..16 {
            // Pending between chunks: not read ahead whole, so streamed.
            let chunks = page.as_bytes().chunks(300).map(|c| c.to_vec());
            let mut res = http::Response::new(StutterBody::data(chunks));
            let html = http::HeaderValue::from_static("text/html");
            res.headers_mut().insert("content-type", html);
            let out = collect(respond(&layer, request(coding, &dictionary), res).await).await;
            assert_eq!(out.encoding(), Some(coding.as_str()));
            let plain = match coding.needs_dictionary() {
                true => OneShot::new(coding)
                    .dictionary(&dictionary)
                    .decode(&out.body, 1 << 20)
                    .unwrap()
                    .to_vec(),
                false => out.decoded(),
            };
            assert_eq!(plain, page.as_bytes(), "{coding:?}");
            lengths.push(out.body.len());
        }
        lengths.sort_unstable();
        lengths.dedup();
        assert!(lengths.len() > 4, "{coding:?}: {lengths:?}");
    }
}

/// How often, in 400 draws of `k` responses per guess from `lengths`, the right guess is
/// the strictly smallest by `stat`: the attacker's success rate (chance is 1 in 16).
fn success(lengths: &[Vec<usize>], k: usize, stat: impl Fn(&[usize]) -> f64) -> f64 {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut draw = |pool: &[usize]| -> Vec<usize> {
        (0..k)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                pool[(x % pool.len() as u64) as usize]
            })
            .collect()
    };
    let trials = 400;
    let wins = (0..trials)
        .filter(|_| {
            let drawn: Vec<Vec<usize>> = lengths.iter().map(|l| draw(l)).collect();
            rank(&drawn, &stat) == 1
        })
        .count();
    wins as f64 / trials as f64
}

fn min(xs: &[usize]) -> f64 {
    *xs.iter().min().unwrap() as f64
}

/// Prints BENCHMARKS.md's "Length hiding" table: per coding and jitter, the gap without
/// jitter and how often an attacker ranking 16 guesses by one response, or by the mean or
/// the minimum of 16 or 256 responses per guess, finds the right one (drawn from 1,024
/// responses per guess).
///
/// `cargo test --test compression length_hiding_table -- --ignored --nocapture`
#[tokio::test]
#[ignore = "prints the table of BENCHMARKS.md (~20 s in a debug build)"]
async fn length_hiding_table() {
    let dictionary = dictionary();
    println!(concat!(
        "| coding | jitter | gap (bytes) | 1 response | mean of 16 | min of 16 ",
        "| mean of 256 | min of 256 |"
    ));
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for coding in CODINGS {
        let gap = gap(&lengths(coding, 0, 1, &dictionary).await);
        for jitter in [0, 32, 256, 4_096] {
            let lengths = lengths(coding, jitter, 1_024, &dictionary).await;
            let rates = [
                success(&lengths, 1, mean),
                success(&lengths, 16, mean),
                success(&lengths, 16, min),
                success(&lengths, 256, mean),
                success(&lengths, 256, min),
            ];
            let rates: Vec<String> = rates.iter().map(|r| format!("{:.0}%", r * 100.0)).collect();
            println!(
                "| {} | {jitter} | {gap} | {} |",
                coding.as_str(),
                rates.join(" | ")
            );
        }
    }
}
