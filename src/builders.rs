//! The builder methods every layer and service shares, written once.
//!
//! Each type implements a private `set_coding(self, Format, bool) -> Self`; the macros add
//! tower-http's public names on top.

/// `gzip(bool)`, `no_gzip()`, `deflate(bool)`, `no_deflate()`, and with their features
/// `zstd(bool)`, `no_zstd()`, `br(bool)`, `no_br()`.
macro_rules! coding_builders {
    ($what:literal) => {
        #[doc = concat!("Sets whether gzip (and `x-gzip`) is ", $what, ".")]
        pub fn gzip(self, enable: bool) -> Self {
            self.set_coding($crate::codec::Format::Gzip, enable)
        }

        #[doc = concat!("gzip is not ", $what, ".")]
        pub fn no_gzip(self) -> Self {
            self.gzip(false)
        }

        #[doc = concat!("Sets whether deflate (zlib; raw deflate is also decoded) is ", $what, ".")]
        pub fn deflate(self, enable: bool) -> Self {
            self.set_coding($crate::codec::Format::Deflate, enable)
        }

        #[doc = concat!("deflate is not ", $what, ".")]
        pub fn no_deflate(self) -> Self {
            self.deflate(false)
        }

        #[doc = concat!("Sets whether zstd is ", $what, " (cargo feature `zstd`).")]
        #[cfg(feature = "zstd")]
        pub fn zstd(self, enable: bool) -> Self {
            self.set_coding($crate::codec::Format::Zstd, enable)
        }

        #[doc = concat!("zstd is not ", $what, ".")]
        #[cfg(feature = "zstd")]
        pub fn no_zstd(self) -> Self {
            self.zstd(false)
        }

        #[doc = concat!("Sets whether br (Brotli) is ", $what, " (cargo feature `br`).")]
        #[cfg(feature = "br")]
        pub fn br(self, enable: bool) -> Self {
            self.set_coding($crate::codec::Format::Br, enable)
        }

        #[doc = concat!("br is not ", $what, ".")]
        #[cfg(feature = "br")]
        pub fn no_br(self) -> Self {
            self.br(false)
        }
    };
}

/// `get_ref`, `get_mut` and `into_inner` for a service with an `inner` field.
macro_rules! inner_service_accessors {
    () => {
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
}

pub(crate) use {coding_builders, inner_service_accessors};
