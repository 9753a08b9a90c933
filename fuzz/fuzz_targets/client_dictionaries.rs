//! The client side of RFC 9842 (Compression Dictionary Transport) against a hostile server:
//! up to four exchanges through one `DecompressionLayer::new().dictionaries(store)` over a
//! mock server, each response's `Use-As-Dictionary`, freshness headers, status,
//! `Content-Encoding` and body chosen by the input. The mock server reads the request's
//! `Available-Dictionary` and, as a real server would, can answer with a valid `dcz` / `dcb`
//! body made with the dictionary the client offered (or a damaged one, or one made with
//! another dictionary).
//!
//! Checked: no panic, no hang; every body error is a `DecodeError` or a `LengthLimitError`;
//! a valid body with its canned `Content-Encoding` decodes to exactly what was encoded; a
//! dictionary coding without the matching offered dictionary fails with
//! `DictionaryMismatch`; a strict prefix of a dictionary-coded body fails; a response left
//! encoded (its `Content-Encoding` kept) passes through byte for byte and is never learned;
//! what the store learns is exactly a body the client delivered; a response that must be
//! learned (canned valid metadata and freshness, `GET`, `2xx`) is; a fresh learned `match="/*"`
//! dictionary is offered on the next request of its origin; the store stays within its
//! builder's limits.
//!
//! Input layout (a reader that yields zeros once the input runs out):
//!
//! ```text
//! store: byte (bit 7 clear: default limits; else the limit choices), byte
//! then up to 4 steps, each:
//!   method, status, target (bits 0-2 path: 0-5 canned, 6-7 string; bits 3-4 origin),
//!   [path string], extras (bits 0-1: none / own Accept-Encoding / Range / own
//!   Available-Dictionary; bits 2-3: Sec-Fetch-Dest), uad (0-4 valid canned, 5-7 refused
//!   canned, 8-9 string, 10 duplicated), [uad string], cache (0-7 canned, 8 string as
//!   Cache-Control, 9 strings as Expires and Date, 10 string as Age), [strings],
//!   mode, coding (bit 7: Content-Encoding from a string; bit 0: level), [string],
//!   chunking, tweak (u16 le), payload length (u16 le, at most 4096), repeat, payload
//! string = length byte, bytes
//! ```
#![no_main]

use std::cell::RefCell;
use std::collections::{HashMap, HashSet, VecDeque};
use std::convert::Infallible;
use std::io::Write;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, Once, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::header::{ACCEPT_ENCODING, AGE, CACHE_CONTROL, CONTENT_ENCODING, DATE, EXPIRES, RANGE};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode, Uri};
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Empty, LengthLimitError};
use libfuzzer_sys::fuzz_target;
use tower::{Layer, Service, ServiceExt, service_fn};
use tower_gzip::codec::{DecodeError, DecodeErrorKind};
use tower_gzip::decompression::DecompressionLayer;
use tower_gzip::dictionary::UseAsDictionary;
use tower_gzip::fuzzing::available_dictionary;

const AVAILABLE_DICTIONARY: &str = "available-dictionary";
const USE_AS_DICTIONARY: &str = "use-as-dictionary";
use tower_gzip::client::ClientDictionaryStore;
use tower_gzip::codec::OneShot;
use tower_gzip::dictionary::Dictionary;
use tower_gzip::{BoxError, CompressionLevel, ContentCoding};
use tower_gzip_fuzz::props::block_on;

/// The `dcz` and `dcb` body headers' magic bytes (RFC 9842 sections 4 and 5).
const DCZ_MAGIC: [u8; 8] = [0x5e, 0x2a, 0x4d, 0x18, 0x20, 0x00, 0x00, 0x00];
const DCB_MAGIC: [u8; 4] = [0xff, 0x44, 0x43, 0x42];

// ---------------------------------------------------------------------------------------
// Input

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        head
    }

    fn string(&mut self) -> &'a [u8] {
        let n = usize::from(self.byte());
        self.take(n)
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

// ---------------------------------------------------------------------------------------
// The store

#[derive(Clone, Copy, Debug)]
struct Limits {
    max_bytes: usize,
    max_entries: usize,
    per_origin: usize,
    /// Effective: capped by `max_bytes`, as the builder does.
    max_entry_bytes: usize,
    max_age: Duration,
}

