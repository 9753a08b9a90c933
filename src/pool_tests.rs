//! Unit tests of the pool's guard and shelves (moved here from tests/pool.rs, which tests the
//! pool through the public codecs).
