//! A strict reader of the Prometheus text exposition format (version 0.0.4), for tests that
//! check what a `/metrics` endpoint or a recorder renders: every line must parse, names and
//! labels must be well formed, a family's samples must be together and after its `TYPE`,
//! no sample may repeat, counters must not be negative, and histograms must have cumulative
//! buckets ending in `+Inf` that agree with their `_count`.

use std::collections::{BTreeMap, HashSet};

/// A metric family's type, from its `# TYPE` line (`untyped` without one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
    Summary,
    Untyped,
}

/// One sample line.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

/// A metric family: its type, help text and samples, in the order they came.
#[derive(Clone, Debug)]
pub struct Family {
    pub kind: Kind,
    pub help: Option<String>,
    pub samples: Vec<Sample>,
}

/// A parsed exposition, families by name.
#[derive(Clone, Debug, Default)]
pub struct Exposition {
    pub families: BTreeMap<String, Family>,
}

impl Exposition {
    /// The value of the sample `name` whose labels include `labels`, if exactly one has them.
    pub fn value(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let family = self.families.get(family_of(name, &self.families)?)?;
        let mut found = family.samples.iter().filter(|s| {
            s.name == name
                && labels
                    .iter()
                    .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        });
        let first = found.next()?;
        assert!(found.next().is_none(), "{name} {labels:?}: several samples");
        Some(first.value)
    }

    /// Like [`value`](Self::value), 0 when there is no such sample.
    pub fn value_or_zero(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.value(name, labels).unwrap_or(0.0)
    }

    /// The family's type, if it is there.
    pub fn kind(&self, family: &str) -> Option<Kind> {
        self.families.get(family).map(|f| f.kind)
    }
}

/// The family a sample name belongs to: itself, or without a histogram's or summary's
/// suffix.
fn family_of<'a>(name: &'a str, families: &BTreeMap<String, Family>) -> Option<&'a str> {
    if families.contains_key(name) {
        return Some(name);
    }
    ["_bucket", "_sum", "_count"]
        .iter()
        .filter_map(|suffix| name.strip_suffix(suffix))
        .find(|base| {
            families
                .get(*base)
                .is_some_and(|f| matches!(f.kind, Kind::Histogram | Kind::Summary))
        })
}

/// Parses `text`, or says which line is wrong and why.
pub fn parse(text: &str) -> Result<Exposition, String> {
    let mut parser = Parser::default();
    for (i, line) in text.split('\n').enumerate() {
        parser
            .line(line)
            .map_err(|why| format!("line {}: {why}: {line:?}", i + 1))?;
    }
    parser.finish()
}

#[derive(Default)]
struct Parser {
    out: Exposition,
    /// The family whose samples are being read; others are closed once another starts.
    current: Option<String>,
    closed: HashSet<String>,
    seen: HashSet<(String, Vec<(String, String)>)>,
}

