//! Client-side request compression.
