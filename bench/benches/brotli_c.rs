//! Google's C brotli (`brotlic-sys`, through the codec crate's own wrapper
//! `codecs/src/ffi/brotli_c`, compiled into this bench from its source: the crate exports no
//! FFI) against the pure-Rust `brotli` crates, on
//! API-like JSON bodies of ~1, 16 and 64 KiB.
//!
//! - `br_lib/<size>/q<q>/{rust,c}`: plain br at qualities 4 and 5 (5 is `dcb`'s default):
//!   `rust` is the crate's one-shot br (a pooled `brotli` encoder, window 22 and the size as
//!   hint), `c` a C encoder with the same parameters on a reused block arena, `c_fresh` the
//!   same on an arena that keeps nothing (every block from and back to the allocator).
//! - `br_lib_decode/<size>/{rust,c}`: the crate's br decoder (pooled) against a new C
//!   decoder per body.
//! - `dcb_lib/<size>/<dict>/{rust,c}`: the brotli stream of a `dcb` body at quality 5 with a
//!   16 KiB and a 64 KiB trained dictionary: `rust` a new `brotli` encoder given the
//!   dictionary (`set_custom_dictionary`, which hashes it), `c` a C encoder on a reused arena
//!   with the dictionary prepared once and attached, `c_fresh` as `c` without reuse.
//! - `dcb_lib_decode/<size>/<dict>/{rust,rust_copy,c}`: `brotli-decompressor` with the
//!   dictionary lent to each call (the crate's `dcb` decoder), or copied into each decoder
//!   (as the crate did before), against a C decoder with it attached.
//! - `dcb_crate/<size>/<dict>/{encode,decode}`: the crate's public `OneShot` with a
//!   dictionary, header and pool included.
//!
//! Before the timings it prints, per case, the compressed size and the peak heap a cold
//! state takes for one body (a counting global allocator; C brotli's blocks come from the
//! Rust allocator through the arena, so they are counted too), and the median ratio of `c`'s
//! time to `rust`'s over alternating runs (steadier than two criterion ids on a busy machine).
//!
//! `cargo bench -p tower-gzip-bench --bench brotli_c` (add `-- --quick` for a fast pass).

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use brotli::enc::encode::{
    BrotliEncoderOperation as Op, BrotliEncoderParameter as P, BrotliEncoderStateStruct,
};
use bytes::{Bytes, BytesMut};
use criterion::{Criterion, criterion_group, criterion_main};
use tower_gzip::codec::{Decoder, OneShot};
use tower_gzip::dictionary::Dictionary;
use tower_gzip::dictionary::UseAsDictionary;
use tower_gzip::{CodecPool, CompressionLevel, ContentCoding};
use tower_gzip_support::samples::train;

// The codec crate's wrapper, as it is: its own `unsafe` blocks and their proofs.
#[allow(unsafe_code, dead_code, unreachable_pub)]
#[path = "../../codecs/src/ffi/brotli_c/mod.rs"]
mod brotli_c;
use tower_gzip_support::samples;

use brotli_c::{Encoder as CEncoder, Operation, Params, PreparedDictionary, Stop};

/// The global allocator, counting the bytes live now and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed through to `System` unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) };
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The peak heap `f` adds over what is live when it starts, and its result.
fn peak_of<T>(f: impl FnOnce() -> T) -> (usize, T) {
    let start = LIVE.load(Ordering::Relaxed);
    PEAK.store(start, Ordering::Relaxed);
    let result = f();
    (PEAK.load(Ordering::Relaxed) - start, result)
}

const SIZES: [(&str, usize); 3] = [("1KiB", 1 << 10), ("16KiB", 16 << 10), ("64KiB", 64 << 10)];

/// The quality of `dcb` bodies here: the crate's default for `dcb`.
const DCB_QUALITY: u32 = 5;

