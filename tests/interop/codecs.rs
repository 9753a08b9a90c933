//! Our codecs against tools nobody here wrote: the `gzip`, `zstd` and `brotli` CLIs, `cat`,
//! and Python's `gzip`, `zlib`, `zstandard` and `brotli` modules, each way round. A test whose
//! tool is missing is skipped, or fails under `REQUIRE_INTEROP=1` (`.ci/run` installs them
//! all and sets it): see `support/src/tools.rs`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::BytesMut;
use tower_gzip::ContentCoding;
use tower_gzip::codec::{Decoder, Encoder};
use tower_gzip::{CodecPool, CompressionLevel};

use crate::common::text;
use crate::common::tools;

/// Runs `program args` with `stdin` as its input; returns its stdout. Fails the test if the
/// program exits with an error (or is missing: tests check with [`tools::available`] first).
pub(crate) fn run(program: &str, args: &[&str], stdin: &[u8]) -> Vec<u8> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot run `{program}` ({e}): check for it with `tools::available` first")
        });
    let mut pipe = child.stdin.take().expect("stdin is piped");
    let input = stdin.to_vec();
    // Write from another thread so a full stdout pipe cannot deadlock us.
    let writer = std::thread::spawn(move || pipe.write_all(&input));
    let output = child.wait_with_output().expect("wait for the child");
    writer.join().unwrap().expect("write the child's stdin");
    assert!(
        output.status.success(),
        "`{program} {args:?}` failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

/// Runs `def f(op, data): ...` (Python, returning bytes) over each `(op, data)` job in one
/// interpreter (starting Python is slow), returning each result.
pub(crate) fn python(function: &str, jobs: &[(u8, &[u8])]) -> Vec<Vec<u8>> {
    let script = format!(
        "import sys, struct, gzip, zlib, io\n{function}\n\
         inp = sys.stdin.buffer.read(); i = 0; out = []\n\
         while i < len(inp):\n\
         \x20   op, n = struct.unpack('<BI', inp[i:i + 5]); i += 5\n\
         \x20   r = f(op, inp[i:i + n]); i += n\n\
         \x20   out.append(struct.pack('<I', len(r)) + r)\n\
         sys.stdout.buffer.write(b''.join(out))\n"
    );
    let mut input = Vec::new();
    for (op, data) in jobs {
        input.push(*op);
        input.extend_from_slice(&(data.len() as u32).to_le_bytes());
        input.extend_from_slice(data);
    }
    let output = run("python3", &["-c", &script], &input);
    let mut results = Vec::new();
    let mut rest = &output[..];
    while !rest.is_empty() {
        let n = u32::from_le_bytes(rest[..4].try_into().unwrap()) as usize;
        results.push(rest[4..4 + n].to_vec());
        rest = &rest[4 + n..];
    }
    assert_eq!(results.len(), jobs.len(), "one result per job");
    results
}

/// A fresh, empty scratch directory under the system temp dir.
fn scratch() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "tower-gzip-interop-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("temp paths are UTF-8")
}

pub(crate) fn samples() -> Vec<Vec<u8>> {
    vec![Vec::new(), b"x".to_vec(), text(1000), text(300_000)]
}

/// Our encoder, with a sync flush every `flush_every` bytes of input.
fn ours(
    format: ContentCoding,
    level: i32,
    data: &[u8],
    flush_every: usize,
    padding: usize,
) -> Vec<u8> {
    let pool = CodecPool::new();
    let mut encoder = Encoder::for_coding(format, CompressionLevel::Precise(level), None, &pool)
        .unwrap()
        .with_padding(padding);
    let mut wire = BytesMut::new();
    for chunk in data.chunks(flush_every) {
        encoder.encode(chunk, &mut wire).unwrap();
        encoder.flush(&mut wire).unwrap();
    }
    encoder.finish(&mut wire).unwrap();
    wire.to_vec()
}

