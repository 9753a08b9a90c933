//! A command line for a deploy pipeline: builds a compression dictionary (RFC 9842) from
//! sample responses, and compresses and decompresses `dcz` and `dcb` bodies with it.
//!
//! ```text
//! tower-gzip-dictionary build --out DICT [--max-size BYTES] [--responses-per-client N] SAMPLE_FILE...
//! tower-gzip-dictionary compress --dictionary DICT --coding dcz|dcb [--level N] <BODY >ENCODED
//! tower-gzip-dictionary decompress --dictionary DICT [--max-bytes N] <ENCODED >BODY
//! ```
//!
//! `build` reads one response body per sample file, runs `DictionaryBuilder` on them
//! (`--max-size`: the largest dictionary to try, default 1 MiB; `--responses-per-client`:
//! how many responses a client is expected to get with it, default 100), prints every
//! candidate and level it tried (its bytes per response against the plain coding, its
//! served size and its break-even count of responses), writes the dictionary to DICT exactly
//! as it is to be served, and ends with the line
//! `chosen: <trained|samples> <bytes> B, dcz level <n>, dcb quality <n>`.
//!
//! DICT holds only the served bytes (its SHA-256 is what clients name), so `build` writes
//! the chosen levels beside it, in `DICT.levels`: one `coding=level` a line, `dcz=4` and
//! `dcb=5`. `compress` uses them unless `--level` is given (dcz 1 to 22, dcb 5 to 11);
//! without that file it uses the coding's default (dcz level 3, dcb quality 5) and says so
//! on stderr.
//!
//! `compress` reads a body on stdin and writes the whole RFC 9842 body on stdout: the
//! coding's magic, the dictionary's SHA-256, then the zstd or brotli stream. `decompress`
//! takes the coding from the body's magic, checks that the body names DICT, and refuses to
//! write more than `--max-bytes` (default 1 GiB).
//!
//! Any failure (a missing or unreadable file, a body naming another dictionary, a truncated
//! or corrupt body, a body that is not `dcz` or `dcb`, an unknown option) prints one line
//! on stderr and exits with 1, or 2 for a wrong command line. Output is written only once
//! it is complete: a failed `decompress` writes nothing on stdout.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::str::FromStr;

use bytes::BytesMut;
use tower_gzip::codec::{DecodeError, DecodeErrorKind, OneShot};
use tower_gzip::dictionary::{
    BuiltDictionary, CandidateReport, Dictionary, DictionaryBuilder, DictionaryError,
    DictionaryKind, peek,
};
use tower_gzip::{CompressionLevel, ContentCoding};

const USAGE: &str = "\
usage:
  dictionary build --out DICT [--max-size BYTES] [--responses-per-client N] SAMPLE_FILE...
  dictionary compress --dictionary DICT --coding dcz|dcb [--level N] <BODY >ENCODED
  dictionary decompress --dictionary DICT [--max-bytes N] <ENCODED >BODY
";

/// `decompress`'s default output limit: a body past it is more likely a bomb than a response.
const MAX_BYTES: usize = 1 << 30;

/// The RFC 9842 magic of each coding (section 4 and 5), to tell a body cut inside its
/// header from one that never had one.
const MAGICS: [(&str, &[u8]); 2] = [
    ("dcz", &[0x5e, 0x2a, 0x4d, 0x18, 0x20, 0x00, 0x00, 0x00]),
    ("dcb", &[0xff, 0x44, 0x43, 0x42]),
];

/// Why the program stops: its exit code and the one line it prints.
struct Failure {
    code: u8,
    message: String,
}

type Result<T> = std::result::Result<T, Failure>;

/// A failure of the input (files, bodies): exit code 1.
fn fail(message: impl Into<String>) -> Failure {
    Failure {
        code: 1,
        message: message.into(),
    }
}

/// A wrong command line: exit code 2.
fn usage(message: impl Into<String>) -> Failure {
    Failure {
        code: 2,
        message: format!("{} (see --help)", message.into()),
    }
}

