//! Headless Chromium and what the tests that drive it share: finding it, loading a page
//! until its autotest has written its result, and reading that result.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::tools;

/// A fresh directory under cargo's per-target temp dir, removed when dropped.
pub(crate) struct TempDir(pub(crate) PathBuf);

impl TempDir {
    pub(crate) fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "real_clients-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// 32-bit FNV-1a, as the demo page's autotest computes it in JavaScript.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in bytes {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    u64::from(h)
}

// ---------------------------------------------------------------------------------------
// curl

/// Chromium: `$CHROMIUM` (which must run), else the first of `chromium`, `chromium-browser`
/// and `google-chrome` whose `--version` runs; `None` when there is none.
pub(crate) fn find_chromium() -> Option<&'static str> {
    static FOUND: OnceLock<Option<String>> = OnceLock::new();
    let runs = |name: &str| {
        Command::new(name)
            .arg("--version")
            .output()
            .is_ok_and(|out| out.status.success())
    };
    FOUND
        .get_or_init(|| {
            if let Ok(path) = std::env::var("CHROMIUM") {
                assert!(
                    runs(&path),
                    "CHROMIUM={path}: `{path} --version` does not run"
                );
                return Some(path);
            }
            ["chromium", "chromium-browser", "google-chrome"]
                .into_iter()
                .find(|name| runs(name))
                .map(str::to_owned)
        })
        .as_deref()
}

/// Whether Chromium is installed; when not, the test is skipped (or fails under
/// `REQUIRE_INTEROP=1`: `apt-get install -y chromium`, or CHROMIUM=/path).
pub(crate) fn have_chromium() -> bool {
    let found = find_chromium().is_some();
    if !found {
        tools::missing("chromium");
    }
    found
}

pub(crate) fn chromium() -> &'static str {
    find_chromium().expect("checked with have_chromium() first")
}

/// Loads `url` in headless Chromium and returns the serialized DOM (`--dump-dom`), which
/// Chromium prints when the page has used `budget_ms` of virtual time. Virtual time stands
/// still while requests are in flight, so real fetches and the SSE stream complete first.
pub(crate) fn dump_dom(url: &str, budget_ms: u32) -> String {
    dump_dom_within(url, budget_ms, Duration::from_secs(90))
}

/// [`dump_dom`], with Chromium killed after `limit` of real time.
pub(crate) fn dump_dom_within(url: &str, budget_ms: u32, limit: Duration) -> String {
    dump_dom_in(&TempDir::new("chromium-profile"), url, budget_ms, limit)
}

/// [`dump_dom_within`], in the browser profile `profile` (kept between runs, so a second
/// run holds the dictionaries the first stored).
pub(crate) fn dump_dom_in(profile: &TempDir, url: &str, budget_ms: u32, limit: Duration) -> String {
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-quic",
            "--disable-extensions",
            "--disable-dev-shm-usage",
        ])
        .arg(format!("--user-data-dir={}", profile.0.display()))
        .arg(format!("--virtual-time-budget={budget_ms}"))
        .args(["--dump-dom", url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (dom, err) = (out.join().unwrap(), err.join().unwrap());
    match status {
        Some(s) if s.success() => dom,
        Some(s) => {
            eprintln!("chromium exited with {s}; stderr:\n{err}");
            dom
        }
        None => {
            eprintln!("chromium did not finish within {limit:?}; stderr:\n{err}");
            dom
        }
    }
}

/// The JSON the page wrote into `<pre id="autotest">`, if it finished.
pub(crate) fn autotest_result(dom: &str) -> Option<Value> {
    let start = dom.find("<pre id=\"autotest\"")?;
    let text = &dom[start..];
    let text = &text[text.find('>')? + 1..];
    let text = &text[..text.find("</pre>")?];
    // A text node's serialization escapes only these.
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&");
    let v: Value = serde_json::from_str(&text).ok()?;
    (v["done"] == true).then_some(v)
}

/// What headless Chromium (`gzip, deflate, br, zstd`) is served: tower-http's order of
/// preference, zstd > br > gzip, over the codings compiled in.
pub(crate) const CHROMIUM_GETS: &str = if cfg!(feature = "zstd") {
    "zstd"
} else if cfg!(feature = "br") {
    "br"
} else {
    "gzip"
};