impl Parser {
    fn line(&mut self, line: &str) -> Result<(), String> {
        if line.is_empty() {
            return Ok(());
        }
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').unwrap_or((rest, ""));
            let family = self.open(name, None)?;
            if family.help.replace(unescape(help, false)?).is_some() {
                return Err("a second HELP".into());
            }
            return Ok(());
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').ok_or("TYPE without a type")?;
            let kind = match kind {
                "counter" => Kind::Counter,
                "gauge" => Kind::Gauge,
                "histogram" => Kind::Histogram,
                "summary" => Kind::Summary,
                "untyped" => Kind::Untyped,
                other => return Err(format!("unknown type {other:?}")),
            };
            let family = self.open(name, Some(kind))?;
            if !family.samples.is_empty() {
                return Err("TYPE after the family's samples".into());
            }
            return Ok(());
        }
        if line.starts_with('#') {
            return Ok(());
        }
        self.sample(line)
    }

    /// The family `name`, made current; `kind` sets its type (once).
    fn open(&mut self, name: &str, kind: Option<Kind>) -> Result<&mut Family, String> {
        check_name(name, true)?;
        self.switch_to(name)?;
        let family = self
            .out
            .families
            .entry(name.to_owned())
            .or_insert_with(|| Family {
                kind: Kind::Untyped,
                help: None,
                samples: Vec::new(),
            });
        if let Some(kind) = kind {
            if family.kind != Kind::Untyped {
                return Err("a second TYPE".into());
            }
            family.kind = kind;
        }
        Ok(family)
    }

    fn switch_to(&mut self, name: &str) -> Result<(), String> {
        if self.current.as_deref() == Some(name) {
            return Ok(());
        }
        if self.closed.contains(name) {
            return Err(format!("family {name} is not together"));
        }
        if let Some(previous) = self.current.replace(name.to_owned()) {
            self.closed.insert(previous);
        }
        Ok(())
    }

    fn sample(&mut self, line: &str) -> Result<(), String> {
        let (name, labels, rest) = split_sample(line)?;
        let family = family_of(&name, &self.out.families)
            .unwrap_or(&name)
            .to_owned();
        self.open(&family, None)?;
        let mut fields = rest.split(' ');
        let value = parse_value(fields.next().ok_or("no value")?)?;
        if let Some(timestamp) = fields.next() {
            timestamp
                .parse::<i64>()
                .map_err(|_| format!("bad timestamp {timestamp:?}"))?;
        }
        if fields.next().is_some() {
            return Err("more than a value and a timestamp".into());
        }
        let key = (name.clone(), labels.clone().into_iter().collect());
        if !self.seen.insert(key) {
            return Err("a repeated sample".into());
        }
        let family = self.out.families.get_mut(&family).expect("opened");
        if family.kind == Kind::Counter && (value.is_nan() || value < 0.0) {
            return Err("a counter below zero".into());
        }
        family.samples.push(Sample {
            name,
            labels,
            value,
        });
        Ok(())
    }

    fn finish(self) -> Result<Exposition, String> {
        for (name, family) in &self.out.families {
            match family.kind {
                Kind::Histogram => check_histogram(name, family)?,
                Kind::Summary => check_summary(name, family)?,
                _ => {
                    if let Some(s) = family.samples.iter().find(|s| s.name != *name) {
                        return Err(format!("{name}: a sample named {}", s.name));
                    }
                }
            }
        }
        Ok(self.out)
    }
}

/// `name{labels} rest`: the name, the labels and what follows them.
fn split_sample(line: &str) -> Result<(String, BTreeMap<String, String>, &str), String> {
    let end = line.find(['{', ' ']).ok_or("no value")?;
    let name = &line[..end];
    check_name(name, true)?;
    let (labels, rest) = match line[end..].strip_prefix('{') {
        Some(inside) => parse_labels(inside)?,
        None => (BTreeMap::new(), &line[end..]),
    };
    let rest = rest.strip_prefix(' ').ok_or("no space before the value")?;
    Ok((name.to_owned(), labels, rest))
}

/// The labels up to the closing brace, and the rest of the line.
fn parse_labels(mut s: &str) -> Result<(BTreeMap<String, String>, &str), String> {
    let mut labels = BTreeMap::new();
    loop {
        if let Some(rest) = s.strip_prefix('}') {
            return Ok((labels, rest));
        }
        let (name, rest) = s.split_once("=\"").ok_or("a label without =\"")?;
        check_name(name, false)?;
        let (value, rest) = quoted(rest)?;
        if labels.insert(name.to_owned(), value).is_some() {
            return Err(format!("label {name} twice"));
        }
        s = match rest.strip_prefix(',') {
            Some(rest) => rest,
            None if rest.starts_with('}') => rest,
            None => return Err("labels not separated by commas".into()),
        };
    }
}

/// A label value up to its closing quote (escapes `\\`, `\"`, `\n`), and the rest.
fn quoted(s: &str) -> Result<(String, &str), String> {
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match (escaped, c) {
            (false, '\\') => escaped = true,
            (false, '"') => return Ok((unescape(&s[..i], true)?, &s[i + 1..])),
            (false, '\n') => return Err("a newline in a label value".into()),
            _ => escaped = false,
        }
    }
    Err("an unterminated label value".into())
}