fn main() -> ExitCode {
    let args: Result<Vec<String>> = std::env::args_os().skip(1).map(utf8).collect();
    match args.and_then(|args| run(&args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => report(failure),
    }
}

fn report(failure: Failure) -> ExitCode {
    // One line whatever the underlying error printed: pipelines grep and log it as one.
    eprintln!(
        "tower-gzip-dictionary: {}",
        failure.message.replace('\n', " ")
    );
    ExitCode::from(failure.code)
}

fn utf8(arg: OsString) -> Result<String> {
    arg.into_string()
        .map_err(|arg| usage(format!("argument {arg:?} is not UTF-8")))
}

fn run(args: &[String]) -> Result<()> {
    let Some((command, rest)) = args.split_first() else {
        return Err(usage("no command: expected build, compress or decompress"));
    };
    match command.as_str() {
        "build" => {
            let known = ["--out", "--max-size", "--responses-per-client"];
            build(&Options::parse(rest, &known, true)?)
        }
        "compress" => {
            let known = ["--dictionary", "--coding", "--level"];
            compress(&Options::parse(rest, &known, false)?)
        }
        "decompress" => {
            let known = ["--dictionary", "--max-bytes"];
            decompress(&Options::parse(rest, &known, false)?)
        }
        "help" | "--help" | "-h" => {
            print!("{USAGE}");
            Ok(())
        }
        other => Err(usage(format!(
            "unknown command `{other}`: expected build, compress or decompress"
        ))),
    }
}

/// A command's options (`--name value` or `--name=value`) and file arguments.
struct Options {
    values: HashMap<&'static str, String>,
    files: Vec<String>,
}

impl Options {
    fn parse(args: &[String], known: &[&'static str], takes_files: bool) -> Result<Options> {
        let mut options = Options {
            values: HashMap::new(),
            files: Vec::new(),
        };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            if arg == "--" {
                options.files.extend(args.by_ref().cloned());
            } else if arg.starts_with("--") {
                let (name, inline) = match arg.split_once('=') {
                    Some((name, value)) => (name, Some(value.to_owned())),
                    None => (arg.as_str(), None),
                };
                let Some(name) = known.iter().copied().find(|k| *k == name) else {
                    return Err(usage(format!("unknown option `{name}`")));
                };
                let value = match inline.or_else(|| args.next().cloned()) {
                    Some(value) => value,
                    None => return Err(usage(format!("{name} needs a value"))),
                };
                if options.values.insert(name, value).is_some() {
                    return Err(usage(format!("{name} is given twice")));
                }
            } else {
                options.files.push(arg.clone());
            }
        }
        match options.files.first() {
            Some(extra) if !takes_files => Err(usage(format!("unexpected argument `{extra}`"))),
            _ => Ok(options),
        }
    }

    fn required(&self, name: &str) -> Result<&str> {
        self.values
            .get(name)
            .map(String::as_str)
            .ok_or_else(|| usage(format!("{name} is required")))
    }

    fn number<T: FromStr>(&self, name: &str) -> Result<Option<T>> {
        let Some(value) = self.values.get(name) else {
            return Ok(None);
        };
        match value.parse() {
            Ok(n) => Ok(Some(n)),
            Err(_) => Err(usage(format!("{name} takes a number, not `{value}`"))),
        }
    }
}

fn build(options: &Options) -> Result<()> {
    let out = PathBuf::from(options.required("--out")?);
    let max_size = options.number::<usize>("--max-size")?;
    let per_client = options.number::<u64>("--responses-per-client")?;
    if options.files.is_empty() {
        return Err(usage("build needs sample files, one response body each"));
    }
    let samples = options
        .files
        .iter()
        .map(|path| std::fs::read(path).map_err(|e| fail(format!("sample {path}: {e}"))))
        .collect::<Result<Vec<Vec<u8>>>>()?;
    let mut builder = DictionaryBuilder::new(&samples);
    if let Some(max) = max_size {
        builder = builder.max_size(max);
    }
    if let Some(n) = per_client {
        builder = builder.responses_per_client(n);
    }
    let built = builder
        .build()
        .map_err(|e| fail(format!("no dictionary from {} samples: {e}", samples.len())))?;
    let Some(quality) = built.dcb_quality else {
        return Err(fail("the builder measured no dcb quality"));
    };
    print_report(samples.len(), &built);
    print_summary(&built);
    write(&out, &built.bytes)?;
    let levels = levels_path(&out);
    write(
        &levels,
        format!("dcz={}\ndcb={quality}\n", built.dcz_level).as_bytes(),
    )?;
    println!("wrote {} and {}", out.display(), levels.display());
    println!(
        "chosen: {} {} B, dcz level {}, dcb quality {quality}",
        kind_name(built.kind),
        built.bytes.len(),
        built.dcz_level
    );
    Ok(())
}

/// Every coding and level the builder tried, as a table.
fn print_report(samples: usize, built: &BuiltDictionary) {
    println!(
        "{samples} samples, {} held out ({} B) to judge the candidates; {} responses per client",
        built.held_out, built.held_out_bytes, built.responses_per_client
    );
    println!(
        "{:<16} {:>8} {:>7} {:<6} {:>5} {:>10} {:>6} {:>10} {:>6} {:>6} {:<6} chosen",
        "kind",
        "dict B",
        "served",
        "coding",
        "level",
        "bytes",
        "ratio",
        "per client",
        "even",
        "cost",
        "budget"
    );
    for row in &built.report {
        print_row(row);
    }
}

/// The chosen rows: ratio per response, served size, break-even count.
fn print_summary(built: &BuiltDictionary) {
    for row in built.report.iter().filter(|r| r.chosen) {
        let even = row
            .break_even
            .map_or("never".to_owned(), |n| format!("{n} responses"));
        let plain = if row.coding == ContentCoding::Dcz {
            "zstd 3".to_owned()
        } else {
            format!("br {}", row.level)
        };
        println!(
            "{} {}: {:.3}x {plain}'s bytes per response, dictionary {} B served, break-even {even}",
            row.coding.as_str(),
            row.level,
            row.ratio,
            row.served_len
        );
    }
}

fn print_row(row: &CandidateReport) {
    let kind = match row.kind {
        None => "plain".to_owned(),
        Some(DictionaryKind::Trained { asked }) => format!("trained {}K", asked >> 10),
        Some(DictionaryKind::Samples { count }) => format!("samples {count}"),
        Some(other) => format!("{other:?}"),
    };
    let even = row.break_even.map_or("-".to_owned(), |n| n.to_string());
    let line = format!(
        "{kind:<16} {:>8} {:>7} {:<6} {:>5} {:>10} {:>5.3}x {:>10.0} {even:>6} {:>5.2}x {:<6} {}",
        row.dictionary_len,
        row.served_len,
        row.coding.as_str(),
        row.level,
        row.bytes,
        row.ratio,
        row.per_client_bytes,
        row.cost,
        if row.within_budget { "within" } else { "over" },
        if row.chosen { "yes" } else { "" }
    );
    println!("{}", line.trim_end());
}

fn kind_name(kind: DictionaryKind) -> &'static str {
    match kind {
        DictionaryKind::Trained { .. } => "trained",
        DictionaryKind::Samples { .. } => "samples",
        _ => "other",
    }
}

