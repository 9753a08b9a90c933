//! Accept-Encoding negotiation (RFC 9110 section 12.5.3). (Temporary minimal version.)

use crate::codec::Format;

/// What to send, decided from the request's Accept-Encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Negotiated {
    Encode(Format),
    Identity,
    #[allow(dead_code)]
    NotAcceptable,
}

/// Which codings the server offers, in preference order gzip > deflate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Offered {
    pub(crate) gzip: bool,
    pub(crate) deflate: bool,
}

pub(crate) fn negotiate(headers: &http::HeaderMap, offered: Offered) -> Negotiated {
    let mut gzip = false;
    let mut deflate = false;
    for v in headers.get_all(http::header::ACCEPT_ENCODING) {
        let s = v.to_str().unwrap_or("").to_ascii_lowercase();
        gzip |= s.contains("gzip");
        deflate |= s.contains("deflate");
    }
    if gzip && offered.gzip {
        Negotiated::Encode(Format::Gzip)
    } else if deflate && offered.deflate {
        Negotiated::Encode(Format::Deflate)
    } else {
        Negotiated::Identity
    }
}
