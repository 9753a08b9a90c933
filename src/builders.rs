//! The builder methods the layer and service types share, written once. Each type passes
//! its own settings type in, so this floor names none of them.
//!
//! | types | invocation |
//! | --- | --- |
//! | [`CompressionLayer`] | `compression_builder_methods!()` (in `compression/builder.rs`), over `builder_methods!(encoding ..)` |
//! | [`Compression`] | `builder_methods!(encoding_switches CompressionSettings, ..)` |
//! | [`DecompressionLayer`], [`RequestDecompressionLayer`] | `builder_methods!(decompression)` |
//! | [`Decompression`], [`RequestDecompression`] | `builder_methods!(decompression_switches)` |
//! | the services (request compression's too) | `builder_methods!(inner_service)` |
//!
//! The services have tower-http's methods (the coding switches, `quality`); what tower-http
//! does not have (limits, pools, per-coding levels, dictionaries) is set on the layers.
//! Request compression, which tower-http does not have, sends one coding and sets it on its
//! layer alone (`client/layer.rs`). Both families share `codings` (`gzip`, `no_gzip`, ...).
//!
//! A macro, not a trait: tower-http's users call these as inherent methods, without
//! importing anything, and only an inherent `impl` on each type gives them that.
//!
//! [`CompressionLayer`]: crate::compression::CompressionLayer
//! [`Compression`]: crate::compression::Compression
//! [`DecompressionLayer`]: crate::decompression::DecompressionLayer
//! [`Decompression`]: crate::decompression::Decompression
//! [`RequestDecompressionLayer`]: crate::decompression::RequestDecompressionLayer
//! [`RequestDecompression`]: crate::decompression::RequestDecompression

macro_rules! builder_methods {
    // The decompression services: tower-http's switches; limits and pool are set on the layer.
    // The type has `settings: decompression::coding::Settings`.
    (decompression_switches) => {
        $crate::builders::builder_methods!(codings "decoded");

        fn set_coding(mut self, coding: $crate::ContentCoding, enable: bool) -> Self {
            self.settings.accept.set(coding, enable);
            self
        }
    };

    // Both decompression layers: the switches, the limits, the pool.
    (decompression) => {
        $crate::builders::builder_methods!(decompression_switches);

        /// The limits on what a body may decode to (default: 20 MiB and a ratio limit; see
        /// [`DecompressionLimits`](crate::decompression::DecompressionLimits), and
        /// [`DecompressionLimits::none`](crate::decompression::DecompressionLimits::none),
        /// only for trusted peers).
        pub fn limits(mut self, limits: $crate::decompression::DecompressionLimits) -> Self {
            self.settings.limits = limits;
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
        $crate::builders::builder_methods!(encoding_switches $settings, $what);

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

    // tower-http's switches of both compression directions: the codings and `quality`.
    (encoding_switches $settings:path, $what:literal) => {
        $crate::builders::builder_methods!(codings $what);

        fn with(mut self, change: impl FnOnce(&mut $settings)) -> Self {
            change(::std::sync::Arc::make_mut(&mut self.settings));
            self
        }

        fn set_coding(self, coding: $crate::ContentCoding, enable: bool) -> Self {
            self.with(|s| s.offered.set(coding, enable))
        }

        /// The compression level of every coding (default
        /// [`CompressionLevel::Default`](crate::CompressionLevel::Default): gzip and deflate 6,
        /// zstd 3, br 4), mapped per coding as [`CompressionLevel`](crate::CompressionLevel)
        /// shows. The layer's `level` sets one coding's.
        pub fn quality(self, level: $crate::CompressionLevel) -> Self {
            self.with(|s| s.levels = $crate::codec::Levels::all(level))
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
            self.set_coding($crate::ContentCoding::Gzip, enable)
        }

        #[doc = concat!("gzip is not ", $what, ".")]
        pub fn no_gzip(self) -> Self {
            self.gzip(false)
        }

        #[doc = concat!("Sets whether deflate (zlib; raw deflate is also decoded) is ", $what, ".")]
        pub fn deflate(self, enable: bool) -> Self {
            self.set_coding($crate::ContentCoding::Deflate, enable)
        }

        #[doc = concat!("deflate is not ", $what, ".")]
        pub fn no_deflate(self) -> Self {
            self.deflate(false)
        }

        #[doc = concat!("Sets whether zstd is ", $what, " (with the cargo feature `zstd`; without it, zstd is never ", $what, ").")]
        pub fn zstd(self, enable: bool) -> Self {
            self.set_coding($crate::ContentCoding::Zstd, enable)
        }

        #[doc = concat!("zstd is not ", $what, ".")]
        pub fn no_zstd(self) -> Self {
            self.zstd(false)
        }

        #[doc = concat!("Sets whether br (Brotli) is ", $what, " (with the cargo feature `br`; without it, br is never ", $what, ").")]
        pub fn br(self, enable: bool) -> Self {
            self.set_coding($crate::ContentCoding::Br, enable)
        }

        #[doc = concat!("br is not ", $what, ".")]
        pub fn no_br(self) -> Self {
            self.br(false)
        }
    };
}

pub(crate) use builder_methods;
