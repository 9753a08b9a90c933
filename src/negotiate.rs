//! Accept-Encoding negotiation (RFC 9110 section 12.5.3).
