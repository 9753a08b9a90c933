//! Interoperability with software nobody here wrote: command-line tools and Python modules
//! decoding what our codecs write and writing what they decode (`codecs`), and real HTTP
//! clients (curl, a Python stdlib client, headless Chromium) against the demo server
//! (`real_clients`).

use tower_gzip_support as common;
// The demo server needs both dictionary codings.
#[cfg(all(feature = "dcz", feature = "dcb"))]
use tower_gzip_support::demo;

#[cfg(all(feature = "dcz", feature = "dcb"))]
mod chromium;
#[cfg(all(feature = "dcz", feature = "dcb"))]
mod chromium_padding;
#[cfg(all(feature = "dcz", feature = "dcb", feature = "websocket"))]
mod chromium_websocket;
mod codecs;
#[cfg(all(feature = "dcz", feature = "dcb"))]
mod dictionaries;
mod padding;
#[cfg(all(feature = "dcz", feature = "dcb"))]
mod real_clients;