fn store_for(a: u8, b: u8) -> (ClientDictionaryStore, Limits) {
    if a & 0x80 == 0 {
        let limits = Limits {
            max_bytes: 32 << 20,
            max_entries: 256,
            per_origin: 32,
            max_entry_bytes: 8 << 20,
            max_age: Duration::from_secs(30 * 24 * 3600),
        };
        return (ClientDictionaryStore::new(), limits);
    }
    const BYTES: [usize; 6] = [0, 1, 100, 4096, 1 << 16, 32 << 20];
    const ENTRIES: [usize; 5] = [0, 1, 2, 3, 256];
    const PER_ORIGIN: [usize; 4] = [0, 1, 2, 32];
    const ENTRY: [usize; 5] = [0, 1, 100, 4096, 8 << 20];
    const AGE_SECS: [u64; 4] = [0, 1, 3600, 30 * 24 * 3600];
    let max_bytes = BYTES[usize::from(a & 0x7f) % BYTES.len()];
    let max_entries = ENTRIES[usize::from(a >> 3 & 0x0f) % ENTRIES.len()];
    let per_origin = PER_ORIGIN[usize::from(b & 3)];
    let max_entry_bytes = ENTRY[usize::from(b >> 2 & 7) % ENTRY.len()];
    let max_age = Duration::from_secs(AGE_SECS[usize::from(b >> 5 & 3)]);
    let store = ClientDictionaryStore::builder()
        .max_bytes(max_bytes)
        .max_entries(max_entries)
        .max_entries_per_origin(per_origin)
        .max_entry_bytes(max_entry_bytes)
        .max_age(max_age)
        .build();
    let limits = Limits {
        max_bytes,
        max_entries,
        per_origin,
        max_entry_bytes: max_entry_bytes.min(max_bytes),
        max_age,
    };
    (store, limits)
}

fn check_store(store: &ClientDictionaryStore, limits: &Limits, origins: usize) {
    let (len, bytes) = (store.stats().entries, store.stats().bytes);
    assert!(len <= limits.max_entries, "{len} entries over {limits:?}");
    assert!(bytes <= limits.max_bytes, "{bytes} bytes over {limits:?}");
    assert!(
        len <= limits.per_origin * origins,
        "{len} entries over {limits:?}"
    );
    // Every dictionary has at least one byte and at most `max_entry_bytes`.
    assert!(bytes >= len, "{bytes} bytes for {len} entries");
    assert!(
        bytes <= len.saturating_mul(limits.max_entry_bytes),
        "{bytes} bytes in {len} entries of at most {}",
        limits.max_entry_bytes
    );
}

fn hash_of(bytes: &Bytes) -> Option<[u8; 32]> {
    Dictionary::new(bytes.clone(), UseAsDictionary::new("/*"))
        .ok()
        .map(|d| d.hash())
}

// ---------------------------------------------------------------------------------------
// One exchange, as the input describes it

const ORIGINS: [&str; 3] = [
    "http://fuzz.test",
    "https://fuzz.test",
    "http://fuzz.test:8080",
];
const PATHS: [&str; 6] = [
    "/dict",
    "/api/items?n=5",
    "/assets/app-v2.js",
    "/a/b/c",
    "/",
    "/api/x",
];
const DESTS: [Option<&str>; 4] = [None, Some("script"), Some("document"), Some("")];

/// Canned `Use-As-Dictionary` values: 0-4 are stored (for any canned request URL), 5-7 never.
const UADS: [&str; 8] = [
    r#"match="/*""#,
    r#"match="/api/*", id="api-v1""#,
    r#"match="/assets/app-v*.js", match-dest=("script")"#,
    r#"match="/a/:name/c""#,
    r#"match="/*", match-dest=("document" "")"#,
    r#"match="/api/(\\d+)""#,
    r#"match="https://other.test/*""#,
    r#"match="/*", type=compressed"#,
];
const WILDCARD_UAD: usize = 0;
const FAR_FUTURE: &str = "Thu, 01 Jan 2099 00:00:00 GMT";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Plain,
    Gzip,
    Dcz,
    Dcb,
    /// `Content-Encoding: dcz, gzip`: dcz applied first, then gzip.
    DczGzip,
    /// `Content-Encoding: gzip, dcz`.
    GzipDcz,
    /// dcz with a dictionary the client never saw.
    DczOther,
    DcbOther,
    DczTruncated,
    DcbTruncated,
    DczFlipped,
    DcbFlipped,
    /// The dcz header with the offered hash, then the payload as raw bytes.
    DczGarbage,
    DcbGarbage,
    /// Two zstd frames after one dcz header: the payload, then it reversed.
    DczTwoFrames,
    Raw,
}

