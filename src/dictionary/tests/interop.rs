//! Interop with other implementations (skipped when they are missing) and the
//! measurement of what dictionaries buy.

use bytes::BytesMut;

use super::*;
use crate::{CodecPool, CompressionLevel};

/// A program on this machine, or a note saying the test is skipped.
fn tool(program: &str, args: &[&str]) -> Option<String> {
    let output = std::process::Command::new(program)
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        eprintln!("{program} failed: {text}");
        return None;
    }
    Some(text)
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tower-gzip-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn interop_python_zstandard_decodes_dcz_payloads() {
    if tool("python3", &["-c", "import zstandard"]).is_none() {
        eprintln!("note: python3 with the zstandard module is not installed; dcz interop skipped");
        return;
    }
    let pool = CodecPool::new();
    let (dict, bodies) = trained();
    let dir = temp_dir("dcz-interop");
    dict.save(dir.join("dict")).unwrap();
    let mut body = dict.bytes()[..200].to_vec(); // matches into the dictionary's header bytes
    body.extend_from_slice(&bodies.concat());
    std::fs::write(dir.join("body"), &body).unwrap();
    for (name, streaming) in [("oneshot", false), ("stream", true)] {
        let mut wire = BytesMut::new();
        if streaming {
            let mut encoder = DczEncoder::new(&dict, CompressionLevel::Default, &pool).unwrap();
            // Flushes and idles: the body becomes several frames, all with the dictionary.
            for (i, chunk) in body.chunks(1000).enumerate() {
                encoder.encode(chunk, &mut wire).unwrap();
                if i % 2 == 0 {
                    encoder.flush(&mut wire).unwrap();
                } else {
                    crate::codec::Encode::idle(&mut encoder, &mut wire).unwrap();
                }
            }
            encoder.finish(&mut wire).unwrap();
        } else {
            encode_dcz(&dict, CompressionLevel::Default, &body, &pool, &mut wire).unwrap();
        }
        std::fs::write(dir.join(name), &wire[40..]).unwrap();
    }
    let script = r#"
import sys, zstandard
d = sys.argv[1]
raw = zstandard.ZstdCompressionDict(open(d + "/dict", "rb").read(), dict_type=zstandard.DICT_TYPE_RAWCONTENT)
body = open(d + "/body", "rb").read()
for name in ("oneshot", "stream"):
    reader = zstandard.ZstdDecompressor(dict_data=raw).stream_reader(open(d + "/" + name, "rb"), read_across_frames=True)
    assert reader.read() == body, name
# The other direction: python compresses with the raw-content dictionary, Rust decodes.
cctx = zstandard.ZstdCompressor(level=3, dict_data=raw)
open(d + "/from-python", "wb").write(cctx.compress(body))
print("ok")
"#;
    let out = tool("python3", &["-c", script, dir.to_str().unwrap()]);
    let from_python = std::fs::read(dir.join("from-python")).ok();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        out.as_deref().map(str::trim),
        Some("ok"),
        "python zstandard failed to decode"
    );
    let mut wire = DCZ_MAGIC.to_vec();
    wire.extend_from_slice(&dict.hash());
    wire.extend_from_slice(&from_python.unwrap());
    assert_eq!(
        &decode_dcz(&dict, &wire, &pool, LIMIT).unwrap()[..],
        &body[..]
    );
}

/// Google's C brotli decoder as Chromium drives it: `BrotliDecoderAttachDictionary` with
/// `BROTLI_SHARED_DICTIONARY_RAW`, reached through ctypes in the extension module of
/// Python's `brotli` package (1.1 or later exports it).
const C_BROTLI_DECODE: &str = r#"
import ctypes, sys, _brotli
lib = ctypes.CDLL(_brotli.__file__)
if not hasattr(lib, "BrotliDecoderAttachDictionary"):
    print("missing"); sys.exit(0)
