//! Words, names, free text and timestamps.

use super::rng::Rng;

/// First names, a few beyond ASCII (real user bases have them; they are multi-byte UTF-8).
pub const FIRST: &[&str] = &[
    "Ada", "Alan", "Amara", "Ana", "Arjun", "Aylin", "Ben", "Bjørn", "Carlos", "Chen", "Chloé",
    "Daniel", "Dmitri", "Elena", "Emeka", "Emma", "Fatima", "Felix", "Grace", "Hannah", "Hiro",
    "Ines", "Ivan", "James", "Jana", "Javier", "Jin", "José", "Julia", "Kai", "Kenji", "Laila",
    "Lars", "Leila", "Linus", "Lucas", "Maria", "Mateo", "Mei", "Nadia", "Nia", "Noah", "Olga",
    "Omar", "Priya", "Rafael", "Rosa", "Sam", "Sara", "Sofia", "Tariq", "Tomás", "Wei", "Yara",
    "Yuki", "Zoë", "Łukasz", "Søren",
];

/// Family names.
pub const LAST: &[&str] = &[
    "Adeyemi", "Andersen", "Bauer", "Becker", "Chen", "Costa", "Dubois", "Fischer", "García",
    "Gupta", "Hansen", "Ito", "Jensen", "Kim", "Kowalski", "Kumar", "Lee", "Lopez", "Martin",
    "Meyer", "Moreau", "Müller", "Nakamura", "Nguyen", "Novak", "Okafor", "Olsen", "Park", "Patel",
    "Petrov", "Rossi", "Santos", "Schmidt", "Silva", "Singh", "Smith", "Suzuki", "Tanaka",
    "Torres", "Wang", "Weber", "Wójcik", "Yamamoto", "Zhang",
];

/// Prose words, the common first: [`sentence`] draws the first ones far more often.
pub const WORDS: &[&str] = &[
    "the",
    "the",
    "the",
    "a",
    "a",
    "to",
    "to",
    "of",
    "of",
    "and",
    "and",
    "in",
    "in",
    "is",
    "is",
    "it",
    "it",
    "for",
    "for",
    "on",
    "with",
    "when",
    "this",
    "that",
    "not",
    "be",
    "we",
    "should",
    "after",
    "before",
    "from",
    "but",
    "if",
    "can",
    "are",
    "was",
    "an",
    "as",
    "or",
    "by",
    "at",
    "all",
    "new",
    "which",
    "still",
    "only",
    "also",
    "some",
    "error",
    "request",
    "response",
    "server",
    "client",
    "cache",
    "config",
    "build",
    "test",
    "tests",
    "release",
    "version",
    "update",
    "default",
    "option",
    "value",
    "field",
    "type",
    "file",
    "path",
    "module",
    "crate",
    "package",
    "function",
    "method",
    "call",
    "returns",
    "throws",
    "panic",
    "timeout",
    "retry",
    "connection",
    "header",
    "body",
    "stream",
    "buffer",
    "memory",
    "leak",
    "slow",
    "fast",
    "performance",
    "regression",
    "issue",
    "bug",
    "fix",
    "fixed",
    "fails",
    "failing",
    "works",
    "broken",
    "expected",
    "actual",
    "behavior",
    "output",
    "input",
    "log",
    "logs",
    "trace",
    "warning",
    "deprecated",
    "support",
    "feature",
    "docs",
    "documentation",
    "example",
    "user",
    "users",
    "page",
    "query",
    "token",
    "auth",
    "login",
    "session",
    "cookie",
    "database",
    "index",
    "migration",
    "schema",
    "api",
    "endpoint",
    "json",
    "parse",
    "serialize",
    "encode",
    "decode",
    "compression",
    "upload",
    "download",
    "image",
    "linux",
    "macos",
    "windows",
    "docker",
    "container",
    "deploy",
    "pipeline",
    "ci",
    "branch",
    "commit",
    "merge",
    "review",
    "change",
    "changes",
    "breaking",
    "minor",
    "patch",
    "major",
    "upgrade",
    "dependency",
    "dependencies",
    "lockfile",
    "runtime",
    "async",
    "thread",
    "threads",
    "lock",
    "deadlock",
    "race",
    "condition",
    "flaky",
    "reproduce",
    "steps",
    "environment",
    "node",
    "python",
    "rust",
    "go",
    "java",
    "browser",
    "chrome",
    "firefox",
    "safari",
    "mobile",
    "android",
    "ios",
    "screen",
    "button",
    "click",
    "dark",
    "mode",
    "theme",
    "layout",
    "width",
    "height",
    "size",
    "limit",
    "large",
    "small",
    "empty",
    "null",
    "missing",
    "invalid",
    "unexpected",
    "crash",
    "startup",
    "shutdown",
    "signal",
    "metrics",
    "dashboard",
    "alert",
    "latency",
    "p99",
    "throughput",
    "benchmark",
    "allocation",
    "allocations",
    "pool",
    "worker",
    "queue",
    "job",
];