const MODES: [Mode; 16] = [
    Mode::Plain,
    Mode::Gzip,
    Mode::Dcz,
    Mode::Dcb,
    Mode::DczGzip,
    Mode::GzipDcz,
    Mode::DczOther,
    Mode::DcbOther,
    Mode::DczTruncated,
    Mode::DcbTruncated,
    Mode::DczFlipped,
    Mode::DcbFlipped,
    Mode::DczGarbage,
    Mode::DcbGarbage,
    Mode::DczTwoFrames,
    Mode::Raw,
];

impl Mode {
    /// The `Content-Encoding` the body was made with.
    fn coding(self) -> Option<&'static str> {
        use Mode::*;
        match self {
            Plain | Raw => None,
            Gzip => Some("gzip"),
            Dcz | DczOther | DczTruncated | DczFlipped | DczGarbage | DczTwoFrames => Some("dcz"),
            Dcb | DcbOther | DcbTruncated | DcbFlipped | DcbGarbage => Some("dcb"),
            DczGzip => Some("dcz, gzip"),
            GzipDcz => Some("gzip, dcz"),
        }
    }
}

/// What the client must make of a response.
#[derive(Debug)]
enum Expect {
    /// Anything but a panic or an untyped error.
    Anything,
    /// Exactly these bytes.
    Bytes(Bytes),
    /// If it decodes, exactly these bytes.
    IfOk(Bytes),
    /// An error of kind `DictionaryMismatch`.
    Mismatch,
    /// Some (typed) error.
    Fail,
}

struct Plan {
    status: StatusCode,
    headers: HeaderMap,
    mode: Mode,
    /// `Content-Encoding` from the input rather than the mode's.
    coding: Option<HeaderValue>,
    level: CompressionLevel,
    chunking: u8,
    tweak: u16,
    payload: Bytes,
    /// The request carries its own `Available-Dictionary` (the client offers nothing).
    own_available: bool,
}

/// What the server did with one request.
struct Served {
    /// The dictionary the client offered (by hash).
    offered: Option<[u8; 32]>,
    wire: Bytes,
    /// The `Content-Encoding` sent.
    coding: Option<HeaderValue>,
    expect: Expect,
}

fn other_dictionary() -> &'static Dictionary {
    static OTHER: OnceLock<Dictionary> = OnceLock::new();
    OTHER.get_or_init(|| {
        Dictionary::new(
            &b"a dictionary this client never learned: {\"id\":0,\"name\":\"\"}"[..],
            UseAsDictionary::new("/*"),
        )
        .unwrap()
    })
}

fn gzip(data: &[u8]) -> Bytes {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(data).unwrap();
    encoder.finish().unwrap().into()
}

fn dcz(dictionary: &Dictionary, level: CompressionLevel, data: &[u8]) -> Bytes {
    let mut out = BytesMut::new();
    OneShot::new(ContentCoding::Dcz)
        .dictionary(dictionary)
        .level(level)
        .encode(data, &mut out)
        .expect("dcz");
    out.freeze()
}

/// `None` where the `brotli` crate's encoder fails: with a custom dictionary it panics on
/// some inputs (9.1.1, `StoreCommandExtra`), which `encode_dcb` catches and turns into an
/// error (see `contain_known_panics`).
#[cfg(feature = "br")]
fn dcb(dictionary: &Dictionary, level: CompressionLevel, data: &[u8]) -> Option<Bytes> {
    let mut out = BytesMut::new();
    OneShot::new(ContentCoding::Dcb)
        .dictionary(dictionary)
        .level(level)
        .encode(data, &mut out)
        .ok()?;
    Some(out.freeze())
}

/// Without the br codec, `dcb` modes send `dcz` bodies (and name `dcz`).
#[cfg(not(feature = "br"))]
fn dcb(dictionary: &Dictionary, level: CompressionLevel, data: &[u8]) -> Option<Bytes> {
    Some(dcz(dictionary, level, data))
}

