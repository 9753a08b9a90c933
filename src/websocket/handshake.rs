//! The server's side of the opening handshake, as axum's extractor does it: an HTTP/1.1
//! upgrade (RFC 6455 section 4.2) or an HTTP/2 extended CONNECT (RFC 8441 section 4), the
//! subprotocol, the permessage-deflate answer and the OpenIM `compression=gzip` ask; and
//! the typed rejections.

use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, Response, StatusCode, Version, request::Parts};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

/// Why a request is not a WebSocket upgrade. Each maps to a status code in its
/// `IntoResponse` (the axum extractor's rejection) and its `status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WebSocketRejection {
    /// HTTP/1.1 request whose method is not GET (405).
    MethodNotGet,
    /// HTTP/2 request whose method is not CONNECT (405).
    MethodNotConnect,
    /// `Connection` does not list `upgrade` (400).
    InvalidConnectionHeader,
    /// `Upgrade` is not `websocket` (400).
    InvalidUpgradeHeader,
    /// HTTP/2 CONNECT without the `websocket` protocol (400).
    InvalidProtocolPseudoheader,
    /// `Sec-WebSocket-Version` is not 13 (400).
    InvalidWebSocketVersionHeader,
    /// No `Sec-WebSocket-Key` (400).
    WebSocketKeyHeaderMissing,
    /// The connection cannot be upgraded (hyper did not leave an upgrade handle: 426).
    ConnectionNotUpgradable,
}

impl WebSocketRejection {
    /// The status the rejection answers with.
    pub fn status(self) -> StatusCode {
        match self {
            Self::MethodNotGet | Self::MethodNotConnect => StatusCode::METHOD_NOT_ALLOWED,
            Self::ConnectionNotUpgradable => StatusCode::UPGRADE_REQUIRED,
            _ => StatusCode::BAD_REQUEST,
        }
    }
}

impl std::fmt::Display for WebSocketRejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::MethodNotGet => "Request method must be `GET`",
            Self::MethodNotConnect => "Request method must be `CONNECT`",
            Self::InvalidConnectionHeader => "Connection header did not include 'upgrade'",
            Self::InvalidUpgradeHeader => "`Upgrade` header did not include 'websocket'",
            Self::InvalidProtocolPseudoheader => {
                "`:protocol` pseudo-header did not include 'websocket'"
            }
            Self::InvalidWebSocketVersionHeader => {
                "`Sec-WebSocket-Version` header did not include '13'"
            }
            Self::WebSocketKeyHeaderMissing => "`Sec-WebSocket-Key` header missing",
            Self::ConnectionNotUpgradable => {
                "WebSocket request couldn't be upgraded since no upgrade state was present"
            }
        })
    }
}

impl std::error::Error for WebSocketRejection {}

/// What a valid upgrade request leaves for the answer.
#[derive(Debug)]
pub(crate) struct Checked {
    /// HTTP/1.1: the key to answer; HTTP/2: `None` (the answer is a 200).
    pub(crate) key: Option<HeaderValue>,
    pub(crate) protocols: Option<HeaderValue>,
    pub(crate) extensions: HeaderMap,
    /// The client asked for OpenIM-style gzip messages.
    pub(crate) gzip: bool,
}

/// The parts of a request the checks read, from axum's `Parts` or a whole request.
#[derive(Debug)]
pub(crate) struct Head<'a> {
    pub(crate) method: &'a Method,
    pub(crate) version: Version,
    pub(crate) uri: &'a http::Uri,
    pub(crate) headers: &'a HeaderMap,
    #[cfg_attr(not(feature = "http2"), allow(dead_code))] // `:protocol`, read with h2
    pub(crate) extensions: &'a http::Extensions,
}

impl<'a> From<&'a Parts> for Head<'a> {
    fn from(p: &'a Parts) -> Self {
        Head {
            method: &p.method,
            version: p.version,
            uri: &p.uri,
            headers: &p.headers,
            extensions: &p.extensions,
        }
    }
}

impl<'a, B> From<&'a http::Request<B>> for Head<'a> {
    fn from(r: &'a http::Request<B>) -> Self {
        Head {
            method: r.method(),
            version: r.version(),
            uri: r.uri(),
            headers: r.headers(),
            extensions: r.extensions(),
        }
    }
}

/// An HTTP/2 request's extended CONNECT (RFC 8441 section 4): `:protocol` is `websocket`.
#[cfg(feature = "http2")]
fn extended_connect(parts: &Head<'_>) -> Result<(), WebSocketRejection> {
    if *parts.method != Method::CONNECT {
        return Err(WebSocketRejection::MethodNotConnect);
    }
    let protocol = parts.extensions.get::<hyper::ext::Protocol>();
    if protocol.is_none_or(|p| !p.as_str().eq_ignore_ascii_case("websocket")) {
        return Err(WebSocketRejection::InvalidProtocolPseudoheader);
    }
    Ok(())
}

/// Without the `http2` feature `:protocol` cannot be read (hyper keeps it behind its own
/// `http2` feature), so a WebSocket over HTTP/2 is refused as axum refuses it without its
/// `http2` feature.
#[cfg(not(feature = "http2"))]
fn extended_connect(_: &Head<'_>) -> Result<(), WebSocketRejection> {
    Err(WebSocketRejection::InvalidProtocolPseudoheader)
}

