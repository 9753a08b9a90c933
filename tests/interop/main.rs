//! Interoperability with software nobody here wrote: command-line tools and Python modules
//! decoding what our codecs write and writing what they decode (`codecs`), and real HTTP
//! clients (curl, a Python stdlib client, headless Chromium) against the demo server
//! (`real_clients`).

#[path = "../common/mod.rs"]
mod common;
// The demo server needs dictionary transport, client side included.
#[cfg(dictionary_client)]
#[path = "../common/demo.rs"]
mod demo;

#[cfg(dictionary_client)]
mod chromium;
mod codecs;
#[cfg(dictionary_client)]
mod dictionaries;
#[cfg(dictionary_client)]
mod real_clients;