/// Panics that the library catches (`catch_unwind`) around known defects of its
/// dependencies: the `brotli` crate's dictionary encoder (`encode_dcb`, used here by the
/// mock server) and the `urlpattern` crate's parser (`match` patterns). libFuzzer's panic
/// hook aborts on every panic, caught or not; this hook lets those two through to the
/// library's `catch_unwind` (reporting each location once) and hands every other panic to
/// libFuzzer's hook. One that is not caught after all still fails the run: libfuzzer-sys
/// aborts when a panic unwinds out of the target.
fn contain_known_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let fuzzer_hook = std::panic::take_hook();
        let seen = Mutex::new(HashSet::new());
        std::panic::set_hook(Box::new(move |info| {
            let location = info.location().map(|l| (l.file().to_owned(), l.line()));
            let known = location.as_ref().is_some_and(|(file, _)| {
                file.contains("/urlpattern-")
                    || (file.contains("/brotli-") && file.contains("/src/enc/"))
            });
            if !known {
                return fuzzer_hook(info);
            }
            CONTAINED.fetch_add(1, Ordering::Relaxed);
            if seen
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(location)
            {
                eprintln!("contained panic (caught by the library): {info}");
            }
        }));
    });
}

/// Panics let through to the library's `catch_unwind` by `contain_known_panics`.
static CONTAINED: AtomicUsize = AtomicUsize::new(0);

const DCB_CODING: &str = if cfg!(feature = "br") { "dcb" } else { "dcz" };

/// A strict, non-empty prefix of `wire`.
fn truncate(wire: Bytes, tweak: u16) -> Bytes {
    let cut = 1 + usize::from(tweak) % (wire.len() - 1).max(1);
    wire.slice(..cut.min(wire.len() - 1).max(1))
}

