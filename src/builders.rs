//! Every builder method of the eight layer and service types, written once.
//!
//! | types | invocation |
//! | --- | --- |
//! | [`CompressionLayer`], [`Compression`] | `builder_methods!(compression)` |
//! | [`RequestCompressionLayer`], [`RequestCompression`] | `builder_methods!(request_compression)` |
//! | [`DecompressionLayer`], [`Decompression`], [`RequestDecompressionLayer`], [`RequestDecompression`] | `builder_methods!(decompression)` |
//! | the four services | `builder_methods!(inner_service)` |
//!
//! The `compression` and `request_compression` arms share `encoding` (`quality`, `pool`); all
//! three families share `codings` (`gzip`, `no_gzip`, ...).
//!
//! A macro, not a trait: tower-http's users call these as inherent methods, without
//! importing anything, and only an inherent `impl` on each type gives them that.
//!
//! [`CompressionLayer`]: crate::compression::CompressionLayer
//! [`Compression`]: crate::compression::Compression
//! [`RequestCompressionLayer`]: crate::client::RequestCompressionLayer
//! [`RequestCompression`]: crate::client::RequestCompression
//! [`DecompressionLayer`]: crate::decompression::DecompressionLayer
//! [`Decompression`]: crate::decompression::Decompression
//! [`RequestDecompressionLayer`]: crate::decompression::RequestDecompressionLayer
//! [`RequestDecompression`]: crate::decompression::RequestDecompression