fn our_decode(format: ContentCoding, wire: &[u8]) -> Vec<u8> {
    let pool = CodecPool::new();
    let mut decoder = Decoder::for_coding(format, None, &pool).unwrap();
    let mut out = BytesMut::new();
    for chunk in wire.chunks(1000) {
        let mut input = chunk;
        loop {
            let n = decoder.decode(input, &mut out, 16 * 1024).unwrap();
            input = &input[n..];
            if input.is_empty() && !decoder.has_pending_output() {
                break;
            }
        }
    }
    decoder.finish().unwrap();
    out.to_vec()
}

/// op 0: `gzip.decompress`; op 1: `zlib` with wbits = 31 (gzip), requiring a clean end;
/// op 2: `zlib.decompress` (zlib).
const PY_DECODE: &str = "def f(op, data):
    if op == 0:
        return gzip.decompress(data)
    if op == 1:
        d = zlib.decompressobj(wbits=31)
        out = d.decompress(data)
        assert d.eof and not d.unused_data, 'incomplete or trailing data'
        return out
    return zlib.decompress(data)";

#[test]
fn gzip_cli_decodes_our_gzip() {
    if !tools::available(&["gzip"], &[]) {
        return;
    }
    for data in samples() {
        for (level, flush_every, padding) in [(1, usize::MAX, 0), (6, 4096, 0), (9, 777, 37)] {
            let wire = ours(
                ContentCoding::Gzip,
                level,
                &data,
                flush_every.max(1),
                padding,
            );
            let plain = run("gzip", &["-dc"], &wire);
            assert!(
                plain == data,
                "gzip -dc: level {level}, {} bytes",
                data.len()
            );
        }
    }
    // Integrity check mode agrees too.
    run(
        "gzip",
        &["-t"],
        &ours(ContentCoding::Gzip, 0, &text(5000), 100, 0),
    );
}

#[test]
fn python_decodes_our_gzip_and_zlib() {
    if !tools::available(&["python3"], &[]) {
        return;
    }
    let mut wires = Vec::new();
    for data in samples() {
        for level in [0, 6, 9] {
            let gz = ours(ContentCoding::Gzip, level, &data, 10_000, 0);
            let zl = ours(ContentCoding::Deflate, level, &data, 10_000, 0);
            wires.push((0, gz.clone(), data.clone()));
            wires.push((1, gz, data.clone()));
            wires.push((2, zl, data.clone()));
        }
    }
    let jobs: Vec<_> = wires.iter().map(|(op, w, _)| (*op, &w[..])).collect();
    for ((op, _, data), plain) in wires.iter().zip(python(PY_DECODE, &jobs)) {
        assert!(plain == *data, "python op {op}, {} bytes", data.len());
    }
}

