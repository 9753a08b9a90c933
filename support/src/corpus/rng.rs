//! A small deterministic generator (SplitMix64): the corpus depends on nothing else, so the
//! same seed gives the same bytes on every machine and toolchain (integer arithmetic only).

/// SplitMix64: one `u64` of state, every draw a mix of the next step.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`; seeds that differ in any bit give unrelated streams.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x6a09_e667_f3bc_c908)
    }

    /// A generator for `index` within the stream `seed` (the same pair, the same stream).
    pub fn keyed(seed: u64, index: u64) -> Rng {
        let mut mixer = Rng::new(seed);
        Rng(mixer.next() ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0; the modulo bias is irrelevant at these sizes).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// True `percent` times in 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// One of `items`, uniformly.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// An index in `0..n`, the low ones far more often (density ~ 1/sqrt(i)): popular users,
    /// repositories and products recur, as in real traffic.
    pub fn skewed(&mut self, n: usize) -> usize {
        let u = self.below(1 << 16);
        ((n as u64 * u * u) >> 32) as usize
    }

    /// `len` characters from `alphabet`.
    pub fn token(&mut self, alphabet: &[u8], len: usize) -> String {
        (0..len).map(|_| *self.pick(alphabet) as char).collect()
    }
}

/// Lower-case hex digits.
pub const HEX: &[u8] = b"0123456789abcdef";
/// Letters and digits, as in Stripe-like ids.
pub const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
