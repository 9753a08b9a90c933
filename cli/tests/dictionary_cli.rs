//! The deploy pipeline's command line (`tower-gzip-dictionary`) as a child process: `build`
//! on corpus samples, `compress` and `decompress` round trips in both codings, and one
//! clear line on stderr with a non-zero exit for every bad input.

use tower_gzip_support::corpus;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::BytesMut;
use tower_gzip::codec::OneShot;
use tower_gzip::dictionary::Dictionary;
use tower_gzip::{CompressionLevel, ContentCoding};

/// Few and small enough for the debug build's trainer and brotli to take seconds.
const SAMPLES: usize = 150;
const MAX_SIZE: &str = "32768";

const DCZ_MAGIC: [u8; 8] = [0x5e, 0x2a, 0x4d, 0x18, 0x20, 0x00, 0x00, 0x00];
const DCB_MAGIC: [u8; 4] = [0xff, 0x44, 0x43, 0x42];

/// The command line, which cargo builds for this test.
fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tower-gzip-dictionary"))
}

/// What one run of the command line did.
#[derive(Debug)]
struct Run {
    success: bool,
    stdout: Vec<u8>,
    stderr: String,
}

fn run(args: &[&str], stdin: &[u8]) -> Run {
    let mut child = Command::new(binary())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start tower-gzip-dictionary");
    // A thread feeds stdin while the output is read: a large body would fill both pipes.
    let mut pipe = child.stdin.take().unwrap();
    let input = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        // The command line may exit before reading (a missing dictionary): a broken pipe is fine.
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    Run {
        success: out.status.success(),
        stdout: out.stdout,
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// Asserts a clean run and returns its stdout.
fn ok(args: &[&str], stdin: &[u8]) -> Vec<u8> {
    let run = run(args, stdin);
    assert!(run.success, "{args:?} failed: {}", run.stderr);
    run.stdout
}

/// Asserts a failure: non-zero exit, nothing on stdout, one line on stderr naming `what`.
fn fails(args: &[&str], stdin: &[u8], what: &str) {
    let run = run(args, stdin);
    assert!(!run.success, "{args:?} succeeded");
    assert!(run.stdout.is_empty(), "{args:?} wrote stdout");
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: not one line: {:?}", run.stderr);
    assert!(
        lines[0].contains(what),
        "{args:?}: {:?} lacks {what:?}",
        lines[0]
    );
}

/// A fresh directory under the system's temp dir, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Scratch {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("tower-gzip-dictionary-cli-{}-{n}", std::process::id());
        let dir = std::env::temp_dir().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    /// `name` inside, as a command-line argument.
    fn path(&self, name: &str) -> String {
        self.0
            .join(name)
            .to_str()
            .expect("a UTF-8 temp dir")
            .to_owned()
    }

    /// The built dictionary and its levels file, as `build` wrote them; returns DICT.
    fn dictionary(&self, built: &Built) -> String {
        let path = self.path("api.dict");
        std::fs::write(&path, &built.bytes).unwrap();
        std::fs::write(format!("{path}.levels"), &built.levels).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One `build` on corpus samples, shared: what it printed and wrote.
struct Built {
    stdout: String,
    bytes: Vec<u8>,
    levels: String,
}

fn built() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = Scratch::new();
        let args = build_args(&dir, &corpus::bodies(SAMPLES, 3));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let stdout = String::from_utf8(ok(&args, b"")).unwrap();
        Built {
            stdout,
            bytes: std::fs::read(dir.path("api.dict")).unwrap(),
            levels: std::fs::read_to_string(dir.path("api.dict.levels")).unwrap(),
        }
    })
}

/// `build --out DIR/api.dict --max-size MAX_SIZE` over `bodies`, one sample file each.
fn build_args(dir: &Scratch, bodies: &[Vec<u8>]) -> Vec<String> {
    let mut args = vec!["build".to_owned(), "--out".to_owned(), dir.path("api.dict")];
    args.extend(["--max-size".to_owned(), MAX_SIZE.to_owned()]);
    for (i, body) in bodies.iter().enumerate() {
        let path = dir.path(&format!("{i}.json"));
        std::fs::write(&path, body).unwrap();
        args.push(path);
    }
    args
}

/// The `chosen:` line's kind, dictionary bytes, dcz level and dcb quality.
fn chosen(built: &Built) -> (String, usize, i32, i32) {
    let last = built.stdout.lines().last().expect("build printed nothing");
    let words: Vec<&str> = last.split_whitespace().collect();
    assert_eq!(words.len(), 10, "{last:?}");
    let number = |word: &str| word.trim_end_matches(',').parse::<i64>().expect(last);
    let (kind, len) = (words[1].to_owned(), number(words[2]) as usize);
    let (dcz, dcb) = (number(words[6]) as i32, number(words[9]) as i32);
    let expected = format!("chosen: {kind} {len} B, dcz level {dcz}, dcb quality {dcb}");
    assert_eq!(last, expected);
    assert!(kind == "trained" || kind == "samples", "{last:?}");
    (kind, len, dcz, dcb)
}