/// Answers as a server that knows every body it delivered: it reads which dictionary the
/// client offered and encodes with it.
fn serve(plan: &Plan, req: &Request<Empty<Bytes>>, known: &HashMap<[u8; 32], Bytes>) -> Served {
    let available = req.headers().get(AVAILABLE_DICTIONARY);
    let offered = if plan.own_available {
        None
    } else {
        available.map(|v| {
            available_dictionary(req.headers())
                .unwrap_or_else(|| panic!("the client sent a malformed Available-Dictionary {v:?}"))
        })
    };
    let dictionary = match offered {
        Some(hash) => {
            let bytes = known.get(&hash).unwrap_or_else(|| {
                panic!("the client offered {hash:02x?}, which is no body it delivered")
            });
            Dictionary::new(bytes.clone(), UseAsDictionary::new("/*")).unwrap()
        }
        None => other_dictionary().clone(),
    };
    let (level, payload) = (plan.level, &plan.payload);
    let mode = if cfg!(feature = "br") {
        plan.mode
    } else {
        match plan.mode {
            Mode::Dcb => Mode::Dcz,
            Mode::DcbOther => Mode::DczOther,
            Mode::DcbTruncated => Mode::DczTruncated,
            Mode::DcbFlipped => Mode::DczFlipped,
            Mode::DcbGarbage => Mode::DczGarbage,
            other => other,
        }
    };
    // The dictionary the body names, when it names one.
    let mut named = Some(dictionary.hash());
    let mut flipped_at = None;
    let second: Bytes = payload.iter().rev().copied().collect::<Vec<u8>>().into();
    // Where the dcb encoder fails, the body is the dcb header and the payload as it is.
    let mut failed = false;
    let mut unencoded = || {
        failed = true;
        let mut wire = DCB_MAGIC.to_vec();
        wire.extend_from_slice(&dictionary.hash());
        wire.extend_from_slice(payload);
        Bytes::from(wire)
    };
    let wire = match mode {
        Mode::Plain | Mode::Raw => payload.clone(),
        Mode::Gzip => gzip(payload),
        Mode::Dcz => dcz(&dictionary, level, payload),
        Mode::Dcb => dcb(&dictionary, level, payload).unwrap_or_else(&mut unencoded),
        Mode::DczGzip => gzip(&dcz(&dictionary, level, payload)),
        Mode::GzipDcz => dcz(&dictionary, level, &gzip(payload)),
        Mode::DczOther => {
            named = Some(other_dictionary().hash());
            dcz(other_dictionary(), level, payload)
        }
        Mode::DcbOther => {
            named = Some(other_dictionary().hash());
            dcb(other_dictionary(), level, payload).unwrap_or_else(&mut unencoded)
        }
        Mode::DczTruncated => truncate(dcz(&dictionary, level, payload), plan.tweak),
        Mode::DcbTruncated => match dcb(&dictionary, level, payload) {
            Some(wire) => truncate(wire, plan.tweak),
            None => unencoded(),
        },
        Mode::DczFlipped | Mode::DcbFlipped => {
            let wire = if mode == Mode::DczFlipped {
                dcz(&dictionary, level, payload)
            } else {
                dcb(&dictionary, level, payload).unwrap_or_else(&mut unencoded)
            };
            let mut wire = wire.to_vec();
            let at = usize::from(plan.tweak) % wire.len();
            wire[at] ^= (plan.tweak >> 8) as u8 | 1;
            flipped_at = Some(at);
            wire.into()
        }
        Mode::DczGarbage | Mode::DcbGarbage => {
            let mut wire = if mode == Mode::DczGarbage {
                DCZ_MAGIC.to_vec()
            } else {
                DCB_MAGIC.to_vec()
            };
            wire.extend_from_slice(&dictionary.hash());
            wire.extend_from_slice(payload);
            wire.into()
        }
        Mode::DczTwoFrames => {
            let mut wire = dcz(&dictionary, level, payload).to_vec();
            let next = dcz(&dictionary, level, &second);
            wire.extend_from_slice(&next[40..]);
            wire.into()
        }
    };
    let canned = match mode.coding() {
        Some("dcb") => Some(HeaderValue::from_static(DCB_CODING)),
        other => other.map(HeaderValue::from_static),
    };
    let coding = plan.coding.clone().or(canned);
    let decodable = req.method() != Method::HEAD
        && !(plan.status.is_informational()
            || plan.status == StatusCode::NO_CONTENT
            || plan.status == StatusCode::PARTIAL_CONTENT
            || plan.status == StatusCode::NOT_MODIFIED);
    let expect = if !decodable {
        // Passed through untouched.
        Expect::Bytes(wire.clone())
    } else if plan.coding.is_some() || failed {
        Expect::Anything
    } else {
        // The dictionary the client decodes with is the one it offered; without one, any
        // dictionary coding is refused up front.
        let matches = offered.is_some() && offered == named;
        let both = Bytes::from([&payload[..], &second[..]].concat());
        match mode {
            Mode::Plain | Mode::Raw | Mode::Gzip => Expect::Bytes(payload.clone()),
            _ if offered.is_none() => Expect::Mismatch,
            Mode::Dcz
            | Mode::Dcb
            | Mode::DczGzip
            | Mode::GzipDcz
            | Mode::DczOther
            | Mode::DcbOther => {
                if matches {
                    Expect::Bytes(payload.clone())
                } else {
                    Expect::Mismatch
                }
            }
            Mode::DczTruncated | Mode::DcbTruncated => Expect::Fail,
            Mode::DczFlipped | Mode::DcbFlipped => match flipped_at {
                Some(at) if (4..36).contains(&at) && mode == Mode::DcbFlipped => Expect::Mismatch,
                Some(at) if (8..40).contains(&at) && mode == Mode::DczFlipped => Expect::Mismatch,
                Some(at) if at < 4 || (at < 8 && mode == Mode::DczFlipped) => Expect::Fail,
                _ => Expect::Anything,
            },
            Mode::DczGarbage | Mode::DcbGarbage => Expect::Anything,
            Mode::DczTwoFrames => Expect::IfOk(both),
        }
    };
    Served {
        offered,
        wire,
        coding,
        expect,
    }
}

/// The response body: `wire` in input-derived frames, sometimes an empty frame, sometimes a
/// Pending (with a wake-up) between frames, sometimes trailers.
struct Chunks {
    frames: VecDeque<Bytes>,
    trailers: Option<HeaderMap>,
    pending: bool,
    flip: bool,
}

impl Chunks {
    fn new(wire: &Bytes, seed: u8) -> Self {
        let mut frames = VecDeque::new();
        if seed & 0x10 != 0 {
            frames.push_back(Bytes::new());
        }
        let size = match seed & 0x0f {
            0 => usize::MAX,
            s @ 1..=7 => usize::from(s),
            s => usize::from(s - 7) * 97,
        };
        let mut rest = wire.clone();
        while !rest.is_empty() {
            let n = size.min(rest.len());
            frames.push_back(rest.split_to(n));
        }
        let trailers = (seed & 0x20 != 0).then(|| {
            let mut t = HeaderMap::new();
            t.insert("x-fuzz", HeaderValue::from_static("trailer"));
            t
        });
        Chunks {
            frames,
            trailers,
            pending: seed & 0x40 != 0,
            flip: false,
        }
    }
}

