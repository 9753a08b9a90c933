//! What the learner's k-anonymity costs in bytes, on recorded traffic: builds dictionaries
//! from the training side of the recorded corpus (`tower_gzip_support::corpus::
//! recorded_split`, each recording taken as one client), once from the whole bodies and
//! once from only the runs of `n` bytes that `k` recordings or more hold
//! (`dictionary::learn::Anonymity`), each of zstd's trainer and of raw samples, as the
//! learner builds (`DictionaryBuilder::material`: fragments make the candidates, whole
//! held-out bodies judge them; 64 KiB bound, `dcz` budget 2.0); then compresses the 300 held-out
//! bodies with `dcz` at the level the builder chose and with plain zstd at that level.
//! Prints a Markdown table (BENCHMARKS.md, "Learned dictionaries: what k-anonymity costs").
//!
//! ```text
//! cargo run --release -p tower-gzip-bench --bin dict_anonymity [-- K:N ...]
//! ```
//!
//! Default settings: `1:1` (no filter), `3:16`, `3:24`, `3:32`, `5:16`, `10:16`. Exits with
//! 1 when the corpus (`../shared/corpus/reddit-api.jsonl`, or the file `TOWER_GZIP_CORPUS`
//! names) is absent.

use std::process::ExitCode;

use bytes::{Bytes, BytesMut};
use tower_gzip::codec::OneShot;
use tower_gzip::dictionary::learn::Anonymity;
use tower_gzip::dictionary::{Dictionary, DictionaryBuilder, UseAsDictionary};
use tower_gzip::{CompressionLevel, ContentCoding};
use tower_gzip_support::corpus::{recorded, recorded_split};

fn main() -> ExitCode {
    let settings: Vec<(usize, usize)> = match std::env::args().skip(1).collect::<Vec<_>>() {
        args if args.is_empty() => vec![(1, 1), (3, 16), (3, 24), (3, 32), (5, 16), (10, 16)],
        args => args.iter().filter_map(|a| parse(a)).collect(),
    };
    let Some(responses) = recorded() else {
        return ExitCode::from(1);
    };
    let split = recorded_split(&responses);
    let training: Vec<(&str, Bytes)> = (split.training.iter())
        .map(|r| (r.recording.as_str(), Bytes::from(r.body.clone())))
        .collect();
    let held: Vec<&[u8]> = split.held_out.iter().map(|r| &r.body[..]).collect();
    let total: usize = training.iter().map(|(_, b)| b.len()).sum();
    let clients = {
        let mut names: Vec<&str> = training.iter().map(|(c, _)| *c).collect();
        names.sort_unstable();
        names.dedup();
        names.len()
    };
    println!(
        "training: {} bodies, {total} B, {clients} recordings (clients); held out: {} bodies, {} B\n",
        training.len(),
        held.len(),
        held.iter().map(|b| b.len()).sum::<usize>()
    );
    println!(
        "| k | n | training bytes kept | kind | dictionary (served) | dcz level | dcz bytes | zstd bytes (same level) | dcz vs zstd |"
    );
    println!("|--:|--:|--:|---|--:|--:|--:|--:|--:|");
    for (k, n) in settings {
        let started = std::time::Instant::now();
        let material = Anonymity::new(k, n).fragments_by_sample(&training);
        eprintln!("k {k}, n {n}: filtered in {:.0?}", started.elapsed());
        let kept: usize = material.iter().flatten().map(Bytes::len).sum();
        for (kind, trained) in [("trained", true), ("raw samples", false)] {
            let row = measure(&training, &material, trained, &held);
            println!(
                "| {k} | {n} | {:.1}% | {kind} | {row} |",
                100.0 * kept as f64 / total as f64
            );
        }
    }
    ExitCode::SUCCESS
}

/// `K:N` as two numbers.
fn parse(arg: &str) -> Option<(usize, usize)> {
    let (k, n) = arg.split_once(':')?;
    Some((k.parse().ok()?, n.parse().ok()?))
}

/// Builds one kind from `material` (the fragments of each training body; the builder
/// judges on whole bodies it holds out), as the learner does, and measures it on `held`:
/// the table's last five columns.
fn measure(
    training: &[(&str, Bytes)],
    material: &[Vec<Bytes>],
    trained: bool,
    held: &[&[u8]],
) -> String {
    let bodies: Vec<&Bytes> = training.iter().map(|(_, body)| body).collect();
    let built = DictionaryBuilder::new(&bodies)
        .material(material)
        .max_size(64 << 10)
        .kinds(trained, !trained)
        .build();
    let built = match built {
        Ok(built) => built,
        Err(e) => return format!("none ({e}) | | | | "),
    };
    let dictionary = Dictionary::new(built.bytes.clone(), UseAsDictionary::new("/*")).unwrap();
    let level = CompressionLevel::Precise(built.dcz_level);
    let dcz = OneShot::new(ContentCoding::Dcz)
        .dictionary(&dictionary)
        .level(level);
    let zstd = OneShot::new(ContentCoding::Zstd).level(level);
    let (mut with, mut without) = (0, 0);
    let mut out = BytesMut::new();
    for body in held {
        out.clear();
        dcz.encode(body, &mut out).unwrap();
        with += out.len();
        out.clear();
        zstd.encode(body, &mut out).unwrap();
        without += out.len();
    }
    format!(
        "{} B ({} B) | {} | {with} | {without} | **{:.3}x**",
        built.bytes.len(),
        built.served_len,
        built.dcz_level,
        with as f64 / without as f64
    )
}
