use tower_layer::Layer;

use super::Decompression;
use crate::builders::builder_methods;
use crate::client::dictionaries::ClientDictionaryStore;
use crate::decompression::coding::Settings;

/// Asks for compressed responses and decodes them: a [`Layer`] that wraps a client service
/// in [`Decompression`].
///
/// Defaults: every coding compiled in accepted and decoded (`zstd`, `br`, `gzip` and
/// `x-gzip`, `deflate`), [`DecompressionLimits::default`] (20 MiB, ratio 200 burst 3 past
/// 1 MiB; servers can send bombs too), decoders from [`CodecPool::global`]; no dictionaries
/// unless `dictionaries` is given a store (cargo feature `dictionary-client`).
///
/// [`DecompressionLimits::default`]: crate::decompression::DecompressionLimits::default
/// [`CodecPool::global`]: crate::CodecPool::global
///
/// # Example
///
/// ```
/// use tower::ServiceBuilder;
/// use tower_gzip::decompression::{DecompressionLayer, DecompressionLimits};
///
/// # fn wrap<S>(client: S) {
/// let limits = DecompressionLimits::new().with_max_size(Some(100 * 1024 * 1024));
/// let client = ServiceBuilder::new()
///     .layer(DecompressionLayer::new().limits(limits))
///     .service(client);
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct DecompressionLayer {
    pub(super) settings: Settings,
    pub(super) dictionaries: Option<ClientDictionaryStore>,
}

impl DecompressionLayer {
    /// A layer with the defaults.
    pub fn new() -> Self {
        Self::default()
    }

    builder_methods!(decompression);

    #[cfg(dictionary_client)]
    /// Learns compression dictionaries into `store` and offers them (RFC 9842, as Chromium
    /// does): a `2xx` response to a `GET` with `Use-As-Dictionary` and a freshness lifetime
    /// is stored once its body has been read in full; a later request whose URL matches a
    /// fresh dictionary of its origin offers `dcz` and `dcb` and names it in
    /// `Available-Dictionary`; a `dcz`/`dcb` response is decoded with it, after its header's
    /// hash is checked. A `dcz`/`dcb` response to a request that offered no dictionary fails
    /// with [`DictionaryMismatch`](crate::codec::DecodeErrorKind::DictionaryMismatch).
    ///
    /// Requests need an absolute URI (as hyper-util's client sends): a dictionary belongs to
    /// an origin. Requests with their own `Accept-Encoding` or `Available-Dictionary`, or a
    /// `Range`, go out as they are. Clones of `store` share it, so clients can share what
    /// they learn.
    ///
    /// ```
    /// use tower_gzip::decompression::DecompressionLayer;
    /// use tower_gzip::client::ClientDictionaryStore;
    ///
    /// let store = ClientDictionaryStore::new();
    /// let layer = DecompressionLayer::new().dictionaries(store.clone());
    /// # let _ = layer;
    /// ```
    pub fn dictionaries(mut self, store: ClientDictionaryStore) -> Self {
        self.dictionaries = Some(store);
        self
    }
}

impl<S> Layer<S> for DecompressionLayer {
    type Service = Decompression<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Decompression {
            inner,
            settings: self.settings.clone(),
            dictionaries: self.dictionaries.clone(),
        }
    }
}