lib.BrotliDecoderCreateInstance.restype = ctypes.c_void_p
lib.BrotliDecoderCreateInstance.argtypes = [ctypes.c_void_p] * 3
lib.BrotliDecoderAttachDictionary.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_char_p]
lib.BrotliDecoderDecompressStream.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
lib.BrotliDecoderDestroyInstance.argtypes = [ctypes.c_void_p]
d = sys.argv[1]
dictionary = open(d + "/dict", "rb").read()
body = open(d + "/body", "rb").read()
def decode(payload, attach):
    state = lib.BrotliDecoderCreateInstance(None, None, None)
    if attach and not lib.BrotliDecoderAttachDictionary(state, 0, len(dictionary), dictionary):
        raise SystemExit("attach failed")
    src = ctypes.create_string_buffer(payload, len(payload))
    dst = ctypes.create_string_buffer(len(body) + 4096)
    avail_in, next_in = ctypes.c_size_t(len(payload)), ctypes.c_void_p(ctypes.addressof(src))
    avail_out, next_out = ctypes.c_size_t(len(dst)), ctypes.c_void_p(ctypes.addressof(dst))
    result = lib.BrotliDecoderDecompressStream(state, ctypes.byref(avail_in), ctypes.byref(next_in), ctypes.byref(avail_out), ctypes.byref(next_out), None)
    lib.BrotliDecoderDestroyInstance(state)
    return result, dst.raw[: len(dst) - avail_out.value], avail_in.value
for name in sys.argv[2:]:
    payload = open(d + "/" + name, "rb").read()
    result, out, left = decode(payload, True)
    assert (result, left) == (1, 0) and out == body, (name, result, left, len(out))
    result, out, _ = decode(payload, False)
    assert result != 1 or out != body, name
# The other direction: C brotli compresses with the dictionary prepared as raw, Rust decodes.
lib.BrotliEncoderCreateInstance.restype = ctypes.c_void_p
lib.BrotliEncoderCreateInstance.argtypes = [ctypes.c_void_p] * 3
lib.BrotliEncoderPrepareDictionary.restype = ctypes.c_void_p
lib.BrotliEncoderPrepareDictionary.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
lib.BrotliEncoderAttachPreparedDictionary.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
lib.BrotliEncoderSetParameter.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
lib.BrotliEncoderCompressStream.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
lib.BrotliEncoderDestroyInstance.argtypes = [ctypes.c_void_p]
lib.BrotliEncoderDestroyPreparedDictionary.argtypes = [ctypes.c_void_p]
encoder = lib.BrotliEncoderCreateInstance(None, None, None)
lib.BrotliEncoderSetParameter(encoder, 1, 5)  # BROTLI_PARAM_QUALITY
prepared = lib.BrotliEncoderPrepareDictionary(0, len(dictionary), dictionary, 11, None, None, None)
assert prepared and lib.BrotliEncoderAttachPreparedDictionary(encoder, prepared)
src = ctypes.create_string_buffer(body, len(body))
dst = ctypes.create_string_buffer(len(body) + 4096)
avail_in, next_in = ctypes.c_size_t(len(body)), ctypes.c_void_p(ctypes.addressof(src))
avail_out, next_out = ctypes.c_size_t(len(dst)), ctypes.c_void_p(ctypes.addressof(dst))
assert lib.BrotliEncoderCompressStream(encoder, 2, ctypes.byref(avail_in), ctypes.byref(next_in), ctypes.byref(avail_out), ctypes.byref(next_out), None)  # FINISH
open(d + "/from-c", "wb").write(dst.raw[: len(dst) - avail_out.value])
lib.BrotliEncoderDestroyInstance(encoder)
lib.BrotliEncoderDestroyPreparedDictionary(prepared)
print("ok")
"#;