/// Checks an upgrade request (axum's rules, RFC 6455 section 4.2.1, RFC 8441 section 5).
pub(crate) fn check(parts: Head<'_>) -> Result<Checked, WebSocketRejection> {
    let key = if parts.version <= Version::HTTP_11 {
        if *parts.method != Method::GET {
            return Err(WebSocketRejection::MethodNotGet);
        }
        if !lists(parts.headers, &header::CONNECTION, "upgrade") {
            return Err(WebSocketRejection::InvalidConnectionHeader);
        }
        if !lists(parts.headers, &header::UPGRADE, "websocket") {
            return Err(WebSocketRejection::InvalidUpgradeHeader);
        }
        let key = parts.headers.get(header::SEC_WEBSOCKET_KEY);
        Some(
            key.ok_or(WebSocketRejection::WebSocketKeyHeaderMissing)?
                .clone(),
        )
    } else {
        extended_connect(&parts)?;
        None
    };
    if parts
        .headers
        .get(header::SEC_WEBSOCKET_VERSION)
        .is_none_or(|v| v != "13")
    {
        return Err(WebSocketRejection::InvalidWebSocketVersionHeader);
    }
    let mut extensions = HeaderMap::new();
    for value in parts.headers.get_all(header::SEC_WEBSOCKET_EXTENSIONS) {
        extensions.append(header::SEC_WEBSOCKET_EXTENSIONS, value.clone());
    }
    Ok(Checked {
        key,
        protocols: parts.headers.get(header::SEC_WEBSOCKET_PROTOCOL).cloned(),
        extensions,
        gzip: super::gzip::asks_for_gzip(parts.uri, parts.headers),
    })
}

/// Whether a comma list header names `token` (case-insensitively).
fn lists(headers: &HeaderMap, name: &HeaderName, token: &str) -> bool {
    headers.get_all(name).iter().any(|v| {
        v.to_str()
            .is_ok_and(|s| s.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
    })
}

/// The answer: 101 with the accept key (HTTP/1.1) or 200 (HTTP/2), the chosen
/// subprotocol and the extension answer.
pub(crate) fn answer<B: Default>(
    key: Option<&HeaderValue>,
    protocol: Option<&HeaderValue>,
    extensions: Option<&str>,
) -> Response<B> {
    let mut response = Response::new(B::default());
    // HTTP/2 (no key): 200 OK, nothing more (RFC 8441 section 5).
    if let Some(key) = key {
        *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
        let headers = response.headers_mut();
        headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
        headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        let accept = derive_accept_key(key.as_bytes());
        headers.insert(
            header::SEC_WEBSOCKET_ACCEPT,
            HeaderValue::from_str(&accept).expect("base64"),
        );
    }
    let headers = response.headers_mut();
    if let Some(protocol) = protocol {
        headers.insert(header::SEC_WEBSOCKET_PROTOCOL, protocol.clone());
    }
    if let Some(value) = extensions.and_then(|v| HeaderValue::from_str(v).ok()) {
        headers.insert(header::SEC_WEBSOCKET_EXTENSIONS, value);
    }
    response
}

/// The first of the client's subprotocols, in the client's order, that `supported` lists
/// (as axum chooses).
pub(crate) fn select_protocol(
    offered: Option<&HeaderValue>,
    supported: &[String],
) -> Option<HeaderValue> {
    let offered = offered?.to_str().ok()?;
    offered
        .split(',')
        .map(str::trim)
        .find(|p| supported.iter().any(|s| s == p))
        .and_then(|p| HeaderValue::from_str(p).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::Request;

    fn parts(build: impl FnOnce(http::request::Builder) -> http::request::Builder) -> Parts {
        let req = build(Request::builder().uri("/ws?compression=gzip"))
            .body(())
            .unwrap();
        req.into_parts().0
    }

    fn good(b: http::request::Builder) -> http::request::Builder {
        b.header("connection", "keep-alive, Upgrade")
            .header("upgrade", "websocket")
            .header("sec-websocket-version", "13")
            .header("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==")
    }

    #[test]
    fn a_valid_request_passes_and_is_answered_with_the_rfc_key() {
        let checked = check((&parts(good)).into()).unwrap();
        assert!(checked.gzip);
        let response: Response<()> = answer(checked.key.as_ref(), None, Some("permessage-deflate"));
        assert_eq!(response.status(), 101);
        assert_eq!(
            response.headers()["sec-websocket-accept"],
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
    }

    #[test]
    fn each_rule_has_its_rejection() {
        type Build = fn(http::request::Builder) -> http::request::Builder;
        let cases: [(Build, _); 3] = [
            (|b| good(b).method("POST"), WebSocketRejection::MethodNotGet),
            (
                |b| good(b).header("sec-websocket-version", "12"),
                WebSocketRejection::InvalidWebSocketVersionHeader,
            ),
            (
                |b| b.header("connection", "upgrade"),
                WebSocketRejection::InvalidUpgradeHeader,
            ),
        ];
        for (build, want) in cases {
            let mut p = parts(build);
            if want == WebSocketRejection::InvalidWebSocketVersionHeader {
                // `header` appends: keep only the last version.
                let v = p
                    .headers
                    .get_all("sec-websocket-version")
                    .iter()
                    .next_back()
                    .unwrap()
                    .clone();
                p.headers.insert("sec-websocket-version", v);
            }
            assert_eq!(check((&p).into()).unwrap_err(), want);
        }
    }

    #[test]
    fn the_first_supported_offered_protocol_wins() {
        let offered = HeaderValue::from_static("chat, superchat");
        let supported = ["superchat".to_owned(), "chat".to_owned()];
        assert_eq!(select_protocol(Some(&offered), &supported).unwrap(), "chat");
    }
}
