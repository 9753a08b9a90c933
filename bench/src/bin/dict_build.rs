//! What `DictionaryBuilder` buys on API JSON it never saw: builds a dictionary from the
//! training half of the corpus (`support/src/corpus`), then compresses the corpus's held-out
//! responses with plain zstd 3, br 4 and br 5, and with `dcz` and `dcb` at the levels the
//! builder chose. Prints the builder's report (every candidate and level on its own
//! held-out samples), then bytes and CPU time per response on the unseen responses.
//!
//! ```text
//! cargo run --release -p tower-gzip-bench --bin dict_build [-- RESPONSES [SEED [github|shop]]]
//! ```
//!
//! Default: 3,200 responses of seed 1 (2,400 to the builder, 800 held out from it), of
//! both APIs; `github` or `shop` keeps that API's responses only (one dictionary per API,
//! as a deploy would serve them under two `match` patterns). Times
//! are the thread's CPU time, best of 5 rounds, over all held-out responses and over those
//! of 0.7-1.5 KiB ("~1 KiB"); every `dcz` and `dcb` body is checked to decode back.

use bytes::BytesMut;
use tower_gzip::codec::OneShot;
use tower_gzip::dictionary::UseAsDictionary;
use tower_gzip::dictionary::{BuiltDictionary, Dictionary, DictionaryBuilder};
use tower_gzip::{CodecPool, CompressionLevel, ContentCoding};

use tower_gzip_bench::cpu_time;
use tower_gzip_support::corpus;

type Encode<'a> = &'a dyn Fn(&[u8], &mut BytesMut);

/// Bytes over `all`, and CPU µs per response over `all` and over `small`.
fn run(all: &[&[u8]], small: &[&[u8]], encode: Encode<'_>) -> (usize, f64, f64) {
    let mut out = BytesMut::new();
    let mut bytes = 0;
    for body in all {
        out.clear();
        encode(body, &mut out);
        bytes += out.len();
    }
    let mut time = |set: &[&[u8]]| {
        cpu_time::best_micros(5, set.len(), || {
            for body in set {
                out.clear();
                encode(body, &mut out);
            }
        })
    };
    let all_us = time(all);
    (bytes, all_us, time(small))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize, default: usize| {
        args.get(i)
            .map_or(default, |a| a.parse().expect("a number"))
    };
    let (n, seed) = (number(0, 3200), number(1, 1) as u64);
    let split = match args.get(2) {
        Some(api) => corpus::split_api(n, seed, api),
        None => corpus::split(n, seed),
    };
    let started = std::time::Instant::now();
    let built = DictionaryBuilder::new(&split.training)
        .build()
        .expect("a dictionary");
    println!(
        "built from {} responses in {:.1?}: {:?}, {} bytes, dcz level {}, dcb quality {:?}\n",
        split.training.len(),
        started.elapsed(),
        built.kind,
        built.bytes.len(),
        built.dcz_level,
        built.dcb_quality
    );
    print_report(&built);
    let dictionary = Dictionary::new(built.bytes.clone(), UseAsDictionary::new("/*")).unwrap();
    compare(&split.held_out, &dictionary, &built);
}

fn print_report(built: &BuiltDictionary) {
    println!(
        "The builder's report ({} held-out samples, {} bytes):\n",
        built.held_out, built.held_out_bytes
    );
    println!(
        "| dictionary | bytes | coding | level | held-out bytes | model cost | µs/response (wall) | within budget | chosen |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for row in &built.report {
        let kind = row.kind.map_or("none".to_string(), |k| format!("{k:?}"));
        println!(
            "| {kind} | {} | {} | {} | {} | {:.2}x | {:.1} | {} | {} |",
            row.dictionary_len,
            row.coding.as_str(),
            row.level,
            row.bytes,
            row.cost,
            row.micros,
            row.within_budget,
            if row.chosen { "**yes**" } else { "" }
        );
    }
    println!();
}

