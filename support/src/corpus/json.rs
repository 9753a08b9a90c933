//! JSON values with their keys in the order written (as APIs emit them; serde_json's `Map`
//! would sort them), printed as serde_json's and most APIs' pretty printers do: two-space
//! indent, `"key": value`, empty arrays and objects as `[]` and `{}`.

/// A JSON value.
#[derive(Clone, Debug)]
pub enum Json {
    Null,
    Bool(bool),
    Int(i64),
    /// A number already written out (`19.99`, `4.3`).
    Num(String),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(&'static str, Json)>),
}

/// A string value.
pub fn s(text: impl Into<String>) -> Json {
    Json::Str(text.into())
}

/// An integer value.
pub fn int(n: impl Into<i64>) -> Json {
    Json::Int(n.into())
}

/// A value or `null`.
pub fn or_null(value: Option<Json>) -> Json {
    value.unwrap_or(Json::Null)
}

/// An amount of cents as a decimal string, `"1234.50"`, as payment APIs send money.
pub fn money(cents: u64) -> Json {
    s(format!("{}.{:02}", cents / 100, cents % 100))
}

impl Json {
    /// The value pretty-printed at nesting `depth` (0 for a whole document).
    pub fn pretty(&self, depth: usize) -> String {
        let mut out = String::new();
        self.write(depth, &mut out);
        out
    }

    fn write(&self, depth: usize, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(n) => out.push_str(&n.to_string()),
            Json::Num(n) => out.push_str(n),
            Json::Str(text) => quote(text, out),
            Json::Arr(items) if items.is_empty() => out.push_str("[]"),
            Json::Obj(fields) if fields.is_empty() => out.push_str("{}"),
            Json::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    separate(i, depth + 1, out);
                    item.write(depth + 1, out);
                }
                close(depth, ']', out);
            }
            Json::Obj(fields) => {
                out.push('{');
                for (i, (key, value)) in fields.iter().enumerate() {
                    separate(i, depth + 1, out);
                    quote(key, out);
                    out.push_str(": ");
                    value.write(depth + 1, out);
                }
                close(depth, '}', out);
            }
        }
    }
}

fn separate(i: usize, depth: usize, out: &mut String) {
    if i > 0 {
        out.push(',');
    }
    out.push('\n');
    indent(depth, out);
}

fn close(depth: usize, bracket: char, out: &mut String) {
    out.push('\n');
    indent(depth, out);
    out.push(bracket);
}

fn indent(depth: usize, out: &mut String) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

/// A JSON string literal: quotes, backslashes and control characters escaped, the rest
/// (non-ASCII included) as UTF-8, as serde_json writes it.
fn quote(text: &str, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}
