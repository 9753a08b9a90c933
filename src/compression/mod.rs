//! Response compression.