/// An API-like JSON array of about `len` bytes: records from the dictionary tests'
/// generator (a seed the dictionaries are not trained on).
fn body(len: usize) -> Vec<u8> {
    let mut out = b"[".to_vec();
    for record in samples::json_samples(4000, 77) {
        if out.len() + record.len() > len {
            break;
        }
        out.extend_from_slice(&record);
        out.push(b',');
    }
    *out.last_mut().unwrap() = b']';
    out
}

/// Dictionaries of 16 KiB and ~64 KiB trained on other records of the same API.
fn dictionaries() -> Vec<(&'static str, Dictionary)> {
    let samples = samples::json_samples(3000, 21);
    [("dict16k", 16 << 10), ("dict64k", 64 << 10)]
        .into_iter()
        .map(|(name, size)| {
            let bytes = train(&samples, size).unwrap();
            let meta = UseAsDictionary::new("/*");
            (name, Dictionary::new(bytes, meta).unwrap())
        })
        .collect()
}

/// The window log the crate gives a `dcb` body: the smallest from 18 that holds the
/// dictionary and the body.
fn dcb_lgwin(dictionary: usize, body: usize) -> u32 {
    (18..24)
        .find(|&log| dictionary + body <= (1usize << log) - 16)
        .unwrap_or(24)
}

/// br at quality `q` through the crate (the pooled `brotli` encoder).
fn br_rust(pool: &CodecPool, q: u32, body: &[u8]) -> BytesMut {
    let mut out = BytesMut::new();
    OneShot::new(ContentCoding::Br)
        .level(CompressionLevel::Precise(q as i32))
        .pool(pool)
        .encode(body, &mut out)
        .unwrap();
    out
}

/// One C stream on `encoder`'s arena, with `dictionary` attached if given.
fn c_encode(
    encoder: &mut CEncoder,
    params: Params,
    dictionary: Option<Arc<PreparedDictionary>>,
    body: &[u8],
) -> BytesMut {
    let mut out = BytesMut::with_capacity(body.len() / 4 + 64);
    encoder.start(params, dictionary).unwrap();
    encoder.compress(Operation::Finish, body, &mut out).unwrap();
    encoder.end();
    out
}

/// A new `brotli` crate encoder with `dictionary` as its custom dictionary.
fn rust_dcb(dictionary: &[u8], body: &[u8]) -> Vec<u8> {
    let mut core = BrotliEncoderStateStruct::new(brotli::enc::StandardAlloc::default());
    core.set_parameter(P::BROTLI_PARAM_QUALITY, DCB_QUALITY);
    core.set_parameter(
        P::BROTLI_PARAM_LGWIN,
        dcb_lgwin(dictionary.len(), body.len()),
    );
    core.set_parameter(P::BROTLI_PARAM_SIZE_HINT, body.len() as u32);
    core.set_custom_dictionary(dictionary.len(), dictionary);
    let mut out = vec![0u8; body.len() + 1024];
    let (mut avail_in, mut in_off, mut avail_out, mut out_off) = (body.len(), 0, out.len(), 0);
    let ok = core.compress_stream(
        Op::BROTLI_OPERATION_FINISH,
        &mut avail_in,
        body,
        &mut in_off,
        &mut avail_out,
        &mut out,
        &mut out_off,
        &mut None,
        &mut |_, _, _, _| (),
    );
    assert!(ok && core.is_finished());
    out.truncate(out_off);
    out
}

/// br decoded by the crate's (pooled) decoder.
fn br_rust_decode(pool: &CodecPool, wire: &[u8], len: usize) -> BytesMut {
    let mut decoder = Decoder::for_coding(ContentCoding::Br, None, pool).unwrap();
    let mut out = BytesMut::with_capacity(len);
    let mut input = wire;
    while !input.is_empty() || decoder.has_pending_output() {
        let consumed = decoder.decode(input, &mut out, 1 << 20).unwrap();
        input = &input[consumed..];
    }
    decoder.finish().unwrap();
    out
}

