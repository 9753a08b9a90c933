//! Interop with other implementations: skipped when they are missing, failed instead under
//! `REQUIRE_INTEROP=1` (the rule of `tests/common/tools.rs`, which unit tests cannot reach).
//! What dictionaries buy is measured by `bench/src/bin/dict_gains.rs`.

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

/// Whether `python3 -c "import module"` succeeds.
fn python_imports(module: &str) -> bool {
    std::process::Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `what` is not installed: one `skipped:` line, or a failure under `REQUIRE_INTEROP=1`.
fn missing(what: &str) {
    let test = std::thread::current().name().unwrap_or_default().to_owned();
    if std::env::var_os("REQUIRE_INTEROP").is_some_and(|v| v == "1") {
        panic!("{what} not found, and REQUIRE_INTEROP=1 requires every interop tool ({test})");
    }
    eprintln!("skipped: {what} not found ({test})");
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tower-gzip-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn interop_python_zstandard_decodes_dcz_payloads() {
    if !python_imports("zstandard") {
        missing("python3 module `zstandard`");
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
            let mut encoder = crate::dcz::encoder(&dict, CompressionLevel::Default, &pool).unwrap();
            // Flushes and idles: the body becomes several frames, all with the dictionary.
            for (i, chunk) in body.chunks(1000).enumerate() {
                encoder.encode(chunk, &mut wire).unwrap();
                if i % 2 == 0 {
                    encoder.flush(&mut wire).unwrap();
                } else {
                    encoder.idle(&mut wire).unwrap();
                }
            }
            encoder.finish(&mut wire).unwrap();
        } else {
            encode_all::<DczCore>(&dict, CompressionLevel::Default, &body, &pool, &mut wire)
                .unwrap();
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
    if !python_imports("_brotli") {
        missing("python3 module `brotli`");
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
            let mut encoder =
                crate::dcb::encoder(&dict, level, crate::CodecPool::global()).unwrap();
            for chunk in body.chunks(700) {
                encoder.encode(chunk, &mut wire).unwrap();
                encoder.flush(&mut wire).unwrap();
            }
            encoder.finish(&mut wire).unwrap();
        } else {
            encode_all::<DcbCore>(&dict, level, &body, crate::CodecPool::global(), &mut wire)
                .unwrap();
        }
        std::fs::write(dir.join(name), &wire[36..]).unwrap();
    }
    let mut args = vec!["-c", C_BROTLI_DECODE, dir.to_str().unwrap()];
    args.extend(cases.iter().map(|(name, _, _)| *name));
    let out = tool("python3", &args);
    std::fs::remove_dir_all(&dir).unwrap();
    match out.as_deref().map(str::trim) {
        Some("missing") => {
            eprintln!("skipped: this brotli package lacks BrotliDecoderAttachDictionary")
        }
        out => assert_eq!(out, Some("ok"), "C brotli failed to decode"),
    }
}

#[test]
fn interop_brotli_cli_decodes_dcb_payloads() {
    if std::process::Command::new("brotli")
        .arg("--help")
        .output()
        .is_err()
    {
        missing("brotli");
        return;
    }
    // An older CLI (before brotli 1.1) has no dictionary option: nothing to test against.
    if !tool("brotli", &["--help"]).is_some_and(|help| help.contains("--dictionary")) {
        eprintln!("skipped: this brotli CLI has no -D/--dictionary option");
        return;
    }
    let (dict, bodies) = trained();
    let body = bodies.concat();
    let dir = temp_dir("dcb-interop");
    dict.save(dir.join("dict")).unwrap();
    let mut wire = BytesMut::new();
    encode_all::<DcbCore>(
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
