//! Request and response decompression.