/// A stream decoded by a new C decoder, with `dictionary` attached if given.
fn c_decode(dictionary: Option<&Bytes>, wire: &[u8], len: usize) -> BytesMut {
    let mut decoder = brotli_c::Decoder::new(dictionary, 0).unwrap();
    let mut out = BytesMut::with_capacity(len);
    let mut budget = usize::MAX;
    let (consumed, stop) = decoder.decode(wire, &mut out, &mut budget);
    assert_eq!((consumed, stop), (wire.len(), Ok(Stop::End)));
    out
}

/// A stream decoded by `brotli-decompressor` with `dictionary` attached, RFC 7932 windows
/// only: `lent` as the crate's `dcb` decoder does (attached as external, lent to the call),
/// else copied into the state first (as it did before).
fn rust_dcb_decode(dictionary: &[u8], wire: &[u8], len: usize, lent: bool) -> Vec<u8> {
    use brotli_decompressor::{Allocator, BrotliResult, BrotliState, StandardAlloc};
    let alloc = StandardAlloc::default;
    let mut state = BrotliState::new_strict(alloc(), alloc(), alloc());
    let lend: &[u8] = if lent {
        assert!(state.attach_external_dictionary(dictionary.len()));
        dictionary
    } else {
        let mut copy = <StandardAlloc as Allocator<u8>>::alloc_cell(&mut alloc(), dictionary.len());
        brotli_decompressor::SliceWrapperMut::slice_mut(&mut copy).copy_from_slice(dictionary);
        assert!(state.attach_dictionary(copy));
        &[]
    };
    let mut out = vec![0u8; len];
    let (mut avail_in, mut in_off, mut avail_out, mut out_off, mut total) =
        (wire.len(), 0, out.len(), 0, 0);
    let result = brotli_decompressor::BrotliDecompressStreamWithDictionary(
        &mut avail_in,
        &mut in_off,
        wire,
        &mut avail_out,
        &mut out_off,
        &mut out,
        &mut total,
        lend,
        &mut state,
    );
    assert!(matches!(result, BrotliResult::ResultSuccess));
    out.truncate(out_off);
    out
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30)
}

fn br(c: &mut Criterion) {
    let pool = CodecPool::new();
    let mut encoder = CEncoder::new(4 << 20);
    let mut fresh = CEncoder::new(0);
    let mut group = c.benchmark_group("br_lib");
    for (name, len) in SIZES {
        let body = body(len);
        for q in [4, DCB_QUALITY] {
            let params = Params {
                quality: q,
                lgwin: 22,
                size_hint: Some(body.len()),
            };
            let (rust_mem, rust) = peak_of(|| br_rust(&CodecPool::new(), q, &body));
            let (c_mem, c) = peak_of(|| c_encode(&mut CEncoder::new(0), params, None, &body));
            report(
                &format!("br_lib/{name}/q{q}"),
                body.len(),
                [(rust.len(), rust_mem), (c.len(), c_mem)],
            );
            paired(
                &format!("br_lib/{name}/q{q}"),
                || drop(black_box(br_rust(&pool, q, &body))),
                || drop(black_box(c_encode(&mut encoder, params, None, &body))),
            );
            group.bench_function(format!("{name}/q{q}/rust"), |b| {
                b.iter(|| black_box(br_rust(&pool, q, black_box(&body))))
            });
            group.bench_function(format!("{name}/q{q}/c"), |b| {
                b.iter(|| black_box(c_encode(&mut encoder, params, None, black_box(&body))))
            });
            group.bench_function(format!("{name}/q{q}/c_fresh"), |b| {
                b.iter(|| black_box(c_encode(&mut fresh, params, None, black_box(&body))))
            });
        }
    }
    group.finish();
    br_decode(c, &pool);
}