#[test]
fn interop_c_brotli_decodes_dcb_payloads() {
    if tool("python3", &["-c", "import _brotli"]).is_none() {
        eprintln!("note: python3 with the brotli package is not installed; C dcb interop skipped");
        return;
    }
    let (dict, bodies) = trained();
    let dir = temp_dir("dcb-interop-c");
    dict.save(dir.join("dict")).unwrap();
    let mut body = dict.bytes()[..200].to_vec(); // matches into the dictionary's first bytes
    body.extend_from_slice(&bodies.concat());
    std::fs::write(dir.join("body"), &body).unwrap();
    let cases = [
        ("q5", CompressionLevel::Default, false),
        ("q9-stream", CompressionLevel::Precise(9), true),
        ("q11", CompressionLevel::Best, false),
    ];
    for (name, level, streaming) in cases {
        let mut wire = BytesMut::new();
        if streaming {
            let mut encoder = DcbEncoder::new(&dict, level, crate::CodecPool::global());
            for chunk in body.chunks(700) {
                encoder.encode(chunk, &mut wire).unwrap();
                encoder.flush(&mut wire).unwrap();
            }
            encoder.finish(&mut wire).unwrap();
        } else {
            encode_dcb(&dict, level, &body, crate::CodecPool::global(), &mut wire).unwrap();
        }
        std::fs::write(dir.join(name), &wire[36..]).unwrap();
    }
    let mut args = vec!["-c", C_BROTLI_DECODE, dir.to_str().unwrap()];
    args.extend(cases.iter().map(|(name, _, _)| *name));
    let out = tool("python3", &args);
    std::fs::remove_dir_all(&dir).unwrap();
    match out.as_deref().map(str::trim) {
        Some("missing") => {
            eprintln!("note: this brotli package lacks BrotliDecoderAttachDictionary; skipped")
        }
        out => assert_eq!(out, Some("ok"), "C brotli failed to decode"),
    }
}

#[test]
fn interop_brotli_cli_decodes_dcb_payloads() {
    let has_dictionary_option =
        tool("brotli", &["--help"]).is_some_and(|help| help.contains("--dictionary"));
    if !has_dictionary_option {
        eprintln!("note: no brotli CLI with -D/--dictionary on this machine; dcb interop skipped");
        return;
    }
    let (dict, bodies) = trained();
    let body = bodies.concat();
    let dir = temp_dir("dcb-interop");
    dict.save(dir.join("dict")).unwrap();
    let mut wire = BytesMut::new();
    encode_dcb(
        &dict,
        CompressionLevel::Default,
        &body,
        crate::CodecPool::global(),
        &mut wire,
    )
    .unwrap();
    std::fs::write(dir.join("payload.br"), &wire[36..]).unwrap();
    let dict_path = dir.join("dict");
    let payload = dir.join("payload.br");
    let out_path = dir.join("out");
    let ok = tool(
        "brotli",
        &[
            "-d",
            "-f",
            "-D",
            dict_path.to_str().unwrap(),
            payload.to_str().unwrap(),
            "-o",
            out_path.to_str().unwrap(),
        ],
    );
    let decoded = std::fs::read(&out_path).ok();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(ok.is_some(), "brotli -d -D failed");
    assert_eq!(decoded.as_deref(), Some(&body[..]));
}

