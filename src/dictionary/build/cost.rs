//! The CPU cost model the builder's budgets are checked against.
//!
//! Each row is one coding at one level, with a dictionary of up to `dict_kib` KiB (0 for
//! the plain codings): the CPU time to compress one response, in microseconds, at each of
//! the response sizes in [`SIZES`], measured once on the project's machine (`cargo run
//! --release -p tower-gzip-bench --bin dict_cost_model` measures them again and prints this table). A
//! response's time is interpolated between the two sizes around its own; a cost is the sum
//! over the held-out responses divided by the same sum for the plain coding. The machine's
//! speed cancels out, and the same samples always give the same costs: the build's choice
//! never depends on timing noise. A dictionary longer than the largest class of its row
//! takes that class's times.

use crate::ContentCoding;

/// The mean response sizes (bytes) of the calibration's groups of responses.
pub(super) const SIZES: [f64; 7] = [500.0, 914.0, 1480.0, 2859.0, 5531.0, 11_688.0, 30_108.0];

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

/// The calibration (see the module's comment for how it was measured): one run of
/// `dict_cost_model` on 2026-12-03, after `dcb` moved to Google's C brotli.
const ROWS: &[Row] = &[
    row(Zstd, 3, 0, [3.9, 4.4, 7.0, 10.3, 14.5, 22.1, 42.7]),
    row(Br, 4, 0, [21.7, 26.9, 40.2, 58.6, 87.3, 126.6, 233.1]),
    row(Br, 5, 0, [24.2, 31.2, 43.3, 68.8, 99.3, 167.5, 327.9]),
    row(Br, 6, 0, [25.4, 33.2, 47.0, 77.0, 113.1, 178.3, 372.3]),
    row(Dcz, 3, 16, [4.7, 5.4, 9.3, 12.6, 17.8, 25.8, 65.9]),
    row(Dcz, 4, 16, [4.8, 5.4, 9.0, 12.3, 17.2, 26.1, 65.0]),
    row(Dcz, 5, 16, [6.8, 8.8, 14.8, 23.3, 36.1, 61.8, 131.8]),
    row(Dcz, 6, 16, [8.4, 11.0, 18.5, 31.2, 50.3, 84.2, 188.5]),
    row(Dcz, 9, 16, [13.6, 17.5, 32.3, 50.5, 79.9, 129.5, 293.1]),
    row(Dcz, 12, 16, [14.4, 19.9, 41.3, 91.4, 167.9, 304.4, 829.4]),
    row(Dcb, 4, 16, [26.5, 34.4, 51.4, 79.1, 120.2, 190.1, 388.8]),
    row(Dcb, 5, 16, [26.6, 34.5, 52.3, 80.0, 120.8, 194.8, 383.6]),
    row(Dcb, 6, 16, [25.9, 34.0, 52.8, 81.8, 118.9, 189.4, 388.3]),
    row(Dcz, 3, 32, [4.9, 5.6, 9.5, 12.6, 17.6, 26.4, 66.7]),
    row(Dcz, 4, 32, [5.0, 5.7, 9.2, 12.4, 17.7, 26.4, 79.5]),
    row(Dcz, 5, 32, [6.6, 8.9, 14.5, 22.1, 34.8, 59.6, 143.9]),
    row(Dcz, 6, 32, [8.6, 11.5, 19.3, 32.1, 52.3, 88.3, 201.4]),
    row(Dcz, 9, 32, [15.2, 19.6, 35.2, 54.4, 85.4, 137.3, 312.3]),
    row(Dcz, 12, 32, [15.0, 21.9, 43.6, 93.8, 170.1, 335.4, 872.9]),
    row(Dcb, 4, 32, [27.5, 36.7, 55.3, 83.2, 120.5, 191.4, 383.2]),
    row(Dcb, 5, 32, [30.1, 37.7, 57.0, 85.3, 123.6, 191.8, 396.9]),
    row(Dcb, 6, 32, [28.4, 37.3, 57.1, 86.6, 126.3, 197.3, 399.3]),
    row(Dcz, 3, 64, [1.8, 5.5, 7.2, 11.1, 15.1, 23.4, 68.0]),
    row(Dcz, 4, 64, [1.9, 6.0, 7.0, 11.3, 15.3, 24.2, 100.0]),
    row(Dcz, 5, 64, [3.2, 9.2, 11.4, 20.8, 33.9, 60.3, 143.7]),
    row(Dcz, 6, 64, [4.6, 10.9, 15.4, 26.7, 47.3, 82.2, 196.2]),
    row(Dcz, 9, 64, [7.0, 18.4, 26.4, 45.1, 75.7, 134.5, 302.3]),
    row(Dcz, 12, 64, [7.3, 21.1, 35.5, 80.1, 149.3, 305.6, 948.7]),
    row(Dcb, 4, 64, [18.3, 35.6, 46.6, 75.6, 111.7, 175.2, 374.7]),
    row(Dcb, 5, 64, [17.8, 34.6, 44.6, 72.9, 106.2, 168.5, 393.5]),
    row(Dcb, 6, 64, [17.8, 34.9, 44.4, 74.5, 108.1, 173.7, 376.3]),
    row(Dcz, 3, 128, [1.3, 4.0, 4.7, 8.6, 13.1, 22.4, 67.5]),
    row(Dcz, 4, 128, [2.5, 6.5, 9.1, 16.3, 29.7, 53.8, 131.8]),
    row(Dcz, 5, 128, [2.8, 7.4, 11.2, 19.5, 37.5, 66.0, 180.8]),
    row(Dcz, 6, 128, [3.8, 9.0, 12.8, 22.5, 42.7, 79.4, 256.1]),
    row(Dcz, 9, 128, [6.4, 14.4, 23.8, 40.4, 83.9, 153.4, 413.3]),
    row(Dcz, 12, 128, [5.9, 15.8, 27.8, 65.8, 149.0, 333.2, 1088.8]),
    row(Dcb, 4, 128, [15.5, 25.1, 35.9, 57.9, 106.0, 185.5, 417.2]),
    row(Dcb, 5, 128, [15.7, 24.7, 36.4, 56.4, 100.2, 179.1, 379.7]),
    row(Dcb, 6, 128, [14.5, 23.8, 35.1, 56.7, 98.0, 180.5, 391.0]),
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
