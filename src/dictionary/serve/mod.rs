//! Serving dictionaries (RFC 9842): the [`Dictionary`] with the metadata it is announced
//! with, the store a layer picks from, which requests a dictionary may answer (its `match`
//! and the readability gate), and the service that hands dictionaries out.

mod gate;
pub(crate) mod scope;
mod select;
#[cfg(dictionary)]
mod served;
#[cfg(dictionary)]
mod service;
#[cfg(dictionary)]
mod store;

#[cfg(not(dictionary))]
use super::{Dictionary, DictionaryStore};
pub(crate) use gate::gate;
#[cfg(fuzzing)]
pub(crate) use select::select;
pub(crate) use select::select_parsed;
#[cfg(dictionary)]
pub use served::Dictionary;
#[cfg(dictionary)]
pub use service::{DictionaryService, UseAsDictionaryLayer, link_header};
#[cfg(dictionary)]
pub use store::DictionaryStore;