/// Bytes on the wire for generated API JSON: plain zstd 3 and br 5 against `dcz`/`dcb` with
/// dictionaries of 4, 16 and 32 KiB trained on other responses of the same API. Run with
/// `cargo test --lib measure_dictionary_gains -- --ignored --nocapture`.
#[test]
#[ignore]
fn measure_dictionary_gains() {
    use crate::codec::{ContentCoding, OneShot};
    let pool = CodecPool::new();
    let training = json_samples(2000, 21);
    let bodies = json_samples(300, 22);
    let identity: usize = bodies.iter().map(Vec::len).sum();
    let n = bodies.len();
    // Bytes of all bodies, and the best of 5 rounds' time per response.
    let run = |encode: &dyn Fn(&[u8], &mut BytesMut)| -> (usize, f64) {
        let mut best = f64::MAX;
        let mut bytes = 0;
        for _ in 0..5 {
            let started = std::time::Instant::now();
            bytes = 0;
            for body in &bodies {
                let mut out = BytesMut::new();
                encode(body, &mut out);
                bytes += out.len();
            }
            best = best.min(started.elapsed().as_secs_f64() * 1e6 / n as f64);
        }
        (bytes, best)
    };
    let plain = |format, level| {
        run(&|body, out| {
            OneShot::new(format)
                .level(CompressionLevel::Precise(level))
                .pool(&pool)
                .encode(body, out)
                .unwrap()
        })
    };
    let pct = |bytes: usize| 100.0 * bytes as f64 / identity as f64;
    let (zstd3, zstd3_us) = plain(ContentCoding::Zstd, 3);
    let (br5, br5_us) = plain(ContentCoding::Br, 5);
    let build = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    println!(
        "{n} responses, {identity} bytes identity ({} average); dictionaries trained on {} \
         others; {build} build",
        identity / n,
        training.len()
    );
    println!(
        "| coding | bytes (without the 40/36-byte headers) | % of identity | vs plain | µs/response |"
    );
    println!("|---|---|---|---|---|");
    println!(
        "| zstd 3 | {zstd3} | {:.1}% | 1.00x | {zstd3_us:.1} |",
        pct(zstd3)
    );
    println!("| br 5 | {br5} | {:.1}% | 1.00x | {br5_us:.1} |", pct(br5));
    for size in [4 << 10, 16 << 10, 32 << 10] {
        let started = std::time::Instant::now();
        let dict = dictionary(train(&training, size).unwrap());
        let trained_in = started.elapsed();
        for body in &bodies {
            let mut out = BytesMut::new();
            encode_dcz(&dict, CompressionLevel::Precise(3), body, &pool, &mut out).unwrap();
            assert_eq!(
                &decode_dcz(&dict, &out, &pool, LIMIT).unwrap()[..],
                &body[..]
            );
        }
        let (dcz, dcz_us) = run(&|body, out| {
            encode_dcz(&dict, CompressionLevel::Precise(3), body, &pool, out).unwrap()
        });
        let (dcb, dcb_us) = run(&|body, out| {
            encode_dcb(
                &dict,
                CompressionLevel::Precise(5),
                body,
                crate::CodecPool::global(),
                out,
            )
            .unwrap()
        });
        let kib = size >> 10;
        // A row: the bytes (and without the headers), their share of identity, and how they
        // compare with the plain coding's.
        let row = |coding: &str, bytes: usize, header: usize, plain: &str, base: usize, us: f64| {
            let payload = bytes - header * n;
            println!(
                "| {coding}, {kib} KiB dict | {bytes} ({payload}) | {:.1}% | {:.2}x {plain} ({:.2}x) | {us:.1} |",
                pct(bytes),
                bytes as f64 / base as f64,
                payload as f64 / base as f64
            );
        };
        row("dcz 3", dcz, 40, "zstd 3", zstd3, dcz_us);
        row("dcb 5", dcb, 36, "br 5", br5, dcb_us);
        println!(
            "({kib} KiB: {} bytes, trained in {trained_in:.2?})",
            dict.len()
        );
    }
}

/// Where a `dcb` response's time goes (release build, for the notes):
/// `cargo test --release --lib profile_dcb_costs -- --ignored --nocapture`.
#[test]
#[ignore]
fn profile_dcb_costs() {
    use brotli::enc::encode::{BrotliEncoderParameter as P, BrotliEncoderStateStruct};
    let body = json_samples(1, 5).concat();
    for size in [4 << 10, 32 << 10] {
        let dict = dictionary(train(&json_samples(2000, 21), size).unwrap());
        let time = |f: &dyn Fn()| {
            let started = std::time::Instant::now();
            for _ in 0..200 {
                f();
            }
            started.elapsed().as_secs_f64() * 1e6 / 200.0
        };
        let fresh = time(&|| {
            let mut core = BrotliEncoderStateStruct::new(brotli::enc::StandardAlloc::default());
            core.set_parameter(P::BROTLI_PARAM_QUALITY, 5);
            core.set_parameter(P::BROTLI_PARAM_LGWIN, 22);
            std::hint::black_box(&mut core);
        });
        let with_dict = time(&|| {
            let mut core = BrotliEncoderStateStruct::new(brotli::enc::StandardAlloc::default());
            core.set_parameter(P::BROTLI_PARAM_QUALITY, 5);
            core.set_parameter(P::BROTLI_PARAM_LGWIN, 22);
            core.set_custom_dictionary(dict.len(), dict.bytes());
            std::hint::black_box(&mut core);
        });
        let whole = time(&|| {
            let mut out = BytesMut::new();
            encode_dcb(
                &dict,
                CompressionLevel::Default,
                &body,
                crate::CodecPool::global(),
                &mut out,
            )
            .unwrap();
        });
        println!(
            "{} KiB dictionary, {} B body: new encoder {fresh:.1} µs, + dictionary {with_dict:.1} µs, whole dcb {whole:.1} µs",
            size >> 10,
            body.len()
        );
    }
}
