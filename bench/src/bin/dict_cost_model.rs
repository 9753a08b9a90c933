//! Calibrates the cost model of `DictionaryBuilder` (`src/dictionary/build/cost.rs`): the
//! CPU time per response of plain zstd 3 and br 4-6, and of `dcz` and `dcb` at each level
//! the builder tries with dictionaries of 16, 32, 64 and 128 KiB, for seven groups of the
//! corpus's held-out responses by size (0.3-0.7, 0.7-1, 1-2, 2-4, 4-8, 8-16 and 16-64 KiB).
//! Prints the table to paste into `cost.rs` (the committed one takes, for each entry, the
//! lower of two runs), then the time ratios measured on a mix of responses.
//!
//! ```text
//! cargo run --release -p tower-gzip-bench --bin dict_cost_model
//! ```
//!
//! The dictionaries are the corpus's training responses, concatenated and cut to size (the
//! time depends on the size, through zstd's parameter tables and brotli's per-response
//! hashing, far more than on the content). Times are the thread's CPU time (on Linux; wall
//! time elsewhere), the best of 7 rounds, so that other processes matter less.

use bytes::BytesMut;
use tower_gzip::codec::OneShot;
use tower_gzip::dictionary::Dictionary;
use tower_gzip::dictionary::UseAsDictionary;
use tower_gzip::{CodecPool, CompressionLevel, ContentCoding};

use tower_gzip_bench::cpu_time;
use tower_gzip_support::corpus;

const ROUNDS: usize = 7;
/// Response groups by size, in bytes.
const GROUPS: [(usize, usize); 7] = [
    (300, 700),
    (700, 1024),
    (1024, 2048),
    (2048, 4096),
    (4096, 8192),
    (8192, 16_384),
    (16_384, 65_537),
];
/// Responses per group.
const PER_GROUP: usize = 60;

type Encode<'a> = &'a dyn Fn(&[u8], &mut BytesMut);

/// Best microseconds per response of `encode` over `set`.
fn time(set: &[&[u8]], encode: Encode<'_>) -> f64 {
    let mut out = BytesMut::new();
    encode(set[0], &mut out);
    cpu_time::best_micros(ROUNDS, set.len(), || {
        for body in set {
            out.clear();
            encode(body, &mut out);
        }
    })
}

/// A coding, level and dictionary class, and its times per group and on the mix.
struct Timed {
    coding: ContentCoding,
    level: i32,
    kib: usize,
    groups: Vec<f64>,
    mix: f64,
}

fn main() {
    let held_out = corpus::split(8000, 1).held_out;
    let groups: Vec<Vec<&[u8]>> = GROUPS
        .iter()
        .map(|&(lo, hi)| {
            let of = held_out.iter().map(Vec::as_slice);
            of.filter(|b| (lo..hi).contains(&b.len()))
                .take(PER_GROUP)
                .collect()
        })
        .collect();
    let mix: Vec<&[u8]> = held_out.iter().take(400).map(Vec::as_slice).collect();
    let means: Vec<f64> = groups
        .iter()
        .map(|g| g.iter().map(|b| b.len()).sum::<usize>() as f64 / g.len() as f64)
        .collect();
    println!(
        "groups: {:?} responses",
        groups.iter().map(Vec::len).collect::<Vec<_>>()
    );
    println!("pub(super) const SIZES: [f64; 7] = {means:.0?};");
    let training: Vec<u8> = corpus::split(2000, 2).training.concat();
    let timed = measure_all(&groups, &mix, &training);
    print_table(&timed);
}

fn measure_all(groups: &[Vec<&[u8]>], mix: &[&[u8]], training: &[u8]) -> Vec<Timed> {
    let pool = CodecPool::new();
    let level = CompressionLevel::Precise;
    let mut timed = Vec::new();
    let mut run = |coding, l, kib, encode: Encode<'_>| {
        let groups = groups.iter().map(|g| time(g, encode)).collect();
        let mix = time(mix, encode);
        timed.push(Timed {
            coding,
            level: l,
            kib,
            groups,
            mix,
        });
    };
    for (coding, l) in [
        (ContentCoding::Zstd, 3),
        (ContentCoding::Br, 4),
        (ContentCoding::Br, 5),
        (ContentCoding::Br, 6),
    ] {
        run(coding, l, 0, &|b, out| {
            OneShot::new(coding)
                .level(level(l))
                .pool(&pool)
                .encode(b, out)
                .unwrap()
        });
    }
    for kib in [16usize, 32, 64, 128] {
        let dictionary =
            Dictionary::new(training[..kib << 10].to_vec(), UseAsDictionary::new("/*")).unwrap();
        for l in [3, 4, 5, 6, 9, 12] {
            run(ContentCoding::Dcz, l, kib, &|b, out| {
                OneShot::new(ContentCoding::Dcz)
                    .dictionary(&dictionary)
                    .level(level(l))
                    .pool(&pool)
                    .encode(b, out)
                    .unwrap()
            });
        }
        for q in [4, 5, 6] {
            run(ContentCoding::Dcb, q, kib, &|b, out| {
                OneShot::new(ContentCoding::Dcb)
                    .dictionary(&dictionary)
                    .level(level(q))
                    .pool(&pool)
                    .encode(b, out)
                    .unwrap()
            });
        }
    }
    timed
}

fn print_table(timed: &[Timed]) {
    println!("\nconst ROWS: &[Row] = &[");
    for t in timed {
        let micros: Vec<String> = t.groups.iter().map(|m| format!("{m:.1}")).collect();
        println!(
            "    row({:?}, {}, {}, [{}]),",
            t.coding,
            t.level,
            t.kib,
            micros.join(", ")
        );
    }
    println!("];\n");
    println!(
        "| coding | level | dictionary | µs per response, 0.5 to 30 KiB | on the mix | vs plain on the mix |"
    );
    println!("|---|---|---|---|---|---|");
    for t in timed {
        let (plain, pl) = match t.coding {
            ContentCoding::Dcz => (ContentCoding::Zstd, 3),
            ContentCoding::Dcb => (ContentCoding::Br, t.level),
            c => (c, t.level),
        };
        let base = timed
            .iter()
            .find(|b| b.coding == plain && b.level == pl)
            .unwrap();
        let micros: Vec<String> = t.groups.iter().map(|m| format!("{m:.1}")).collect();
        println!(
            "| {} | {} | {} KiB | {} | {:.1} | {:.2}x |",
            t.coding.as_str(),
            t.level,
            t.kib,
            micros.join(" / "),
            t.mix,
            t.mix / base.mix
        );
    }
}