macro_rules! builder_methods {
    // Response compression; the type has `settings: Arc<compression::service::Settings>`.
    (compression) => {
        $crate::builders::builder_methods!(
            encoding $crate::compression::service::Settings, "offered"
        );

        /// Which coding wins when the client's q-values tie: the codings listed, in that
        /// order, then the others in the default order (zstd, br, gzip, deflate).
        pub fn prefer(self, order: &[$crate::codec::ContentCoding]) -> Self {
            self.with(|s| s.offered.prefer(order))
        }

        /// Chooses the level for each response from its parts (coding, status, headers,
        /// extensions, known size, request path), as
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
            let chooser = $crate::compression::choose_level::LevelChooser(std::sync::Arc::new(choose));
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

        /// The size floor (default [`DEFAULT_MIN_SIZE`](crate::compression::DEFAULT_MIN_SIZE)).
        ///
        /// [`DefaultPredicate`](crate::predicate::DefaultPredicate) refuses bodies known to be
        /// smaller. A body of unknown size is read ahead while it has frames ready: under
        /// `DefaultPredicate`, one that ends below the floor is sent as it is; one that goes
        /// pending first is compressed, so streaming is never delayed. A custom predicate
        /// decides alone, whatever the size.
        pub fn min_size(self, bytes: u64) -> Self {
            self.with(|s| s.min_size = bytes)
        }

        /// A BREACH mitigation, off by default (`0`): pads each gzip header with 1 to
        /// `max_bytes` random bytes (a header comment), so that the response length no
        /// longer reveals exactly how well secret and attacker-controlled content compressed
        /// together.
        ///
        /// Padding raises the number of requests an attacker needs; it does not make
        /// reflecting secrets next to attacker input safe. Only gzip has header room, so
        /// with jitter on, gzip responses are padded and the other codings are not. Go's
        /// gzhttp does the same with `RandomJitter`.
        pub fn breach_jitter(self, max_bytes: u16) -> Self {
            self.with(|s| s.jitter = max_bytes)
        }

        /// Serves dictionary-compressed responses (RFC 9842, `dcz` and `dcb`) with the
        /// dictionaries in `store`: a request whose `Available-Dictionary` names one of them,
        /// whose `Accept-Encoding` offers `dcz` or `dcb`, and that passes the readability
        /// gate ([`gate`](crate::dictionary::gate)) gets its response compressed against
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

    // Request compression; the type has `settings: Arc<client::layer::Settings>`.
    (request_compression) => {
        $crate::builders::builder_methods!(
            encoding $crate::client::layer::Settings,
            "sent (the most preferred one enabled is used: zstd, br, gzip, deflate)"
        );

        /// Sends `format` and nothing else (default: [`ContentCoding::Gzip`](crate::codec::ContentCoding::Gzip)).
        pub fn coding(self, format: $crate::codec::ContentCoding) -> Self {
            self.with(|s| {
                for other in $crate::codec::ContentCoding::PLAIN {
                    s.offered.set(*other, *other == format);
                }
            })
        }

        /// Under [`DefaultPredicate`](crate::predicate::DefaultPredicate), bodies whose size
        /// is known (exact size hint or `Content-Length`) and smaller than this are sent as
        /// they are; bodies of unknown size are compressed. Default
        /// [`DEFAULT_REQUEST_MIN_SIZE`](crate::client::DEFAULT_REQUEST_MIN_SIZE) (1 KiB).
        pub fn min_size(self, min_size: u64) -> Self {
            self.with(|s| s.min_size = min_size)
        }
    };

    // Both decompression directions; the type has `settings: decompression::coding::Settings`.
    (decompression) => {
        $crate::builders::builder_methods!(codings "decoded");

        fn set_coding(mut self, format: $crate::codec::ContentCoding, enable: bool) -> Self {
            self.settings.accept.set(format, enable);
            self
        }

        /// Replaces both limits (see [`DecompressionLimits`](crate::decompression::DecompressionLimits)).
        pub fn limits(mut self, limits: $crate::decompression::DecompressionLimits) -> Self {
            self.settings.limits = limits;
            self
        }

        /// Sets the cap on decoded bytes per body; `None` removes it. Default: 20 MiB
        /// ([`DEFAULT_MAX_DECOMPRESSED_SIZE`](crate::decompression::DEFAULT_MAX_DECOMPRESSED_SIZE)).
        pub fn max_decompressed_size(mut self, max: Option<usize>) -> Self {
            self.settings.limits.max_size = max;
            self
        }

        /// Sets the ratio limit; `None` removes it. Default:
        /// [`RatioLimit::DEFAULT`](crate::decompression::RatioLimit::DEFAULT) (200, burst 3,
        /// past 1 MiB).
        pub fn ratio_limit(mut self, ratio: Option<$crate::decompression::RatioLimit>) -> Self {
            self.settings.limits.ratio = ratio;
            self
        }

        /// Removes both limits. Only for trusted peers.
        pub fn no_limits(mut self) -> Self {
            self.settings.limits = $crate::decompression::DecompressionLimits::none();
            self
        }

        /// Sets the pool decoders are drawn from. Default: [`CodecPool::global`](crate::CodecPool::global).
        pub fn pool(mut self, pool: $crate::CodecPool) -> Self {
            self.settings.pool = pool;
            self
        }
    };

    // What both compression directions share; the type has `settings: Arc<$settings>`, and
    // `$settings` has `offered`, `level` and `pool` fields.
    (encoding $settings:path, $what:literal) => {
        $crate::builders::builder_methods!(codings $what);

        fn with(mut self, change: impl FnOnce(&mut $settings)) -> Self {
            change(::std::sync::Arc::make_mut(&mut self.settings));
            self
        }

        fn set_coding(self, format: $crate::codec::ContentCoding, enable: bool) -> Self {
            self.with(|s| s.offered.set(format, enable))
        }

        /// The compression level of every coding (default
        /// [`CompressionLevel::Default`](crate::CompressionLevel::Default): gzip and deflate 6,
        /// zstd 3, br 4), mapped per coding as [`CompressionLevel`](crate::CompressionLevel)
        /// shows. [`level`](Self::level) then sets one coding's.
        pub fn quality(self, level: $crate::CompressionLevel) -> Self {
            self.with(|s| s.levels = $crate::codec::Levels::all(level))
        }

        /// The compression level of one coding, the others keeping theirs: `br` at 5 and
        /// `zstd` at 3 in one layer, say. `dcz` and `dcb` have levels of their own.
        pub fn level(self, coding: $crate::ContentCoding, level: $crate::CompressionLevel) -> Self {
            self.with(|s| s.levels.set(coding, level))
        }

        /// The pool to draw codec states from (default:
        /// [`CodecPool::global`](crate::CodecPool::global)).
        pub fn pool(self, pool: $crate::CodecPool) -> Self {
            self.with(|s| s.pool = pool)
        }
    };

    // `get_ref`, `get_mut` and `into_inner`; the type has an `inner: S` field.
    (inner_service) => {
        /// The wrapped service.
        pub fn get_ref(&self) -> &S {
            &self.inner
        }

        /// The wrapped service, mutably.
        pub fn get_mut(&mut self) -> &mut S {
            &mut self.inner
        }

        /// Unwraps the inner service.
        pub fn into_inner(self) -> S {
            self.inner
        }
    };

    // The coding switches every type has; it implements `set_coding`. `$what` ends the
    // docs' sentence: "Sets whether gzip is offered."
    (codings $what:literal) => {
        #[doc = concat!("Sets whether gzip (and `x-gzip`) is ", $what, ".")]
        pub fn gzip(self, enable: bool) -> Self {
            self.set_coding($crate::codec::ContentCoding::Gzip, enable)
        }

        #[doc = concat!("gzip is not ", $what, ".")]
        pub fn no_gzip(self) -> Self {
            self.gzip(false)
        }

        #[doc = concat!("Sets whether deflate (zlib; raw deflate is also decoded) is ", $what, ".")]
        pub fn deflate(self, enable: bool) -> Self {
            self.set_coding($crate::codec::ContentCoding::Deflate, enable)
        }

        #[doc = concat!("deflate is not ", $what, ".")]
        pub fn no_deflate(self) -> Self {
            self.deflate(false)
        }

        #[doc = concat!("Sets whether zstd is ", $what, " (with the cargo feature `zstd`; without it, zstd is never ", $what, ").")]
        pub fn zstd(self, enable: bool) -> Self {
            self.set_coding($crate::codec::ContentCoding::Zstd, enable)
        }

        #[doc = concat!("zstd is not ", $what, ".")]
        pub fn no_zstd(self) -> Self {
            self.zstd(false)
        }

        #[doc = concat!("Sets whether br (Brotli) is ", $what, " (with the cargo feature `br`; without it, br is never ", $what, ").")]
        pub fn br(self, enable: bool) -> Self {
            self.set_coding($crate::codec::ContentCoding::Br, enable)
        }

        #[doc = concat!("br is not ", $what, ".")]
        pub fn no_br(self) -> Self {
            self.br(false)
        }
    };
}

pub(crate) use builder_methods;