impl Body for Chunks {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.pending {
            self.flip = !self.flip;
            if self.flip {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
        }
        if let Some(data) = self.frames.pop_front() {
            return Poll::Ready(Some(Ok(Frame::data(data))));
        }
        Poll::Ready(self.trailers.take().map(|t| Ok(Frame::trailers(t))))
    }

    fn is_end_stream(&self) -> bool {
        self.frames.is_empty() && self.trailers.is_none()
    }
}

/// `CLIENT_DICTIONARIES_TRACE=1`: one line per exchange on stderr (for replaying a corpus
/// to see which paths it reaches).
fn trace() -> bool {
    static TRACE: OnceLock<bool> = OnceLock::new();
    *TRACE.get_or_init(|| std::env::var_os("CLIENT_DICTIONARIES_TRACE").is_some())
}

/// Every body error is typed.
fn error_kind(err: &BoxError) -> Option<DecodeErrorKind> {
    if let Some(decode) = err.downcast_ref::<DecodeError>() {
        return Some(decode.kind());
    }
    assert!(
        err.downcast_ref::<LengthLimitError>().is_some(),
        "an untyped body error: {err:?}"
    );
    None
}

/// Whether a `Content-Encoding` value names a coding other than `identity`.
fn names_coding(value: &HeaderValue) -> bool {
    value.as_bytes().split(|&b| b == b',').any(|token| {
        let token = token.trim_ascii();
        !token.is_empty() && !token.eq_ignore_ascii_case(b"identity")
    })
}

fn value(bytes: &[u8]) -> Option<HeaderValue> {
    HeaderValue::from_bytes(bytes).ok()
}

fn level(byte: u8) -> CompressionLevel {
    if byte & 1 == 0 {
        CompressionLevel::Fastest
    } else {
        CompressionLevel::Default
    }
}

