//! The gRPC statuses the layers answer with, and how they are written: `grpc-status` and a
//! percent-encoded `grpc-message` (the gRPC "HTTP/2 protocol" document), in trailers or, for
//! a call refused before it starts, in the headers of a trailers-only response.

use std::borrow::Cow;
use std::fmt;

use http::{HeaderMap, HeaderValue};

use super::encoding::{GRPC_MESSAGE, GRPC_STATUS};

/// The gRPC status codes the layers answer with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Code {
    /// 8: a message inflated, or was sent, past a limit.
    ResourceExhausted,
    /// 12: the peer compressed with a coding this side does not decode.
    Unimplemented,
    /// 13: a compressed message was corrupt or truncated, or the framing was broken.
    Internal,
}

impl Code {
    /// The code's number, as `grpc-status` carries it.
    pub(crate) fn as_u8(self) -> u8 {
        match self {
            Code::ResourceExhausted => 8,
            Code::Unimplemented => 12,
            Code::Internal => 13,
        }
    }
}

/// Why a layer ended a call: a gRPC status code and its `grpc-message`.
///
/// The server layer's request bodies fail with it (boxed), so the service sees an error,
/// and the response's `grpc-status` and `grpc-message` become it. The client layer ends a
/// response it cannot decode with it in the trailers.
///
/// ```
/// use tower_gzip::grpc::{Code, GrpcStatus};
///
/// /// Why a request body a service read failed, if the layer ended it.
/// fn why(error: &(dyn std::error::Error + 'static)) -> Option<(Code, String)> {
///     error.downcast_ref::<GrpcStatus>().map(|s| (s.code(), s.message().to_owned()))
/// }
/// # let _ = why;
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrpcStatus {
    code: Code,
    message: Cow<'static, str>,
}

impl GrpcStatus {
    /// A status with its code and message.
    pub(crate) fn new(code: Code, message: impl Into<Cow<'static, str>>) -> Self {
        GrpcStatus {
            code,
            message: message.into(),
        }
    }

    pub(crate) fn internal(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(Code::Internal, message)
    }

    pub(crate) fn resource_exhausted(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(Code::ResourceExhausted, message)
    }

    /// The status code.
    pub fn code(&self) -> Code {
        self.code
    }

    /// The message, as `grpc-message` carries it before percent-encoding.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Sets `grpc-status` and `grpc-message` in `headers`, replacing what was there.
    pub(crate) fn write(&self, headers: &mut HeaderMap) {
        headers.insert(GRPC_STATUS, HeaderValue::from(u16::from(self.code.as_u8())));
        if let Ok(message) = HeaderValue::from_maybe_shared(percent_encode(&self.message)) {
            headers.insert(GRPC_MESSAGE, message);
        }
    }

    /// `grpc-status` and `grpc-message` alone, as trailers.
    pub(crate) fn trailers(&self) -> HeaderMap {
        let mut trailers = HeaderMap::with_capacity(2);
        self.write(&mut trailers);
        trailers
    }
}

impl fmt::Display for GrpcStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.code {
            Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Code::Unimplemented => "UNIMPLEMENTED",
            Code::Internal => "INTERNAL",
        };
        write!(f, "{name}: {}", self.message)
    }
}

impl std::error::Error for GrpcStatus {}

/// `grpc-message`'s encoding: bytes outside printable ASCII, and `%`, as `%XX`.
fn percent_encode(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    for byte in message.bytes() {
        if (0x20..=0x7e).contains(&byte) && byte != b'%' {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_is_percent_encoded() {
        let status = GrpcStatus::internal("100% broken\n");
        let trailers = status.trailers();
        assert_eq!(trailers[GRPC_STATUS], "13");
        assert_eq!(trailers[GRPC_MESSAGE], "100%25 broken%0A");
    }
}