/// `DICT.levels`, beside DICT.
fn levels_path(dictionary: &Path) -> PathBuf {
    let mut path = dictionary.as_os_str().to_owned();
    path.push(".levels");
    path.into()
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).map_err(|e| fail(format!("cannot write {}: {e}", path.display())))
}

fn compress(options: &Options) -> Result<()> {
    let path = options.required("--dictionary")?;
    let coding = match options.required("--coding")? {
        "dcz" => ContentCoding::Dcz,
        "dcb" => ContentCoding::Dcb,
        other => {
            return Err(usage(format!(
                "unknown coding `{other}`: expected dcz or dcb"
            )));
        }
    };
    let asked = options.number::<i32>("--level")?;
    if let Some(level) = asked {
        check_level(coding, level).map_err(usage)?;
    }
    let dictionary = load(path)?;
    let level = match asked {
        Some(level) => CompressionLevel::Precise(level),
        None => saved_level(Path::new(path), coding)?,
    };
    let body = read_stdin()?;
    let mut out = BytesMut::with_capacity(body.len() / 4 + 64);
    OneShot::new(coding)
        .dictionary(&dictionary)
        .level(level)
        .encode(&body, &mut out)
        .map_err(|e| fail(e.to_string()))?;
    write_stdout(&out)
}