fn dictionary(built: &Built) -> Dictionary {
    Dictionary::new(built.bytes.clone(), None).unwrap()
}

fn hex(hash: &[u8; 32]) -> String {
    hash.iter().map(|b| format!("{b:02x}")).collect()
}

/// Bodies the builder never saw.
fn bodies() -> Vec<Vec<u8>> {
    corpus::bodies(4, 77)
}

/// What the library sends for `body` at `level`: what the command line must write.
fn expected(
    coding: ContentCoding,
    d: &Dictionary,
    level: CompressionLevel,
    body: &[u8],
) -> Vec<u8> {
    let mut out = BytesMut::new();
    let one_shot = OneShot::new(coding).dictionary(d).level(level);
    one_shot.encode(body, &mut out).unwrap();
    out.to_vec()
}

#[test]
fn build_writes_what_it_chose() {
    let built = built();
    let (_, len, dcz, dcb) = chosen(built);
    assert_eq!(built.bytes.len(), len);
    assert!(len <= MAX_SIZE.parse().unwrap());
    assert_eq!(built.levels, format!("dcz={dcz}\ndcb={dcb}\n"));
    // The table: the plain baselines and the chosen dcz and dcb rows.
    let rows: Vec<&str> = built.stdout.lines().collect();
    assert!(
        rows.iter().any(|r| r.starts_with("plain ")),
        "{}",
        built.stdout
    );
    let marked = rows.iter().filter(|r| r.ends_with(" yes"));
    assert_eq!(marked.count(), 2, "{}", built.stdout);
    // The chosen rows in words: ratio, served size, break-even count.
    for (coding, level) in [("dcz", dcz), ("dcb", dcb)] {
        let line = rows
            .iter()
            .find(|r| r.starts_with(&format!("{coding} {level}: ")))
            .unwrap_or_else(|| panic!("no {coding} summary in {}", built.stdout));
        assert!(line.contains("B served, break-even "), "{line}");
    }
}

#[test]
fn compress_and_decompress_round_trip_at_the_chosen_and_given_levels() {
    let built = built();
    let (_, _, dcz, dcb) = chosen(built);
    let dir = Scratch::new();
    let dict = dir.dictionary(built);
    let d = dictionary(built);
    let cases = [
        (ContentCoding::Dcz, "dcz", &DCZ_MAGIC[..], dcz, "7"),
        (ContentCoding::Dcb, "dcb", &DCB_MAGIC[..], dcb, "8"),
    ];
    for (coding, name, magic, saved, given) in cases {
        for body in bodies() {
            let args = ["compress", "--dictionary", &dict, "--coding", name];
            let encoded = ok(&args, &body);
            assert_eq!(&encoded[..magic.len()], magic);
            assert_eq!(encoded[magic.len()..magic.len() + 32], d.hash());
            let level = CompressionLevel::Precise(saved);
            assert_eq!(
                encoded,
                expected(coding, &d, level, &body),
                "{name} {saved}"
            );
            assert_eq!(ok(&["decompress", "--dictionary", &dict], &encoded), body);

            let encoded = ok(&[&args[..], &["--level", given]].concat(), &body);
            let level = CompressionLevel::Precise(given.parse().unwrap());
            assert_eq!(
                encoded,
                expected(coding, &d, level, &body),
                "{name} {given}"
            );
            assert_eq!(ok(&["decompress", "--dictionary", &dict], &encoded), body);
        }
    }
}

#[test]
fn without_a_levels_file_compress_uses_the_defaults_and_says_so() {
    let built = built();
    let dir = Scratch::new();
    let dict = dir.path("bare.dict");
    std::fs::write(&dict, &built.bytes).unwrap();
    let d = dictionary(built);
    let body = &bodies()[0];
    for (coding, name) in [(ContentCoding::Dcz, "dcz"), (ContentCoding::Dcb, "dcb")] {
        let run = run(&["compress", "--dictionary", &dict, "--coding", name], body);
        assert!(run.success, "{}", run.stderr);
        assert!(run.stderr.contains("default"), "{}", run.stderr);
        let default = expected(coding, &d, CompressionLevel::Default, body);
        assert_eq!(run.stdout, default);
    }
}

#[test]
fn a_missing_sample_file_fails() {
    let dir = Scratch::new();
    let (out, missing) = (dir.path("api.dict"), dir.path("missing.json"));
    fails(&["build", "--out", &out, &missing], b"", &missing);
    assert!(!Path::new(&out).exists());
}

#[test]
fn too_few_samples_fail() {
    let dir = Scratch::new();
    let args = build_args(&dir, &corpus::bodies(3, 9));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    fails(&args, b"", "no dictionary from 3 samples");
    assert!(!Path::new(&dir.path("api.dict")).exists());
}

