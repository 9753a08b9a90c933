//! Programs nobody here wrote (gzip, zstd and brotli CLIs, curl, python3 and its modules,
//! Chromium), which the interop tests run when they are installed.
//!
//! A test asks for what it needs before it starts: [`available`] (or [`missing`] when it
//! found a program its own way) returns `false` after printing one `skipped: ...` line to
//! stderr, and the test returns early and passes. So `cargo test` passes on a machine with
//! only a Rust toolchain. With `REQUIRE_INTEROP=1` (as `.ci/run` sets, having installed
//! everything) a missing tool fails the test instead.

use std::process::{Command, Stdio};

/// The environment variable that turns a missing tool from a skip into a failure.
pub const REQUIRE_INTEROP: &str = "REQUIRE_INTEROP";

/// Whether `REQUIRE_INTEROP=1` is set: missing tools fail the tests that need them.
pub fn required() -> bool {
    std::env::var_os(REQUIRE_INTEROP).is_some_and(|v| v == "1")
}

/// Whether `program` can be started (found on PATH and executable). Its exit status does not
/// matter: some builds of some tools reject `--version`.
pub fn found(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Whether `python3 -c "import module"` succeeds.
pub fn python_imports(module: &str) -> bool {
    Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `true` when every program in `programs` can be started and `python3` imports every module
/// in `python_modules` (`python3` itself is then needed too). Otherwise the missing ones go to
/// [`missing`], which skips (`false`) or, under `REQUIRE_INTEROP=1`, fails the test.
pub fn available(programs: &[&str], python_modules: &[&str]) -> bool {
    let mut absent: Vec<String> = programs
        .iter()
        .copied()
        .chain((!python_modules.is_empty()).then_some("python3"))
        .filter(|p| !found(p))
        .map(str::to_owned)
        .collect();
    absent.dedup();
    let has_python = !absent.iter().any(|p| p == "python3");
    if has_python {
        absent.extend(
            python_modules
                .iter()
                .filter(|m| !python_imports(m))
                .map(|m| format!("python3 module `{m}`")),
        );
    }
    if absent.is_empty() {
        return true;
    }
    missing(&absent.join(", "));
    false
}

/// Reports that `what` is not installed: panics under `REQUIRE_INTEROP=1`, otherwise prints
/// one `skipped: <what> not found (<test>)` line to stderr. The caller returns early.
pub fn missing(what: &str) {
    let test = std::thread::current()
        .name()
        .filter(|name| *name != "main")
        .map(|name| format!(" ({name})"))
        .unwrap_or_default();
    if required() {
        panic!(
            "{what} not found, and {REQUIRE_INTEROP}=1 requires every interop tool{test}: \
             install it (.ci/run installs them all) or unset {REQUIRE_INTEROP} to skip"
        );
    }
    eprintln!("skipped: {what} not found{test}");
}