fn br_decode(c: &mut Criterion, pool: &CodecPool) {
    let mut group = c.benchmark_group("br_lib_decode");
    for (name, len) in SIZES {
        let body = body(len);
        let wire = br_rust(pool, 4, &body);
        let (rust_mem, rust) = peak_of(|| br_rust_decode(&CodecPool::new(), &wire, len));
        let (c_mem, c) = peak_of(|| c_decode(None, &wire, len));
        assert!(rust[..] == body[..] && c[..] == body[..]);
        report(
            &format!("br_lib_decode/{name}"),
            body.len(),
            [(0, rust_mem), (0, c_mem)],
        );
        paired(
            &format!("br_lib_decode/{name}"),
            || drop(black_box(br_rust_decode(pool, &wire, len))),
            || drop(black_box(c_decode(None, &wire, len))),
        );
        group.bench_function(format!("{name}/rust"), |b| {
            b.iter(|| black_box(br_rust_decode(pool, black_box(&wire), len)))
        });
        group.bench_function(format!("{name}/c"), |b| {
            b.iter(|| black_box(c_decode(None, black_box(&wire), len)))
        });
    }
    group.finish();
}

fn dcb(c: &mut Criterion) {
    let dictionaries = dictionaries();
    let mut encoder = CEncoder::new(4 << 20);
    let mut fresh = CEncoder::new(0);
    let mut group = c.benchmark_group("dcb_lib");
    for (name, len) in SIZES {
        let body = body(len);
        for (dict_name, dictionary) in &dictionaries {
            let bytes = dictionary.bytes();
            let prepared = Arc::new(PreparedDictionary::new(bytes).unwrap());
            let params = Params {
                quality: DCB_QUALITY,
                lgwin: dcb_lgwin(bytes.len(), body.len()),
                size_hint: Some(body.len()),
            };
            let (rust_mem, rust) = peak_of(|| rust_dcb(bytes, &body));
            let c_cold =
                |b: &[u8]| c_encode(&mut CEncoder::new(0), params, Some(prepared.clone()), b);
            let (c_mem, c) = peak_of(|| c_cold(&body));
            let id = format!("{name}/{dict_name}");
            report(
                &format!("dcb_lib/{id}"),
                body.len(),
                [(rust.len(), rust_mem), (c.len(), c_mem)],
            );
            eprintln!(
                "  prepared dictionary: {} B (besides its {} B)",
                prepared.size(),
                bytes.len()
            );
            paired(
                &format!("dcb_lib/{id}"),
                || drop(black_box(rust_dcb(bytes, &body))),
                || {
                    let d = Some(prepared.clone());
                    drop(black_box(c_encode(&mut encoder, params, d, &body)))
                },
            );
            group.bench_function(format!("{id}/rust"), |b| {
                b.iter(|| black_box(rust_dcb(bytes, black_box(&body))))
            });
            group.bench_function(format!("{id}/c"), |b| {
                b.iter(|| {
                    let d = Some(prepared.clone());
                    black_box(c_encode(&mut encoder, params, d, black_box(&body)))
                })
            });
            group.bench_function(format!("{id}/c_fresh"), |b| {
                b.iter(|| {
                    let d = Some(prepared.clone());
                    black_box(c_encode(&mut fresh, params, d, black_box(&body)))
                })
            });
        }
    }
    group.finish();
    dcb_decode(c, &dictionaries);
}

fn dcb_decode(c: &mut Criterion, dictionaries: &[(&str, Dictionary)]) {
    let mut group = c.benchmark_group("dcb_lib_decode");
    for (name, len) in SIZES {
        let body = body(len);
        for (dict_name, dictionary) in dictionaries {
            let bytes = dictionary.bytes();
            let wire = rust_dcb(bytes, &body);
            let (rust_mem, rust) = peak_of(|| rust_dcb_decode(bytes, &wire, len, true));
            let (c_mem, c) = peak_of(|| c_decode(Some(bytes), &wire, len));
            assert!(rust[..] == body[..] && c[..] == body[..]);
            let id = format!("{name}/{dict_name}");
            report(
                &format!("dcb_lib_decode/{id}"),
                body.len(),
                [(0, rust_mem), (0, c_mem)],
            );
            paired(
                &format!("dcb_lib_decode/{id}"),
                || drop(black_box(rust_dcb_decode(bytes, &wire, len, true))),
                || drop(black_box(c_decode(Some(bytes), &wire, len))),
            );
            group.bench_function(format!("{id}/rust"), |b| {
                b.iter(|| black_box(rust_dcb_decode(bytes, black_box(&wire), len, true)))
            });
            group.bench_function(format!("{id}/rust_copy"), |b| {
                b.iter(|| black_box(rust_dcb_decode(bytes, black_box(&wire), len, false)))
            });
            group.bench_function(format!("{id}/c"), |b| {
                b.iter(|| black_box(c_decode(Some(bytes), black_box(&wire), len)))
            });
        }
    }
    group.finish();
}