fn unescape(s: &str, quotes: bool) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some('n') => out.push('\n'),
            Some('"') if quotes => out.push('"'),
            other => return Err(format!("bad escape \\{other:?}")),
        }
    }
    Ok(out)
}

/// Metric names `[a-zA-Z_:][a-zA-Z0-9_:]*`; label names the same without colons.
fn check_name(name: &str, metric: bool) -> Result<(), String> {
    let ok_first = |c: char| c.is_ascii_alphabetic() || c == '_' || (metric && c == ':');
    let ok = |c: char| ok_first(c) || c.is_ascii_digit();
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if ok_first(c) && chars.all(ok) => Ok(()),
        _ => Err(format!("bad name {name:?}")),
    }
}

fn parse_value(s: &str) -> Result<f64, String> {
    match s {
        "+Inf" | "Inf" => Ok(f64::INFINITY),
        "-Inf" => Ok(f64::NEG_INFINITY),
        "NaN" => Ok(f64::NAN),
        _ if s.chars().all(|c| c.is_ascii_digit() || "+-.eE".contains(c)) => {
            s.parse().map_err(|_| format!("bad value {s:?}"))
        }
        _ => Err(format!("bad value {s:?}")),
    }
}

/// The labels of a sample without `drop` (the `le` or `quantile` label).
fn series(sample: &Sample, drop: &str) -> Vec<(String, String)> {
    let labels = sample.labels.iter().filter(|(k, _)| *k != drop);
    labels.map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// Per series: buckets cumulative in `le` order, a `+Inf` bucket equal to `_count`, a
/// `_sum`.
fn check_histogram(name: &str, family: &Family) -> Result<(), String> {
    type Series = Vec<(String, String)>;
    let mut buckets: BTreeMap<Series, Vec<(f64, f64)>> = BTreeMap::new();
    let (mut sums, mut counts) = (BTreeMap::new(), BTreeMap::new());
    for s in &family.samples {
        let suffix = s.name.strip_prefix(name).unwrap_or("");
        match suffix {
            "_bucket" => {
                let le = s
                    .labels
                    .get("le")
                    .ok_or(format!("{name}: a bucket without le"))?;
                buckets
                    .entry(series(s, "le"))
                    .or_default()
                    .push((parse_value(le)?, s.value));
            }
            "_sum" => {
                sums.insert(series(s, ""), s.value);
            }
            "_count" => {
                counts.insert(series(s, ""), s.value);
            }
            _ => return Err(format!("{name}: a sample named {}", s.name)),
        }
    }
    for (labels, mut bs) in buckets {
        bs.sort_by(|a, b| a.0.total_cmp(&b.0));
        if bs.windows(2).any(|w| w[1].1 < w[0].1) {
            return Err(format!("{name}{labels:?}: buckets not cumulative"));
        }
        let last = bs.last().expect("one bucket at least");
        if last.0 != f64::INFINITY {
            return Err(format!("{name}{labels:?}: no +Inf bucket"));
        }
        if counts.get(&labels) != Some(&last.1) || !sums.contains_key(&labels) {
            return Err(format!(
                "{name}{labels:?}: _count or _sum disagrees or is missing"
            ));
        }
    }
    Ok(())
}

/// Per series: quantiles between 0 and 1, a `_sum` and a `_count`.
fn check_summary(name: &str, family: &Family) -> Result<(), String> {
    for s in &family.samples {
        if s.name == name {
            let q = s
                .labels
                .get("quantile")
                .ok_or(format!("{name}: no quantile"))?;
            let q = parse_value(q)?;
            if !(0.0..=1.0).contains(&q) {
                return Err(format!("{name}: quantile {q} outside 0..=1"));
            }
        } else if s.name != format!("{name}_sum") && s.name != format!("{name}_count") {
            return Err(format!("{name}: a sample named {}", s.name));
        }
    }
    Ok(())
}
