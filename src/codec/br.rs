//! br (RFC 7932): being written (see issue 10).
