//! The builder methods of [`CompressionLayer`](super::CompressionLayer) beyond tower-http's:
//! levels, pool, preference, the level chooser, the governor, the size floor, the cache,
//! BREACH jitter, dictionaries. The service, [`Compression`](super::Compression), keeps
//! tower-http's own (the coding switches, `quality`, `compress_when`).

macro_rules! compression_builder_methods {
    () => {
        $crate::builders::builder_methods!(
            encoding $crate::compression::settings::CompressionSettings, "offered"
        );

        /// Which coding wins when the client's q-values tie: the codings listed, in that
        /// order, then the others in the default order (zstd, br, gzip, deflate).
        pub fn prefer(self, order: &[$crate::ContentCoding]) -> Self {
            self.with(|s| s.offered.prefer(order))
        }

        /// Chooses the level for each response from its parts (coding, status, headers,
        /// known size, request path), as
        /// [`compress_when`](crate::compression::CompressionLayer::compress_when) chooses
        /// whether: `Some(level)` compresses at that level, `None` sends the response
        /// unencoded (unless the client refused identity, which gets the layer's level).
        /// [`ToCompress::level`](crate::compression::ToCompress::level) is the level the
        /// layer would use.
        ///
        /// ```
        /// use tower_gzip::compression::CompressionLayer;
        /// use tower_gzip::{CompressionLevel, ContentCoding};
        ///
        /// // Small dictionary-compressed bodies cost microseconds even at high levels.
        /// let layer = CompressionLayer::new().level_for(|response| {
        ///     match (response.coding(), response.size()) {
        ///         (ContentCoding::Dcz, Some(size)) if size <= 16 << 10 => {
        ///             Some(CompressionLevel::Precise(9))
        ///         }
        ///         _ if response.path().starts_with("/downloads/") => None,
        ///         _ => Some(response.level()),
        ///     }
        /// });
        /// # let _ = layer;
        /// ```
        pub fn level_for<F>(self, choose: F) -> Self
        where
            F: Fn(&$crate::compression::ToCompress<'_>) -> Option<$crate::CompressionLevel>
                + Send
                + Sync
                + 'static,
        {
            let chooser = $crate::compression::settings::LevelChooser(std::sync::Arc::new(choose));
            self.with(|s| s.level_chooser = Some(chooser))
        }

        /// Turns on a load [`Governor`](crate::compression::Governor) (off by default):
        /// when compression takes too much of the CPU, levels step down towards each
        /// coding's fastest, then the dearest kinds of response go unencoded; they step back
        /// up when the load falls. It applies after [`level_for`](Self::level_for). Keep a
        /// clone to read its [`stats`](crate::compression::Governor::stats).
        pub fn adaptive(self, governor: $crate::compression::Governor) -> Self {
            self.with(|s| s.governor = Some(governor))
        }

        /// The size floor (default 256 bytes, under which the coding's framing eats what it saves).
        ///
        /// [`DefaultPredicate`](crate::predicate::DefaultPredicate) refuses bodies known to be
        /// smaller. A body of unknown size is read ahead while it has frames ready: under
        /// `DefaultPredicate`, one that ends below the floor is sent as it is; one that goes
        /// pending first is compressed, so streaming is never delayed. A custom predicate
        /// decides alone, whatever the size.
        pub fn min_size(self, bytes: u64) -> Self {
            self.with(|s| s.min_size = bytes)
        }

        /// Serves bodies it compressed before from `cache` (shared by every layer given a
        /// clone of it) and recompresses the hot ones at their coding's densest level in the
        /// background: see the [`cache`](crate::cache) module for what is cached and what
        /// never is. Off by default.
        pub fn cache(self, cache: $crate::cache::VariantCache) -> Self {
            self.with(|s| s.cache = Some(cache))
        }

        /// A BREACH mitigation, off by default (`0`): pads each response with 1 to
        /// `max_bytes` bytes (random per response, unpredictable to a remote attacker) that
        /// decoders skip, so that the length of one response no longer tells exactly how
        /// well secret and attacker-controlled content compressed together. Every coding a
        /// browser gets has room: gzip a header comment, zstd and `dcz` a skippable frame
        /// after the last frame (8 bytes of frame header more), br and `dcb` brotli
        /// metadata before the last meta-block, `deflate` empty deflate blocks after the
        /// zlib header (about 1.25 bytes each). Padded responses are never cached (see
        /// [`cache`](Self::cache)): the padding is per response.
        ///
        /// What it protects: recovering a secret from the length of one response per guess.
        /// What it does not: an attacker who sends many requests per guess averages the
        /// padding out or, cheaper, takes the shortest length seen, which tends to the
        /// unpadded length plus one; jitter raises the number of requests needed (with 16
        /// guesses and a gap of 4 bytes, 256 requests per guess find the secret through
        /// 256 bytes of jitter, and mostly not through 4,096: BENCHMARKS.md, "Length
        /// hiding"). It does not make reflecting secrets next to attacker input safe: keep
        /// secrets out of responses that reflect input, or do not compress those responses
        /// (a predicate, or `Cache-Control: no-transform`). Go's gzhttp has the same option
        /// for gzip, `RandomJitter`.
        pub fn breach_jitter(self, max_bytes: u16) -> Self {
            self.with(|s| s.jitter = max_bytes)
        }

        /// Serves dictionary-compressed responses (RFC 9842, `dcz` and `dcb`) with the
        /// dictionaries in `store`: a request whose `Available-Dictionary` names one of them,
        /// whose `Accept-Encoding` offers `dcz` or `dcb`, and that passes the readability
        /// gate (RFC 9842 section 7: the requesting context can read both) gets its response compressed against
        /// that dictionary, if the predicate and the size floor say compress. Every other
        /// request is served as without it, and every response that varies with
        /// `Accept-Encoding` also varies with `Available-Dictionary`.
        ///
        /// The store is shared: add and retire dictionaries while the server runs.
        #[cfg(dictionary)]
        pub fn dictionaries(self, store: $crate::dictionary::DictionaryStore) -> Self {
            self.with(|s| s.dictionaries = Some(store))
        }

        /// The dictionary codings this layer makes, most preferred first when the client's
        /// q-values tie (default: `dcz`, then `dcb`, those compiled in). An empty list turns
        /// dictionary compression off.
        #[cfg(dictionary)]
        pub fn dictionary_codings(self, order: &[$crate::ContentCoding]) -> Self {
            let order: Vec<_> = order
                .iter()
                .copied()
                .filter(|c| $crate::ContentCoding::DICTIONARY.contains(c))
                .collect();
            self.with(|s| s.dictionary_codings = order)
        }

        /// Counters for the responses handled with these settings.
        pub fn stats(&self) -> $crate::compression::CompressionStats {
            self.settings.stats.clone()
        }
    };
}

pub(super) use compression_builder_methods;