fuzz_target!(|data: &[u8]| {
    contain_known_panics();
    let mut input = Reader(data);
    let (store, limits) = store_for(input.byte(), input.byte());

    let slot: Rc<RefCell<Option<Plan>>> = Rc::default();
    let served: Rc<RefCell<Option<Served>>> = Rc::default();
    let known: Rc<RefCell<HashMap<[u8; 32], Bytes>>> = Rc::default();
    let server = {
        let (slot, served, known) = (slot.clone(), served.clone(), known.clone());
        service_fn(move |req: Request<Empty<Bytes>>| {
            let plan = slot.borrow_mut().take().expect("one request per plan");
            let answer = serve(&plan, &req, &known.borrow());
            let mut response = Response::new(Chunks::new(&answer.wire, plan.chunking));
            *response.status_mut() = plan.status;
            *response.headers_mut() = plan.headers;
            if let Some(coding) = &answer.coding {
                response
                    .headers_mut()
                    .insert(CONTENT_ENCODING, coding.clone());
            }
            *served.borrow_mut() = Some(answer);
            async move { Ok::<_, Infallible>(response) }
        })
    };
    let mut client = DecompressionLayer::new()
        .dictionaries(store.clone())
        .layer(server);

    // A fresh `match="/*"` dictionary learned on this origin (index), by hash: offered on
    // every later request of the origin while it is in the store.
    let mut wildcard: Option<(usize, [u8; 32])> = None;

    for _ in 0..4 {
        if input.is_empty() {
            break;
        }
        // The request.
        let method = match input.byte() % 8 {
            0..=4 => Method::GET,
            5 => Method::HEAD,
            6 => Method::POST,
            _ => Method::PUT,
        };
        const STATUSES: [u16; 12] = [200, 200, 200, 200, 201, 203, 404, 500, 204, 206, 304, 103];
        let status =
            StatusCode::from_u16(STATUSES[usize::from(input.byte()) % STATUSES.len()]).unwrap();
        let target = input.byte();
        let origin = usize::from(target >> 3 & 3).saturating_sub(1);
        let canned_path = usize::from(target & 7) < PATHS.len();
        let path: Vec<u8> = if canned_path {
            PATHS[usize::from(target & 7)].as_bytes().to_vec()
        } else {
            let raw = input.string();
            // Kept under the origin: a path that does not start one gets a `/`.
            if raw.first().is_some_and(|&b| b == b'/' || b == b'?') {
                raw.to_vec()
            } else {
                [b"/", raw].concat()
            }
        };
        let uri = Uri::try_from(&[ORIGINS[origin].as_bytes(), &path].concat()[..]);
        let extras = input.byte();
        let mut req = Request::new(Empty::<Bytes>::new());
        *req.method_mut() = method.clone();
        let own_available = extras & 3 == 3;
        let ours = extras & 3 == 0;
        match extras & 3 {
            1 => {
                req.headers_mut()
                    .insert(ACCEPT_ENCODING, HeaderValue::from_static("gzip"));
            }
            2 => {
                req.headers_mut()
                    .insert(RANGE, HeaderValue::from_static("bytes=0-"));
            }
            3 => {
                req.headers_mut().insert(
                    AVAILABLE_DICTIONARY,
                    other_dictionary().available_dictionary(),
                );
            }
            _ => {}
        }
        if let Some(dest) = DESTS[usize::from(extras >> 2 & 3)] {
            req.headers_mut()
                .insert("sec-fetch-dest", HeaderValue::from_static(dest));
        }

        // The response headers.
        let mut headers = HeaderMap::new();
        let uad = input.byte() % 11;
        match uad {
            0..=7 => {
                headers.insert(
                    USE_AS_DICTIONARY,
                    HeaderValue::from_static(UADS[usize::from(uad)]),
                );
            }
            8 | 9 => {
                if let Some(v) = value(input.string()) {
                    headers.insert(USE_AS_DICTIONARY, v);
                }
            }
            _ => {
                headers.append(USE_AS_DICTIONARY, HeaderValue::from_static(UADS[0]));
                headers.append(USE_AS_DICTIONARY, HeaderValue::from_static(UADS[0]));
            }
        }
        let cache = input.byte() % 11;
        let mut set = |name: HeaderName, v: Option<HeaderValue>| {
            if let Some(v) = v {
                headers.append(name, v);
            }
        };
        match cache {
            0 => set(CACHE_CONTROL, value(b"max-age=3600")),
            1 => set(CACHE_CONTROL, value(b"public, max-age=86400")),
            2 => set(EXPIRES, value(FAR_FUTURE.as_bytes())),
            3 => set(CACHE_CONTROL, value(b"max-age=0")),
            4 => set(CACHE_CONTROL, value(b"no-store, max-age=3600")),
            5 => {}
            6 => {
                set(CACHE_CONTROL, value(b"max-age=100"));
                set(AGE, value(b"100"));
            }
            7 => {
                set(CACHE_CONTROL, value(b"max-age=3600"));
                set(CACHE_CONTROL, value(b"no-cache"));
            }
            8 => set(CACHE_CONTROL, value(input.string())),
            9 => {
                set(EXPIRES, value(input.string()));
                set(DATE, value(input.string()));
            }
            _ => {
                set(CACHE_CONTROL, value(b"max-age=3600"));
                set(AGE, value(input.string()));
            }
        }
        // Lifetimes of an hour or more, whatever the clock says.
        let long_fresh = matches!(cache, 0..=2);

        // The body.
        let mode = MODES[usize::from(input.byte()) % MODES.len()];
        let coding_byte = input.byte();
        let coding = if coding_byte & 0x80 != 0 {
            // Invalid values are skipped: no `Content-Encoding` at all.
            Some(value(input.string()).unwrap_or(HeaderValue::from_static("")))
        } else {
            None
        };
        let chunking = input.byte();
        let tweak = input.u16();
        let len = usize::from(input.u16() % 4097);
        let repeat = usize::from(input.byte() % 16) + 1;
        let payload: Bytes = input.take(len).repeat(repeat).into();

        let Ok(uri) = uri else {
            continue;
        };
        *req.uri_mut() = uri.clone();
        *slot.borrow_mut() = Some(Plan {
            status,
            headers,
            mode,
            coding,
            level: level(coding_byte),
            chunking,
            tweak,
            payload,
            own_available,
        });

        let before = store.stats();
        // The origin the URI names (a fuzzed path cannot move it, but check).
        let same_origin = uri.host() == Some("fuzz.test")
            && port_of(&uri) == port_of(&ORIGINS[origin].parse().unwrap());
        let expect_offer = ours
            && same_origin
            && wildcard.is_some_and(|(o, hash)| o == origin && store.contains(&hash))
            && url::Url::parse(&uri.to_string()).is_ok();

        let (parts, result) = block_on(async {
            let response = client.ready().await.unwrap().call(req).await.unwrap();
            let (parts, body) = response.into_parts();
            (parts, body.collect().await.map(|c| c.to_bytes()))
        });
        let answer = served.borrow_mut().take().expect("the server answered");

        if expect_offer {
            assert!(
                answer.offered.is_some(),
                "a fresh match=\"/*\" dictionary was not offered on {uri}"
            );
        }

        // Every error is typed; the outcome is what the server's body calls for.
        let kind = result.as_ref().err().map(error_kind);
        match (&answer.expect, &result) {
            (Expect::Anything, _) => {}
            (Expect::Bytes(want), Ok(got)) | (Expect::IfOk(want), Ok(got)) => assert!(
                got == want,
                "{mode:?} decoded to {} bytes, not the {} encoded",
                got.len(),
                want.len()
            ),
            (Expect::IfOk(_), Err(_)) => {}
            (Expect::Bytes(want), Err(err)) => panic!(
                "{mode:?} ({status}, {:?}): a valid body of {} bytes failed: {err:?}",
                answer.coding,
                want.len()
            ),
            (Expect::Mismatch, _) => assert_eq!(
                kind,
                Some(Some(DecodeErrorKind::DictionaryMismatch)),
                "{mode:?} with offered {:?}: {result:?}",
                answer.offered.map(|h| h[0])
            ),
            (Expect::Fail, _) => assert!(result.is_err(), "{mode:?}: a damaged body decoded"),
        }

        let after = store.stats();
        if trace() {
            eprintln!(
                "step {mode:?} {method} {status} coding={:?} offered={} expect={} result={} stored={}",
                answer.coding,
                answer.offered.is_some(),
                match &answer.expect {
                    Expect::Anything => "anything",
                    Expect::Bytes(_) => "bytes",
                    Expect::IfOk(_) => "if-ok",
                    Expect::Mismatch => "mismatch",
                    Expect::Fail => "fail",
                },
                match &result {
                    Ok(body) => format!("ok:{}", body.len()),
                    Err(err) => format!(
                        "err:{:?}",
                        err.downcast_ref::<DecodeError>().map(|e| e.kind())
                    ),
                },
                after.stored > before.stored,
            );
        }

        // A response left encoded passes through byte for byte and is never learned.
        if let Some(coding) = parts.headers.get(CONTENT_ENCODING) {
            if let Ok(got) = &result {
                assert_eq!(got, &answer.wire, "a response left encoded was changed");
            }
            if names_coding(coding) {
                assert_eq!(after.stored, before.stored, "learned a body left encoded");
            }
        }

        // What was learned is exactly a body the client delivered.
        assert!(after.stored <= before.stored + 1);
        if after.stored > before.stored {
            let body = result.as_ref().expect("learned from a body that failed");
            let hash = hash_of(body).expect("learned an empty body");
            assert!(
                store.contains(&hash),
                "the body learned is not the body read"
            );
        }

        // A response that must be learned is.
        let must_learn = method == Method::GET
            && extras & 3 != 2
            && matches!(status.as_u16(), 200 | 201 | 203)
            && usize::from(uad) < 5
            && long_fresh
            && canned_path
            && limits.max_age >= Duration::from_secs(3600)
            && limits.max_entries > 0
            && limits.per_origin > 0
            && matches!(&answer.expect, Expect::Bytes(_))
            && matches!(&result, Ok(body) if !body.is_empty() && body.len() <= limits.max_entry_bytes);
        if must_learn {
            assert_eq!(
                after.stored,
                before.stored + 1,
                "a valid dictionary response was not learned ({:?})",
                UADS[usize::from(uad)]
            );
        }

        // Track the wildcard dictionary for the offer check.
        if after.stored > before.stored {
            let body = result.as_ref().unwrap();
            wildcard = (must_learn && usize::from(uad) == WILDCARD_UAD)
                .then(|| (origin, hash_of(body).unwrap()));
        }
        if let Ok(body) = &result {
            if let Some(hash) = hash_of(body) {
                known.borrow_mut().insert(hash, body.clone());
            }
        }
        check_store(&store, &limits, ORIGINS.len());
    }
});

/// The port a URI names, the scheme's default when it names none.
fn port_of(uri: &Uri) -> u16 {
    uri.port_u16().unwrap_or(match uri.scheme_str() {
        Some("https") => 443,
        _ => 80,
    })
}