#[test]
fn a_missing_or_empty_dictionary_file_fails() {
    let dir = Scratch::new();
    let missing = dir.path("missing.dict");
    let body = &bodies()[0];
    fails(
        &["compress", "--dictionary", &missing, "--coding", "dcz"],
        body,
        &missing,
    );
    fails(&["decompress", "--dictionary", &missing], body, &missing);
    let empty = dir.path("empty.dict");
    std::fs::write(&empty, b"").unwrap();
    fails(&["decompress", "--dictionary", &empty], body, "empty");
}

#[test]
fn a_body_compressed_with_another_dictionary_fails() {
    let built = built();
    let dir = Scratch::new();
    let dict = dir.dictionary(built);
    let other = dir.path("other.dict");
    std::fs::write(&other, corpus::bodies(20, 5).concat()).unwrap();
    let other_hash = Dictionary::load(&other, None).unwrap().hash();
    let names = format!(
        "names dictionary {}, not {}",
        hex(&other_hash),
        hex(&dictionary(built).hash())
    );
    for coding in ["dcz", "dcb"] {
        let args = ["compress", "--dictionary", &other, "--coding", coding];
        let encoded = ok(&args, &bodies()[1]);
        fails(&["decompress", "--dictionary", &dict], &encoded, &names);
    }
}

#[test]
fn a_truncated_body_fails() {
    let built = built();
    let dir = Scratch::new();
    let dict = dir.dictionary(built);
    for coding in ["dcz", "dcb"] {
        let args = ["compress", "--dictionary", &dict, "--coding", coding];
        let encoded = ok(&args, &bodies()[2]);
        let header = if coding == "dcz" { 40 } else { 36 };
        // Inside the magic, inside the hash, right after the header, inside the stream.
        for cut in [2, 20, header, encoded.len() / 2, encoded.len() - 1] {
            let args = ["decompress", "--dictionary", &dict];
            fails(&args, &encoded[..cut], &format!("truncated {coding} body"));
        }
    }
}

#[test]
fn an_unknown_coding_fails() {
    let built = built();
    let dir = Scratch::new();
    let dict = dir.dictionary(built);
    for coding in ["gzip", "zstd", "DCZ", ""] {
        let args = ["compress", "--dictionary", &dict, "--coding", coding];
        fails(&args, &bodies()[0], &format!("unknown coding `{coding}`"));
    }
}

#[test]
fn a_body_that_is_not_dcz_or_dcb_fails() {
    let built = built();
    let dir = Scratch::new();
    let dict = dir.dictionary(built);
    let body = &bodies()[0];
    let mut zstd = BytesMut::new();
    OneShot::new(ContentCoding::Zstd)
        .encode(body, &mut zstd)
        .unwrap();
    let mut gzip = BytesMut::new();
    OneShot::new(ContentCoding::Gzip)
        .encode(body, &mut gzip)
        .unwrap();
    for input in [&body[..], &zstd[..], &gzip[..]] {
        let args = ["decompress", "--dictionary", &dict];
        fails(&args, input, "not a dcz or dcb body");
    }
    fails(&["decompress", "--dictionary", &dict], b"", "empty");
}

#[test]
fn a_body_over_max_bytes_fails() {
    let built = built();
    let dir = Scratch::new();
    let dict = dir.dictionary(built);
    let body = &bodies()[3];
    let encoded = ok(
        &["compress", "--dictionary", &dict, "--coding", "dcz"],
        body,
    );
    let limit = (body.len() - 1).to_string();
    let args = ["decompress", "--dictionary", &dict, "--max-bytes", &limit];
    fails(&args, &encoded, "over --max-bytes");
    let limit = body.len().to_string();
    let args = ["decompress", "--dictionary", &dict, "--max-bytes", &limit];
    assert_eq!(&ok(&args, &encoded), body);
}

#[test]
fn a_wrong_command_line_fails() {
    let dir = Scratch::new();
    let dict = dir.path("api.dict");
    let cases: [(&[&str], &str); 8] = [
        (&[], "no command"),
        (
            &["build", "--out", &dict, "--responses-per-client", "many"],
            "a number",
        ),
        (&["train"], "unknown command `train`"),
        (&["build", "--out", &dict], "sample files"),
        (&["compress", "--coding", "dcz"], "--dictionary is required"),
        (
            &["decompress", "--dictionary"],
            "--dictionary needs a value",
        ),
        (
            &["decompress", "--dictionary", &dict, "--max-bytes", "lots"],
            "a number",
        ),
        (
            &[
                "compress",
                "--dictionary",
                &dict,
                "--coding",
                "dcz",
                "--level",
                "30",
            ],
            "outside",
        ),
    ];
    for (args, what) in cases {
        fails(args, b"", what);
    }
}
