//! The command line of a subcommand: one positional base URL and `--name value` options.

use std::collections::BTreeMap;
use std::str::FromStr;

/// A subcommand's arguments.
pub struct Args {
    positional: Vec<String>,
    named: BTreeMap<String, String>,
}

impl Args {
    /// Splits `args` into positionals and `--name value` pairs.
    pub fn parse(args: impl Iterator<Item = String>) -> Result<Args, String> {
        let mut positional = Vec::new();
        let mut named = BTreeMap::new();
        let mut args = args.peekable();
        while let Some(arg) = args.next() {
            match arg.strip_prefix("--") {
                Some(name) => {
                    let value = args.next().ok_or(format!("--{name} needs a value"))?;
                    named.insert(name.to_owned(), value);
                }
                None => positional.push(arg),
            }
        }
        Ok(Args { positional, named })
    }

    /// The option `--name`, or `default`.
    pub fn get<T: FromStr>(&self, name: &str, default: T) -> Result<T, String> {
        match self.named.get(name) {
            Some(v) => v
                .parse()
                .map_err(|_| format!("--{name}: cannot read {v:?}")),
            None => Ok(default),
        }
    }

    /// The option `--name`, which must be given.
    pub fn required<T: FromStr>(&self, name: &str) -> Result<T, String> {
        let v = self
            .named
            .get(name)
            .ok_or(format!("--{name} is required"))?;
        v.parse()
            .map_err(|_| format!("--{name}: cannot read {v:?}"))
    }

    /// The option `--name` within `range`, or `default`.
    pub fn within<T>(
        &self,
        name: &str,
        default: T,
        range: std::ops::RangeInclusive<T>,
    ) -> Result<T, String>
    where
        T: FromStr + PartialOrd + std::fmt::Debug,
    {
        let v = self.get(name, default)?;
        if !range.contains(&v) {
            return Err(format!("--{name} must be in {range:?}, got {v:?}"));
        }
        Ok(v)
    }

    /// The server: `http://127.0.0.1:PORT` as the first positional, or `--port PORT`.
    /// Loopback only.
    pub fn server(&self) -> Result<Server, String> {
        if let Some(base) = self.positional.first() {
            let rest = base
                .strip_prefix("http://")
                .ok_or("the base URL must be http://")?;
            let (host, port) = rest
                .trim_end_matches('/')
                .rsplit_once(':')
                .ok_or("the base URL needs a port")?;
            if !matches!(host, "127.0.0.1" | "localhost") {
                return Err("loopback only (127.0.0.1 or localhost)".into());
            }
            let port = port.parse().map_err(|_| format!("bad port {port:?}"))?;
            return Ok(Server { port });
        }
        Ok(Server {
            port: self.required("port")?,
        })
    }
}

/// The server on loopback.
#[derive(Clone, Copy)]
pub struct Server {
    /// Its port on 127.0.0.1.
    pub port: u16,
}

impl Server {
    /// The socket address.
    pub fn addr(self) -> std::net::SocketAddr {
        ([127, 0, 0, 1], self.port).into()
    }

    /// The `Host` field.
    pub fn host(self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

/// Counts of errors by name, for the JSON summary.
#[derive(Default)]
pub struct Errors(BTreeMap<String, u64>);

impl Errors {
    /// Counts one `what`.
    pub fn add(&mut self, what: impl Into<String>) {
        *self.0.entry(what.into()).or_default() += 1;
    }

    /// The counts as a JSON object.
    pub fn json(&self) -> serde_json::Value {
        serde_json::to_value(&self.0).expect("a map of counts")
    }
}

/// The name of an I/O error's kind (`ConnectionReset`, `UnexpectedEof`, ...).
pub fn kind(e: &std::io::Error) -> String {
    format!("{:?}", e.kind())
}

/// This process's open-file limit (soft), from `/proc/self/limits`.
pub fn nofile_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// `x` rounded to `digits` decimals.
pub fn round(x: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (x * scale).round() / scale
}