#[test]
fn we_decode_gzip_cli_output() {
    if !tools::available(&["gzip"], &[]) {
        return;
    }
    let data = text(200_000);
    for level in ["-1", "-9"] {
        let wire = run("gzip", &["-c", level], &data);
        assert!(
            our_decode(ContentCoding::Gzip, &wire) == data,
            "gzip {level}"
        );
    }
    // From a file, gzip records the name (FNAME) and the mtime.
    let dir = scratch();
    let file = dir.join("payload.json");
    std::fs::write(&file, &data).unwrap();
    let wire = run("gzip", &["-c", "-N", "-6", path_str(&file)], &[]);
    assert_ne!(wire[3] & 0x08, 0, "gzip wrote FNAME");
    assert!(our_decode(ContentCoding::Gzip, &wire) == data);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn we_decode_python_gzip_with_name_and_mtime() {
    if !tools::available(&["python3"], &[]) {
        return;
    }
    let data = text(50_000);
    // op 10: GzipFile with a file name and mtime; op 0-9: gzip.compress at that level.
    let encode = "def f(op, data):
    if op == 10:
        buf = io.BytesIO()
        with gzip.GzipFile(filename='report.json', mode='wb', fileobj=buf, mtime=1700000000) as g:
            g.write(data)
        return buf.getvalue()
    return gzip.compress(data, op)";
    let jobs = [
        (10, &data[..]),
        (0, &data),
        (1, &data),
        (9, &data),
        (6, b""),
    ];
    let wires = python(encode, &jobs);
    let named = &wires[0];
    assert_ne!(named[3] & 0x08, 0, "FNAME set");
    assert_eq!(&named[4..8], &1_700_000_000u32.to_le_bytes());
    for ((op, data), wire) in jobs.iter().zip(&wires) {
        assert!(
            our_decode(ContentCoding::Gzip, wire) == *data,
            "python gzip op {op}"
        );
    }
}

#[test]
fn we_decode_python_zlib_and_raw_deflate() {
    if !tools::available(&["python3"], &[]) {
        return;
    }
    let data = text(80_000);
    // op 0: raw deflate (wbits = -15); op 1/9: zlib.compress at that level; op 2: a zlib
    // stream with a 512-byte window (wbits = 9).
    let encode = "def f(op, data):
    if op == 0:
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        return c.compress(data) + c.flush()
    if op == 2:
        c = zlib.compressobj(6, zlib.DEFLATED, 9)
        return c.compress(data) + c.flush()
    return zlib.compress(data, op)";
    let jobs = [(0, &data[..]), (1, &data), (9, &data), (2, &data), (0, b"")];
    let wires = python(encode, &jobs);
    for ((op, data), wire) in jobs.iter().zip(&wires) {
        assert!(
            our_decode(ContentCoding::Deflate, wire) == *data,
            "python zlib op {op}"
        );
    }
}

#[test]
fn we_decode_concatenated_members_from_cat() {
    if !tools::available(&["gzip", "cat"], &[]) {
        return;
    }
    let dir = scratch();
    let (a, b) = (text(30_000), b"second member\n".to_vec());
    std::fs::write(dir.join("a"), &a).unwrap();
    std::fs::write(dir.join("b"), &b).unwrap();
    run("gzip", &["-9", path_str(&dir.join("a"))], &[]);
    std::fs::write(dir.join("b.gz"), ours(ContentCoding::Gzip, 1, &b, 5, 0)).unwrap();
    let cat = run(
        "cat",
        &[path_str(&dir.join("a.gz")), path_str(&dir.join("b.gz"))],
        &[],
    );
    let expected = [a.clone(), b.clone()].concat();
    assert!(our_decode(ContentCoding::Gzip, &cat) == expected);
    // And gzip itself agrees on what the concatenation means.
    assert!(run("gzip", &["-dc"], &cat) == expected);
    std::fs::remove_dir_all(dir).unwrap();
}

/// Our stream with an idle every `idle_every` bytes (zstd: the first idle, its pause length
/// unknown, ends the frame and the next input starts another; later ones, after short
/// pauses, park the context with the frame open).
#[cfg(feature = "zstd")]
fn ours_with_idles(format: ContentCoding, data: &[u8], idle_every: usize) -> Vec<u8> {
    let pool = CodecPool::new();
    let mut encoder = Encoder::for_coding(format, CompressionLevel::Default, None, &pool).unwrap();
    let mut wire = BytesMut::new();
    for chunk in data.chunks(idle_every) {
        encoder.encode(chunk, &mut wire).unwrap();
        encoder.idle(&mut wire).unwrap();
    }
    encoder.finish(&mut wire).unwrap();
    wire.to_vec()
}

/// Our zstd streams of `data`: flushed, with idles (two frames when `data` is over 50,000
/// bytes), and one-shot.
#[cfg(feature = "zstd")]
fn our_zstd_wires(data: &[u8]) -> [Vec<u8>; 3] {
    let mut one_shot = BytesMut::new();
    tower_gzip::codec::OneShot::new(ContentCoding::Zstd)
        .encode(data, &mut one_shot)
        .unwrap();
    [
        ours(ContentCoding::Zstd, 3, data, 4096, 0),
        ours_with_idles(ContentCoding::Zstd, data, 50_000),
        one_shot.to_vec(),
    ]
}

#[cfg(feature = "zstd")]
#[test]
fn zstd_cli_decodes_our_zstd_and_we_decode_its() {
    if !tools::available(&["zstd"], &[]) {
        return;
    }
    for data in samples() {
        for wire in our_zstd_wires(&data) {
            assert!(run("zstd", &["-dc", "-q"], &wire) == data, "zstd -dc");
        }
        for level in ["-1", "-19"] {
            let wire = run("zstd", &[level, "-c", "-q"], &data);
            assert!(
                our_decode(ContentCoding::Zstd, &wire) == data,
                "zstd {level}"
            );
        }
        // From stdin (size unknown) `--zstd=wlog=27` declares a 128 MiB window: over RFC 9659's
        // 8 MiB, refused before anything is allocated.
        if data.len() > 100_000 {
            let wire = run(
                "zstd",
                &["--ultra", "-20", "--zstd=wlog=27", "-c", "-q"],
                &data,
            );
            let mut decoder =
                Decoder::for_coding(ContentCoding::Zstd, None, &CodecPool::new()).unwrap();
            let err = decoder
                .decode(&wire, &mut BytesMut::new(), 1 << 20)
                .unwrap_err();
            assert_eq!(
                err.kind(),
                tower_gzip::codec::DecodeErrorKind::WindowTooLarge
            );
        }
    }
}

#[cfg(feature = "zstd")]
#[test]
fn python_zstandard_decodes_our_zstd() {
    if !tools::available(&[], &["zstandard"]) {
        return;
    }
    let cases: Vec<(Vec<u8>, Vec<u8>)> = samples()
        .into_iter()
        .flat_map(|data| our_zstd_wires(&data).map(|wire| (data.clone(), wire)))
        .collect();
    let jobs: Vec<_> = cases.iter().map(|(_, wire)| (0, &wire[..])).collect();
    let decoded = python(
        "import zstandard\ndef f(op, data):\n    return zstandard.ZstdDecompressor().decompressobj().decompress(data)",
        &jobs,
    );
    for ((data, _), py) in cases.iter().zip(decoded) {
        // zstandard's decompressobj stops at the first frame; check that prefix (the CLI
        // test decodes whole streams).
        assert!(
            data.starts_with(&py),
            "python zstandard, {} bytes",
            data.len()
        );
    }
}

/// Our br streams, and what each holds: quality 4 flushed every 4 KiB, and quality 11 in
/// one go of at most 20 KB.
#[cfg(feature = "br")]
fn our_br_wires(data: &[u8]) -> [(Vec<u8>, &[u8]); 2] {
    let head = &data[..data.len().min(20_000)];
    [
        (ours(ContentCoding::Br, 4, data, 4096, 0), data),
        (ours(ContentCoding::Br, 11, head, usize::MAX, 0), head),
    ]
}

#[cfg(feature = "br")]
#[test]
fn brotli_cli_decodes_our_br_and_we_decode_its() {
    if !tools::available(&["brotli"], &[]) {
        return;
    }
    for data in samples() {
        for (wire, _) in our_br_wires(&data) {
            let plain = run("brotli", &["-dc"], &wire);
            assert!(
                data.starts_with(&plain) && !plain.is_empty() || data.is_empty(),
                "brotli -dc"
            );
        }
        for quality in ["-q", "-Z"] {
            let args = if quality == "-Z" {
                vec!["-Z", "-c"]
            } else {
                vec!["-q", "5", "-c"]
            };
            let wire = run("brotli", &args, &data);
            assert!(
                our_decode(ContentCoding::Br, &wire) == data,
                "brotli {quality}"
            );
        }
    }
}

#[cfg(feature = "br")]
#[test]
fn python_brotli_decodes_our_br() {
    if !tools::available(&[], &["brotli"]) {
        return;
    }
    let samples = samples();
    let cases: Vec<_> = samples.iter().flat_map(|data| our_br_wires(data)).collect();
    let jobs: Vec<_> = cases.iter().map(|(wire, _)| (0, &wire[..])).collect();
    let decoded = python(
        "import brotli\ndef f(op, data):\n    return brotli.decompress(data)",
        &jobs,
    );
    for ((_, plain), py) in cases.iter().zip(decoded) {
        assert!(py == *plain, "python brotli, {} bytes", plain.len());
    }
}

/// An event stream that pauses (returns `Pending`, waking itself) after every event.
#[cfg(feature = "br")]
struct PausingEvents {
    events: std::collections::VecDeque<bytes::Bytes>,
    paused: bool,
}

#[cfg(feature = "br")]
impl http_body::Body for PausingEvents {
    type Data = bytes::Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<bytes::Bytes>, Self::Error>>> {
        if !std::mem::replace(&mut self.paused, true) {
            cx.waker().wake_by_ref();
            return std::task::Poll::Pending;
        }
        self.paused = false;
        std::task::Poll::Ready(
            self.events
                .pop_front()
                .map(|e| Ok(http_body::Frame::data(e))),
        )
    }
}

/// A br event stream through `CompressionLayer` that gives its state back at every pause
/// and resumes on a fresh encoder primed with its history (the pool has no room to park:
/// `max_idle(0)`), or takes its parked state back: one valid brotli stream for Google's C
/// decoder (the `brotli` CLI and Python's `brotli`), at every quality that gives back (2-11).
#[cfg(feature = "br")]
#[tokio::test]
async fn c_brotli_decodes_our_br_event_streams_resumed_after_pauses() {
    if !tools::available(&["brotli"], &["brotli"]) {
        return;
    }
    use http_body_util::BodyExt;
    use tower::{Layer, ServiceExt};
    let all_events: Vec<bytes::Bytes> = (0..300)
        .map(|i| {
            bytes::Bytes::from(format!(
                "event: tick\ndata: {{\"n\":{i},\"user\":\"user-{}\",\"msg\":\"hello hello\"}}\n\n",
                i % 37
            ))
        })
        .collect();
    for max_idle in [0, 8] {
        for quality in 2..=11 {
            // Qualities 10-11 spend tens of milliseconds a flush: fewer events.
            let count = if quality >= 10 { 30 } else { 300 };
            let events = all_events[..count].to_vec();
            let data: Vec<u8> = events.concat();
            // No place to park: pauses count as long, so every event resumes primed.
            let bound = if max_idle == 0 { 0 } else { 1000 };
            let pool = CodecPool::builder()
                .max_idle(max_idle)
                .park_bound(std::time::Duration::from_millis(bound))
                .build();
            let svc = tower_gzip::compression::CompressionLayer::new()
                .pool(pool.clone())
                .quality(CompressionLevel::Precise(quality))
                .layer(tower::service_fn(move |_req: http::Request<()>| {
                    let body = PausingEvents {
                        events: events.clone().into(),
                        paused: false,
                    };
                    let response = http::Response::builder()
                        .header("content-type", "text/event-stream")
                        .body(body)
                        .unwrap();
                    async move { Ok::<_, std::convert::Infallible>(response) }
                }));
            let request = http::Request::builder()
                .header("accept-encoding", "br")
                .body(())
                .unwrap();
            let response = svc.oneshot(request).await.unwrap();
            assert_eq!(response.headers()["content-encoding"], "br");
            let wire = response.into_body().collect().await.unwrap().to_bytes();
            let case = format!("quality {quality}, max_idle {max_idle}");
            // Without room to park, every resume drew a fresh encoder primed with history;
            // with room, only the first (whose pause length was unknown) did.
            let primed: u64 = pool.stats().kinds().map(|(_, k)| k.primed_bytes).sum();
            let one_event = data.len() as u64 / count as u64 + 2;
            if max_idle == 0 {
                assert!(
                    primed > count as u64 / 3 * one_event,
                    "{case}: primed {primed}"
                );
            } else {
                assert!(primed <= one_event, "{case}: primed {primed}");
            }
            assert!(run("brotli", &["-dc"], &wire) == data, "brotli -dc: {case}");
            let py = python(
                "import brotli\ndef f(op, data):\n    return brotli.decompress(data)",
                &[(0, &wire)],
            );
            assert!(py[0] == data, "python brotli: {case}");
            assert!(our_decode(ContentCoding::Br, &wire) == data, "ours: {case}");
        }
    }
}