/// Checks that every body decodes back from `dcz` and `dcb`.
fn round_trips(all: &[&[u8]], dictionary: &Dictionary, dcz_level: i32, dcb_quality: i32) {
    let pool = CodecPool::new();
    let level = CompressionLevel::Precise;
    for body in all {
        let mut out = BytesMut::new();
        OneShot::new(ContentCoding::Dcz)
            .dictionary(dictionary)
            .level(level(dcz_level))
            .pool(&pool)
            .encode(body, &mut out)
            .unwrap();
        assert_eq!(
            &OneShot::new(ContentCoding::Dcz)
                .dictionary(dictionary)
                .pool(&pool)
                .decode(&out, 1 << 20)
                .unwrap()[..],
            *body
        );
        out.clear();
        OneShot::new(ContentCoding::Dcb)
            .dictionary(dictionary)
            .level(level(dcb_quality))
            .pool(&pool)
            .encode(body, &mut out)
            .unwrap();
        assert_eq!(
            &OneShot::new(ContentCoding::Dcb)
                .dictionary(dictionary)
                .decode(&out, 1 << 20)
                .unwrap()[..],
            *body
        );
    }
}

fn compare(held_out: &[Vec<u8>], dictionary: &Dictionary, built: &BuiltDictionary) {
    let all: Vec<&[u8]> = held_out.iter().map(Vec::as_slice).collect();
    let small: Vec<&[u8]> = all
        .iter()
        .copied()
        .filter(|b| (700..1536).contains(&b.len()))
        .collect();
    let (dcz_level, dcb_quality) = (built.dcz_level, built.dcb_quality.unwrap_or(5));
    round_trips(&all, dictionary, dcz_level, dcb_quality);
    let m = measure_codings(&all, &small, dictionary, dcz_level, dcb_quality);
    let identity: usize = all.iter().map(|b| b.len()).sum();
    println!(
        "{} held-out responses the builder never saw, {identity} bytes ({} average); {} of 0.7-1.5 KiB\n",
        all.len(),
        identity / all.len(),
        small.len()
    );
    println!(
        "| coding | bytes | % of identity | vs zstd 3 | vs br 4 | CPU µs/response | µs per ~1 KiB response | time vs plain (~1 KiB) |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let row = |name: &str, (bytes, all_us, small_us): Run, base_us: f64| {
        println!(
            "| {name} | {bytes} | {:.1}% | {:.3}x | {:.3}x | {all_us:.1} | {small_us:.1} | {:.2}x |",
            100.0 * bytes as f64 / identity as f64,
            bytes as f64 / m.zstd3.0 as f64,
            bytes as f64 / m.br4.0 as f64,
            small_us / base_us
        );
    };
    row("zstd 3", m.zstd3, m.zstd3.2);
    row(&format!("dcz {dcz_level}"), m.dcz, m.zstd3.2);
    row("br 4", m.br4, m.br4.2);
    row("br 5", m.br5, m.br5.2);
    row(
        &format!("dcb {dcb_quality} (time vs br {dcb_quality})"),
        m.dcb,
        m.brq.2,
    );
}

/// What [`run`] measures: bytes, µs per response, µs per ~1 KiB response.
type Run = (usize, f64, f64);

/// The plain codings and the dictionary ones on the held-out responses.
struct Measured {
    zstd3: Run,
    br4: Run,
    br5: Run,
    /// br at the builder's dcb quality.
    brq: Run,
    dcz: Run,
    dcb: Run,
}

fn measure_codings(
    all: &[&[u8]],
    small: &[&[u8]],
    dictionary: &Dictionary,
    dcz_level: i32,
    dcb_quality: i32,
) -> Measured {
    let pool = CodecPool::new();
    let level = CompressionLevel::Precise;
    let plain = |coding: ContentCoding, l: i32| {
        run(all, small, &|b, out| {
            OneShot::new(coding)
                .level(level(l))
                .pool(&pool)
                .encode(b, out)
                .unwrap()
        })
    };
    let with_dictionary = |coding: ContentCoding, l: i32| {
        run(all, small, &|b, out| {
            OneShot::new(coding)
                .dictionary(dictionary)
                .level(level(l))
                .pool(&pool)
                .encode(b, out)
                .unwrap()
        })
    };
    Measured {
        zstd3: plain(ContentCoding::Zstd, 3),
        br4: plain(ContentCoding::Br, 4),
        br5: plain(ContentCoding::Br, 5),
        brq: plain(ContentCoding::Br, dcb_quality),
        dcz: with_dictionary(ContentCoding::Dcz, dcz_level),
        dcb: with_dictionary(ContentCoding::Dcb, dcb_quality),
    }
}