/// The crate's own `dcb` functions, header and pool included.
fn dcb_crate(c: &mut Criterion) {
    let pool = CodecPool::new();
    let level = CompressionLevel::Precise(DCB_QUALITY as i32);
    let mut group = c.benchmark_group("dcb_crate");
    for (name, len) in SIZES {
        let body = body(len);
        for (dict_name, dictionary) in &dictionaries() {
            let encode = |pool: &CodecPool, body: &[u8]| {
                let mut out = BytesMut::new();
                OneShot::new(ContentCoding::Dcb)
                    .dictionary(dictionary)
                    .level(level)
                    .pool(pool)
                    .encode(body, &mut out)
                    .unwrap();
                out
            };
            // Prepared state is made once per dictionary, before the cold state is measured.
            let wire = encode(&pool, &body);
            let (mem, _) = peak_of(|| encode(&CodecPool::new(), &body));
            let (dec_mem, _) = peak_of(|| {
                OneShot::new(ContentCoding::Dcb)
                    .dictionary(dictionary)
                    .decode(&wire, len)
                    .unwrap()
            });
            let id = format!("{name}/{dict_name}");
            report(
                &format!("dcb_crate/{id}"),
                body.len(),
                [(wire.len() - 36, mem), (0, dec_mem)],
            );
            group.bench_function(format!("{id}/encode"), |b| {
                b.iter(|| black_box(encode(&pool, black_box(&body))))
            });
            group.bench_function(format!("{id}/decode"), |b| {
                b.iter(|| {
                    black_box(
                        OneShot::new(ContentCoding::Dcb)
                            .dictionary(dictionary)
                            .decode(black_box(&wire), len)
                            .unwrap(),
                    )
                })
            });
        }
    }
    group.finish();
}

/// The median over alternating rounds of `c`'s time over `rust`'s: on a machine shared with
/// other work, each ratio is taken over two runs a few microseconds apart, where criterion's
/// groups run seconds apart. Rounds alternate which side runs first.
fn paired(case: &str, mut rust: impl FnMut(), mut c: impl FnMut()) {
    use std::time::Instant;
    let time = |f: &mut dyn FnMut()| {
        let start = Instant::now();
        f();
        start.elapsed().as_secs_f64()
    };
    let started = Instant::now();
    let mut ratios = Vec::new();
    while ratios.len() < 21 || started.elapsed() < Duration::from_millis(600) {
        let (r, k) = if ratios.len() % 2 == 0 {
            (time(&mut rust), time(&mut c))
        } else {
            let k = time(&mut c);
            (time(&mut rust), k)
        };
        ratios.push(k / r);
    }
    ratios.sort_by(f64::total_cmp);
    let median = ratios[ratios.len() / 2];
    eprintln!(
        "{case}: paired c/rust {median:.2} ({} rounds)",
        ratios.len()
    );
}

/// One line per case: the body, then for each side (`rust`, `c`; the crate's `encode`,
/// `decode`) its output (0 for a decoder) and the peak heap of a cold state.
fn report(case: &str, len: usize, sides: [(usize, usize); 2]) {
    let names = if case.starts_with("dcb_crate") {
        ["encode", "decode"]
    } else {
        ["rust", "c"]
    };
    let sides: Vec<String> = names
        .iter()
        .zip(sides)
        .map(|(name, (out, mem))| format!("{name} {out} B out, {mem} B peak"))
        .collect();
    eprintln!("{case}: body {len} B; {}", sides.join("; "));
}

criterion_group! {
    name = benches;
    config = config();
    targets = br, dcb, dcb_crate
}
criterion_main!(benches);
