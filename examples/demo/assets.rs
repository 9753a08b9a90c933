//! `/assets/app-v1.js` and `/assets/app-v2.js`: two versions of one script. v1 is
//! `app.js`; v2 is v1 with a small edit (a release: version bump, a larger page, one more
//! message, a capped back-off), as a deploy would ship it. Behind `UseAsDictionaryLayer`
//! (match `/assets/app-v*.js`), a browser that has v1 gets v2 as a `dcz`/`dcb` delta.

use std::sync::OnceLock;

use std::convert::Infallible;

use axum::body::{Body, Bytes};
use axum::http::header;
use axum::response::IntoResponse;

pub const APP_V1: &str = include_str!("app.js");

/// The edits from v1 to v2: each `from` occurs once in v1.
const V2_EDITS: &[(&str, &str)] = &[
    ("var APP_VERSION = '1.4.0';", "var APP_VERSION = '1.5.0';"),
    ("var PAGE_SIZE = 25;", "var PAGE_SIZE = 50;"),
    (
        "var RETRY_BASE_MS = 250;",
        "var RETRY_BASE_MS = 250;\n  var RETRY_MAX_MS = 4000;",
    ),
    (
        "var base = RETRY_BASE_MS * Math.pow(2, attempt);",
        "var base = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * Math.pow(2, attempt));",
    ),
    (
        "      'toast.saved': 'Saved.',\n",
        "      'toast.saved': 'Saved.',\n      'toast.undo': 'Undo',\n",
    ),
    (
        "      store.dispatch({ type: 'load/done', items: items, total: 100000 });",
        "      store.dispatch({ type: 'load/done', items: items, total: 1000000000 });",
    ),
];

pub fn app_v2() -> &'static str {
    static V2: OnceLock<String> = OnceLock::new();
    V2.get_or_init(|| {
        V2_EDITS.iter().fold(APP_V1.to_owned(), |text, (from, to)| {
            assert_eq!(text.matches(from).count(), 1, "v2 edit {from:?}");
            text.replacen(from, to, 1)
        })
    })
}

const JS: [(header::HeaderName, &str); 1] =
    [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")];

/// The script as a one-chunk stream body. Workaround: `UseAsDictionaryLayer` keeps a body
/// when it has polled it to its end (`None`), but hyper (and our compression layer) stop
/// polling a body whose `is_end_stream()` turns true after its last data frame, as a
/// full body's does; a stream body reports its end only by `None`, so it is kept.
fn script(text: &'static str) -> impl IntoResponse {
    let chunk =
        futures_util::stream::iter([Ok::<_, Infallible>(Bytes::from_static(text.as_bytes()))]);
    (JS, Body::from_stream(chunk))
}

/// `GET /assets/app-v1.js`.
pub async fn app_v1_js() -> impl IntoResponse {
    script(APP_V1)
}

/// `GET /assets/app-v2.js`.
pub async fn app_v2_js() -> impl IntoResponse {
    script(app_v2())
}
