//! The CPU cost model the builder's budgets are checked against.
//!
//! Each row is one coding at one level, with a dictionary of up to `dict_kib` KiB (0 for
//! the plain codings): the CPU time to compress one response, in microseconds, at each of
//! the response sizes in [`SIZES`], measured once on the project's machine (`cargo run
//! --release --example dict_cost_model` measures them again and prints this table). A
//! response's time is interpolated between the two sizes around its own; a cost is the sum
//! over the held-out responses divided by the same sum for the plain coding. The machine's
//! speed cancels out, and the same samples always give the same costs: the build's choice
//! never depends on timing noise. A dictionary longer than the largest class of its row
//! takes that class's times.

use crate::ContentCoding;

/// The mean response sizes (bytes) of the calibration's groups of responses.
pub(super) const SIZES: [f64; 7] = [497.0, 908.0, 1490.0, 2975.0, 5361.0, 11_945.0, 30_283.0];

/// One coding, one level, one class of dictionary size: microseconds per response at each
/// of [`SIZES`].
#[derive(Clone, Copy, Debug)]
pub(super) struct Row {
    coding: ContentCoding,
    level: i32,
    /// The longest dictionary the row covers, in KiB; 0 for a plain coding.
    dict_kib: usize,
    micros: [f64; 7],
}

const fn row(coding: ContentCoding, level: i32, dict_kib: usize, micros: [f64; 7]) -> Row {
    Row {
        coding,
        level,
        dict_kib,
        micros,
    }
}

use ContentCoding::{Br, Dcb, Dcz, Zstd};

/// The calibration (see the module's comment for how it was measured): the lower of two
/// runs of `dict_cost_model` for each entry.
const ROWS: &[Row] = &[
    row(Zstd, 3, 0, [4.4, 4.8, 7.5, 10.8, 15.2, 23.7, 45.0]),
    row(Br, 4, 0, [24.0, 28.6, 41.8, 62.4, 89.5, 134.2, 249.7]),
    row(Br, 5, 0, [26.5, 33.3, 47.2, 75.7, 109.2, 175.5, 356.3]),
    row(Br, 6, 0, [26.7, 34.2, 49.0, 80.5, 116.5, 191.5, 393.6]),
    row(Dcz, 3, 16, [5.0, 5.7, 9.5, 12.5, 18.0, 27.0, 69.3]),
    row(Dcz, 4, 16, [5.0, 5.7, 9.6, 12.6, 18.7, 28.1, 68.8]),
    row(Dcz, 5, 16, [6.9, 9.0, 15.2, 23.9, 38.0, 66.6, 146.9]),
    row(Dcz, 6, 16, [9.3, 11.7, 20.4, 31.8, 52.9, 89.9, 201.5]),
    row(Dcz, 9, 16, [14.0, 17.6, 33.5, 50.6, 82.2, 139.5, 302.1]),
    row(Dcz, 12, 16, [14.6, 20.3, 42.7, 93.7, 169.1, 337.0, 885.5]),
    row(Dcb, 4, 16, [97.6, 105.0, 119.3, 142.5, 177.8, 247.5, 454.5]),
    row(Dcb, 5, 16, [97.2, 104.1, 118.7, 142.2, 177.3, 242.9, 446.2]),
    row(
        Dcb,
        6,
        16,
        [138.3, 148.0, 166.7, 190.9, 231.1, 308.9, 543.7],
    ),
    row(Dcz, 3, 32, [5.0, 5.7, 9.6, 12.3, 18.0, 27.1, 69.9]),
    row(Dcz, 4, 32, [5.0, 5.8, 9.8, 12.6, 18.2, 28.3, 81.6]),
    row(Dcz, 5, 32, [7.1, 9.4, 15.2, 23.7, 38.2, 65.6, 152.5]),
    row(Dcz, 6, 32, [9.0, 11.3, 19.7, 32.2, 52.3, 91.0, 206.9]),
    row(Dcz, 9, 32, [15.3, 19.5, 35.3, 53.6, 87.5, 145.2, 320.4]),
    row(Dcz, 12, 32, [15.2, 22.0, 45.8, 99.5, 180.2, 353.8, 931.3]),
    row(
        Dcb,
        4,
        32,
        [138.1, 143.6, 161.6, 188.0, 220.5, 286.0, 499.3],
    ),
    row(
        Dcb,
        5,
        32,
        [136.9, 143.9, 158.9, 181.5, 219.1, 282.7, 495.3],
    ),
    row(
        Dcb,
        6,
        32,
        [178.0, 190.8, 209.4, 229.0, 268.8, 341.1, 578.2],
    ),
    row(Dcz, 3, 64, [1.9, 5.8, 7.3, 10.9, 15.9, 24.8, 72.8]),
    row(Dcz, 4, 64, [1.9, 6.2, 7.3, 11.3, 16.7, 26.5, 102.0]),
    row(Dcz, 5, 64, [3.1, 9.3, 11.8, 21.2, 35.0, 63.0, 151.8]),
    row(Dcz, 6, 64, [4.6, 11.5, 16.7, 29.8, 50.8, 90.8, 213.3]),
    row(Dcz, 9, 64, [7.1, 18.9, 29.2, 47.5, 84.0, 147.6, 340.1]),
    row(Dcz, 12, 64, [7.7, 21.9, 37.1, 91.9, 167.5, 342.4, 1002.5]),
    row(
        Dcb,
        4,
        64,
        [202.9, 219.9, 226.4, 261.1, 296.8, 364.9, 579.3],
    ),
    row(
        Dcb,
        5,
        64,
        [200.9, 221.2, 234.5, 256.8, 289.6, 349.1, 571.6],
    ),
    row(
        Dcb,
        6,
        64,
        [231.3, 257.0, 258.7, 275.6, 331.4, 403.6, 652.7],
    ),
    row(Dcz, 3, 128, [1.5, 4.6, 5.4, 9.6, 14.8, 25.3, 75.7]),
    row(Dcz, 4, 128, [2.8, 7.3, 10.1, 18.6, 32.0, 59.2, 145.6]),
    row(Dcz, 5, 128, [3.1, 7.6, 11.2, 19.9, 37.8, 71.7, 194.4]),
    row(Dcz, 6, 128, [4.3, 10.0, 14.1, 25.1, 45.8, 87.8, 273.7]),
    row(Dcz, 9, 128, [6.4, 14.5, 24.7, 42.3, 83.1, 160.5, 433.7]),
    row(Dcz, 12, 128, [6.4, 17.1, 28.4, 69.6, 146.9, 355.6, 1148.8]),
    row(
        Dcb,
        4,
        128,
        [339.1, 344.8, 359.1, 377.1, 418.1, 490.6, 709.8],
    ),
    row(
        Dcb,
        5,
        128,
        [340.6, 346.6, 362.7, 372.9, 420.4, 491.1, 710.8],
    ),
    row(
        Dcb,
        6,
        128,
        [370.4, 375.9, 394.4, 416.9, 458.2, 544.5, 784.2],
    ),
];

