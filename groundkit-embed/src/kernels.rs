//! The element-wise and row-wise kernels of the encoder: layer normalisation, softmax and
//! the exact (erf) GELU.
//!
//! Each kernel is plain Rust written so the compiler vectorises it: reductions keep [`LANES`]
//! partial sums (a single running sum is a dependency chain no compiler may reorder), and `exp`
//! and `erf` are branch-free polynomials with no float-to-integer conversion (which vectorises
//! badly: Rust's `as` saturates). `multiversion` compiles each kernel again for AVX-512 and for
//! AVX2 with FMA and picks the best the CPU has at run time, so one binary runs everywhere and
//! uses wide vectors where they exist. The polynomials' accuracy is checked against reference
//! values in the tests below (relative error under 1e-6).

use multiversion::multiversion;
use rayon::prelude::*;

/// Rows per parallel task for row-wise kernels.
const ROWS_PER_TASK: usize = 64;

/// Partial sums per reduction: one AVX-512 register of `f32`.
const LANES: usize = 16;

/// `Σ f(v)` over `x`, in [`LANES`] partial sums.
#[inline(always)]
fn sum_by(x: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    let mut acc = [0.0f32; LANES];
    let mut chunks = x.chunks_exact(LANES);
    for chunk in &mut chunks {
        for (a, v) in acc.iter_mut().zip(chunk) {
            *a += f(*v);
        }
    }
    let tail: f32 = chunks.remainder().iter().map(|v| f(*v)).sum();
    acc.iter().sum::<f32>() + tail
}

/// The largest value of `x` (`-∞` when empty), in [`LANES`] partial maxima.
#[inline(always)]
fn max_of(x: &[f32]) -> f32 {
    let mut acc = [f32::NEG_INFINITY; LANES];
    let mut chunks = x.chunks_exact(LANES);
    for chunk in &mut chunks {
        for (a, v) in acc.iter_mut().zip(chunk) {
            *a = if *v > *a { *v } else { *a };
        }
    }
    chunks
        .remainder()
        .iter()
        .chain(&acc)
        .fold(f32::NEG_INFINITY, |m, v| if *v > m { *v } else { m })
}

/// Layer normalisation of every row of `x` (rows of `width` values).
pub(crate) fn layer_norm_in_place(
    x: &mut [f32],
    width: usize,
    gamma: &[f32],
    beta: &[f32],
    eps: f32,
    threads: usize,
) {
    let norm_rows = |block: &mut [f32]| layer_norm_rows(block, width, gamma, beta, eps);
    if threads > 1 && x.len() > width * ROWS_PER_TASK {
        x.par_chunks_mut(width * ROWS_PER_TASK).for_each(norm_rows);
    } else {
        norm_rows(x);
    }
}

#[multiversion(targets("x86_64+avx512f+avx512vl", "x86_64+avx2+fma"))]
fn layer_norm_rows(x: &mut [f32], width: usize, gamma: &[f32], beta: &[f32], eps: f32) {
    for row in x.chunks_exact_mut(width) {
        let n = row.len() as f32;
        let mean = sum_by(row, |v| v) / n;
        let var = sum_by(row, |v| (v - mean) * (v - mean)) / n;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, g), b) in row.iter_mut().zip(gamma).zip(beta) {
            *v = (*v - mean) * inv * g + b;
        }
    }
}

/// Softmax of every row of `x` (rows of `width` values).
#[multiversion(targets("x86_64+avx512f+avx512vl", "x86_64+avx2+fma"))]
pub(crate) fn softmax_rows(x: &mut [f32], width: usize) {
    for row in x.chunks_exact_mut(width) {
        let max = max_of(row);
        let mut acc = [0.0f32; LANES];
        let mut chunks = row.chunks_exact_mut(LANES);
        for chunk in &mut chunks {
            for (a, v) in acc.iter_mut().zip(chunk) {
                *v = exp(*v - max);
                *a += *v;
            }
        }
        let mut sum = acc.iter().sum::<f32>();
        for v in chunks.into_remainder() {
            *v = exp(*v - max);
            sum += *v;
        }
        let inv = 1.0 / sum;
        for v in row.iter_mut() {
            *v *= inv;
        }
    }
}

/// `x · Φ(x)`, the exact GELU, on every element.
pub(crate) fn gelu_in_place(x: &mut [f32], threads: usize) {
    if threads > 1 && x.len() > 1 << 16 {
        x.par_chunks_mut(1 << 14).for_each(gelu);
    } else {
        gelu(x);
    }
}