/// Technical nouns for repository and product names.
pub const TECH: &[&str] = &[
    "api",
    "app",
    "auth",
    "bench",
    "bot",
    "cache",
    "cli",
    "client",
    "config",
    "core",
    "data",
    "db",
    "deploy",
    "docs",
    "engine",
    "events",
    "flow",
    "gateway",
    "graph",
    "http",
    "infra",
    "kit",
    "lab",
    "lib",
    "log",
    "mesh",
    "metrics",
    "mobile",
    "net",
    "notify",
    "parser",
    "pipeline",
    "proxy",
    "queue",
    "router",
    "rpc",
    "runtime",
    "scheduler",
    "schema",
    "sdk",
    "search",
    "server",
    "service",
    "shop",
    "site",
    "store",
    "stream",
    "sync",
    "template",
    "tools",
    "ui",
    "utils",
    "web",
    "worker",
];

/// A sentence of `min..=max` words, capitalised, with a full stop.
pub fn sentence(rng: &mut Rng, min: u64, max: u64) -> String {
    let n = rng.range(min, max);
    let mut out = String::new();
    for i in 0..n {
        let word = WORDS[rng.skewed(WORDS.len())];
        if i == 0 {
            let mut chars = word.chars();
            if let Some(first) = chars.next() {
                out.extend(first.to_uppercase());
                out.push_str(chars.as_str());
            }
        } else {
            out.push(' ');
            out.push_str(word);
            if i + 1 < n && rng.chance(6) {
                out.push(',');
            }
        }
    }
    out.push('.');
    out
}

/// A paragraph of `sentences` sentences.
pub fn paragraph(rng: &mut Rng, sentences: u64) -> String {
    let parts: Vec<String> = (0..sentences).map(|_| sentence(rng, 4, 18)).collect();
    parts.join(" ")
}

/// Free text of very varied length: often a sentence, sometimes a few paragraphs.
pub fn prose(rng: &mut Rng) -> String {
    let paragraphs = match rng.below(10) {
        0..=4 => 1,
        5..=7 => 2,
        _ => rng.range(3, 6),
    };
    let parts: Vec<String> = (0..paragraphs)
        .map(|_| {
            let n = rng.range(1, 5);
            paragraph(rng, n)
        })
        .collect();
    parts.join("\n\n")
}

/// An issue body as GitHub stores one: Markdown from an issue template, CRLF line ends,
/// sometimes a code block or a list; from a line to a few KiB.
pub fn issue_body(rng: &mut Rng) -> String {
    let mut out = String::new();
    let sections: &[&str] = match rng.below(3) {
        0 => &[
            "Describe the bug",
            "To Reproduce",
            "Expected behavior",
            "Environment",
        ],
        1 => &["Summary", "Motivation"],
        _ => &[],
    };
    if sections.is_empty() {
        return prose(rng).replace('\n', "\r\n");
    }
    for title in sections {
        out.push_str(&format!("### {title}\r\n\r\n"));
        match rng.below(4) {
            0 => {
                for step in 1..=rng.range(2, 5) {
                    out.push_str(&format!("{step}. {}\r\n", sentence(rng, 3, 10)));
                }
            }
            1 => {
                out.push_str("```\r\n");
                for _ in 0..rng.range(1, 8) {
                    out.push_str(&code_line(rng));
                    out.push_str("\r\n");
                }
                out.push_str("```\r\n");
            }
            _ => out.push_str(&prose(rng).replace('\n', "\r\n")),
        }
        out.push_str("\r\n\r\n");
    }
    out.truncate(out.trim_end().len());
    out
}

fn code_line(rng: &mut Rng) -> String {
    let a = rng.pick(TECH);
    let b = rng.pick(WORDS);
    match rng.below(4) {
        0 => format!("let {a} = {b}::new({});", rng.below(1000)),
        1 => format!("$ {a} --{b} {}", rng.below(100)),
        2 => format!(
            "Error: {b} failed at {a}.rs:{}:{}",
            rng.below(900),
            rng.below(80)
        ),
        _ => format!("    at {a}.{b} (index.js:{})", rng.below(5000)),
    }
}

/// Seconds since 1970 for a moment between 2019 and the end of 2025.
pub fn moment(rng: &mut Rng) -> u64 {
    rng.range(1_546_300_800, 1_767_225_599)
}

/// An ISO 8601 UTC timestamp, `2024-05-17T08:12:45Z`.
pub fn iso(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The calendar date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// ASCII lower case with spaces and accents folded, for logins, slugs and e-mail addresses.
pub fn slug(text: &str) -> String {
    text.chars()
        .filter_map(|c| match c {
            'a'..='z' | '0'..='9' | '-' => Some(c),
            'A'..='Z' => Some(c.to_ascii_lowercase()),
            ' ' | '_' | '/' => Some('-'),
            'é' | 'ë' => Some('e'),
            'á' => Some('a'),
            'í' => Some('i'),
            'ó' | 'ø' => Some('o'),
            'ü' => Some('u'),
            'ł' | 'Ł' => Some('l'),
            'ś' => Some('s'),
            _ => None,
        })
        .collect()
}

/// Standard base64 (with padding) of `bytes`, as GitHub's node ids are.
pub fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().fold(0u32, |n, &b| n << 8 | u32::from(b)) << (8 * (3 - chunk.len()));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_and_base64() {
        assert_eq!(iso(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso(1_709_210_096), "2024-02-29T12:34:56Z");
        assert_eq!(base64(b"04:User1"), "MDQ6VXNlcjE=");
        assert_eq!(base64(b"ab"), "YWI=");
    }
}