/// The plain coding and level a dictionary coding's budget is relative to: `zstd` 3 for
/// `dcz` (the usual default), `br` at the same quality for `dcb`.
pub(super) fn baseline(coding: ContentCoding, level: i32) -> (ContentCoding, i32) {
    match coding {
        Dcz => (Zstd, 3),
        Dcb => (Br, level),
        plain => (plain, level),
    }
}

/// The modelled time of `coding` at `level` with a dictionary of `dict_len` bytes over
/// responses of `sizes` bytes, as a multiple of its baseline's; infinite for a coding and
/// level the table lacks.
pub(super) fn cost(coding: ContentCoding, level: i32, dict_len: usize, sizes: &[usize]) -> f64 {
    let (plain, plain_level) = baseline(coding, level);
    match (
        lookup(coding, level, dict_len),
        lookup(plain, plain_level, 0),
    ) {
        (Some(row), Some(base)) => {
            let sum = |r: &Row| sizes.iter().map(|&n| r.at(n as f64)).sum::<f64>();
            sum(&row) / sum(&base)
        }
        _ => f64::INFINITY,
    }
}

impl Row {
    /// Microseconds for a response of `n` bytes: interpolated between the two sizes around
    /// it, extended along the first or last segment outside them (never below a tenth of
    /// the smallest size's time).
    fn at(&self, n: f64) -> f64 {
        let i = SIZES[1..SIZES.len() - 1]
            .iter()
            .take_while(|&&s| s < n)
            .count();
        let (x0, x1, y0, y1) = (SIZES[i], SIZES[i + 1], self.micros[i], self.micros[i + 1]);
        (y0 + (y1 - y0) * (n - x0) / (x1 - x0)).max(self.micros[0] / 10.0)
    }
}

/// The row of the smallest class that holds `dict_len` bytes, or the largest class.
fn lookup(coding: ContentCoding, level: i32, dict_len: usize) -> Option<Row> {
    let mut rows: Vec<Row> = ROWS
        .iter()
        .filter(|r| r.coding == coding && r.level == level)
        .copied()
        .collect();
    rows.sort_by_key(|r| r.dict_kib);
    rows.iter()
        .find(|r| r.dict_kib * 1024 >= dict_len)
        .or(rows.last())
        .copied()
}