/// Refuses a level the coding would silently clamp: a pipeline should learn of its typo.
fn check_level(coding: ContentCoding, level: i32) -> std::result::Result<(), String> {
    let (low, high) = match coding {
        ContentCoding::Dcb => (5, 11),
        _ => (1, 22),
    };
    if (low..=high).contains(&level) {
        return Ok(());
    }
    let coding = coding.as_str();
    Err(format!(
        "level {level} is outside {coding}'s {low} to {high}"
    ))
}

/// The level `build` chose for `coding`, from `DICT.levels`; the coding's default when the
/// file is missing (a dictionary made elsewhere).
fn saved_level(dictionary: &Path, coding: ContentCoding) -> Result<CompressionLevel> {
    let path = levels_path(dictionary);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let default = if coding == ContentCoding::Dcz { 3 } else { 5 };
            eprintln!(
                "tower-gzip-dictionary: no {}: {} at its default level {default}",
                path.display(),
                coding.as_str()
            );
            return Ok(CompressionLevel::Default);
        }
        Err(e) => return Err(fail(format!("cannot read {}: {e}", path.display()))),
    };
    let line = text
        .lines()
        .find_map(|line| line.trim().strip_prefix(coding.as_str())?.strip_prefix('='));
    let bad = || {
        fail(format!(
            "{} has no valid {}= line",
            path.display(),
            coding.as_str()
        ))
    };
    let level: i32 = line.and_then(|n| n.trim().parse().ok()).ok_or_else(bad)?;
    check_level(coding, level).map_err(|e| fail(format!("{}: {e}", path.display())))?;
    Ok(CompressionLevel::Precise(level))
}

fn decompress(options: &Options) -> Result<()> {
    let path = options.required("--dictionary")?;
    let max = options.number::<usize>("--max-bytes")?.unwrap_or(MAX_BYTES);
    let dictionary = load(path)?;
    let body = read_stdin()?;
    let Some((coding, hash)) = peek(&body) else {
        return Err(unheaded(&body));
    };
    if hash != dictionary.hash() {
        return Err(fail(format!(
            "this body names dictionary {}, not {} ({path})",
            hex(&hash),
            hex(&dictionary.hash())
        )));
    }
    let out = OneShot::new(coding)
        .dictionary(&dictionary)
        .decode(&body, max)
        .map_err(|e| decode_failure(coding, &e, max))?;
    write_stdout(&out)
}

/// Why a body without a complete RFC 9842 header is refused.
fn unheaded(body: &[u8]) -> Failure {
    if body.is_empty() {
        return fail("stdin is empty: not a dcz or dcb body");
    }
    for (name, magic) in MAGICS {
        let n = body.len().min(magic.len());
        if body[..n] == magic[..n] {
            let header = magic.len() + 32;
            let len = body.len();
            return fail(format!(
                "truncated {name} body: {len} B, shorter than its {header} B header"
            ));
        }
    }
    fail("stdin is not a dcz or dcb body: it starts with no RFC 9842 magic")
}

fn decode_failure(coding: ContentCoding, error: &DecodeError, max: usize) -> Failure {
    let coding = coding.as_str();
    match error.kind() {
        DecodeErrorKind::Truncated => fail(format!(
            "truncated {coding} body: it ends before its compressed stream does"
        )),
        DecodeErrorKind::TooLarge => fail(format!(
            "the decoded body is over --max-bytes ({max} B): raise it if that is expected"
        )),
        _ => fail(format!("corrupt {coding} body: {error}")),
    }
}

fn load(path: &str) -> Result<Dictionary> {
    Dictionary::load(path, None).map_err(|e| match e {
        DictionaryError::Io(e) => fail(format!("cannot read dictionary {path}: {e}")),
        e => fail(format!("dictionary {path}: {e}")),
    })
}

fn hex(hash: &[u8; 32]) -> String {
    hash.iter().map(|b| format!("{b:02x}")).collect()
}

fn read_stdin() -> Result<Vec<u8>> {
    let mut body = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut body)
        .map_err(|e| fail(format!("cannot read stdin: {e}")))?;
    Ok(body)
}

fn write_stdout(bytes: &[u8]) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(|e| fail(format!("cannot write stdout: {e}")))
}