#[multiversion(targets("x86_64+avx512f+avx512vl", "x86_64+avx2+fma"))]
fn gelu(x: &mut [f32]) {
    for v in x.iter_mut() {
        *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2));
    }
}

/// `eˣ` for `x ≤ 0` down to the smallest normal result (softmax inputs after the maximum is
/// subtracted); larger inputs are clamped to 88.
#[inline(always)]
pub(crate) fn exp(x: f32) -> f32 {
    let x = x.clamp(-87.3, 88.0);
    // eˣ = 2ⁿ · eʳ with n = round(x / ln 2) and |r| ≤ ln 2 / 2. Adding 1.5 · 2²³ rounds to the
    // nearest integer and leaves n in the low bits of the sum, so n needs no float-to-integer
    // conversion.
    const ROUND: f32 = 12_582_912.0;
    let shifted = x * std::f32::consts::LOG2_E + ROUND;
    let n = shifted - ROUND;
    let r = x - n * 0.693_359_4 + n * 2.121_944_4e-4;
    // Minimax polynomial for eʳ on [-ln2/2, ln2/2].
    let p = 1.987_569_1e-4_f32;
    let p = p * r + 1.398_2e-3;
    let p = p * r + 8.333_452e-3;
    let p = p * r + 4.166_579_6e-2;
    let p = p * r + 0.166_666_66;
    let p = p * r + 0.5;
    let p = p * (r * r) + r + 1.0;
    // 2ⁿ: n + 127 in the exponent field (n is within [-126, 127] after the clamp).
    let n_bits = shifted.to_bits().wrapping_sub(ROUND.to_bits());
    let scale = f32::from_bits(n_bits.wrapping_add(127) << 23);
    p * scale
}

/// The error function, as a rational function of `x` on [-4, 4] (|erf| = 1 beyond, in f32).
#[inline(always)]
pub(crate) fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let p = -2.726_142_3e-10_f32;
    let p = p * x2 + 2.770_681_4e-8;
    let p = p * x2 + -2.101_024e-6;
    let p = p * x2 + -5.692_506_4e-5;
    let p = p * x2 + -7.349_906_3e-4;
    let p = p * x2 + -2.954_6e-3;
    let p = p * x2 + -1.609_603_3e-2;
    let q = -1.456_607_2e-5_f32;
    let q = q * x2 + -2.133_740_6e-4;
    let q = q * x2 + -1.682_827e-3;
    let q = q * x2 + -7.373_329e-3;
    let q = q * x2 + -1.426_474e-2;
    x * p / q
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values from CPython's `math.erf` and `math.exp` (double precision).
    const ERF: [(f32, f64); 10] = [
        (0.0, 0.0),
        (0.1, 0.112_462_916_018_284_9),
        (0.5, 0.520_499_877_813_046_5),
        (1.0, 0.842_700_792_949_714_9),
        (1.5, 0.966_105_146_475_310_8),
        (2.0, 0.995_322_265_018_952_7),
        (3.0, 0.999_977_909_503_001_4),
        (3.9, 0.999_999_965_207_751_4),
        (-0.7, -0.677_801_193_837_418_4),
        (-2.5, -0.999_593_047_982_555),
    ];
    const EXP: [(f32, f64); 6] = [
        (-10.0, 4.539_992_976_248_485_4e-5),
        (-1.0, 0.367_879_441_171_442_33),
        (0.0, 1.0),
        (0.5, 1.648_721_270_700_128_2),
        (10.0, 22_026.465_794_806_718),
        (-87.0, 1.645_811_431_082_273_7e-38),
    ];

    #[test]
    fn erf_is_accurate_to_single_precision() {
        for (x, want) in ERF {
            let got = f64::from(erf(x));
            assert!(
                (got - want).abs() <= 1e-6 * want.abs().max(1e-3),
                "erf({x}) = {got}, want {want}"
            );
        }
    }

    #[test]
    fn exp_is_accurate_to_single_precision() {
        for (x, want) in EXP {
            let got = f64::from(exp(x));
            assert!(
                (got - want).abs() <= 1e-6 * want,
                "exp({x}) = {got}, want {want}"
            );
        }
    }

    #[test]
    fn softmax_rows_sum_to_one_and_keep_order() {
        let mut x = vec![1.0, 2.0, 3.0, -5.0, -5.0, -5.0];
        softmax_rows(&mut x, 3);
        assert!((x[..3].iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(x[0] < x[1] && x[1] < x[2]);
        assert!(x[3..].iter().all(|v| (v - 1.0 / 3.0).abs() < 1e-6));
    }
}
