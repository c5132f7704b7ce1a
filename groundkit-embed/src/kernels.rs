//! The element-wise and row-wise kernels of the encoder: bias, layer normalisation, softmax and
//! the exact (erf) GELU. `exp` and `erf` are branch-free polynomial approximations written so
//! the compiler vectorises their loops (plain multiply-add, not `mul_add`, which without FMA
//! in the target is a library call); their accuracy is checked against reference values in
//! the tests below (relative error under 1e-6).

use rayon::prelude::*;

/// Rows per parallel task for row-wise kernels.
const ROWS_PER_TASK: usize = 64;

/// Adds `bias` to every row of `x` (rows of `bias.len()` values).
pub(crate) fn add_bias(x: &mut [f32], bias: &[f32]) {
    for row in x.chunks_exact_mut(bias.len()) {
        for (v, b) in row.iter_mut().zip(bias) {
            *v += b;
        }
    }
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
    let norm_row = |row: &mut [f32]| {
        let n = row.len() as f32;
        let mean = row.iter().sum::<f32>() / n;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, g), b) in row.iter_mut().zip(gamma).zip(beta) {
            *v = (*v - mean) * inv * g + b;
        }
    };
    if threads > 1 && x.len() > width * ROWS_PER_TASK {
        x.par_chunks_mut(width * ROWS_PER_TASK)
            .for_each(|block| block.chunks_exact_mut(width).for_each(norm_row));
    } else {
        x.chunks_exact_mut(width).for_each(norm_row);
    }
}

/// Softmax of every row of `x` (rows of `width` values).
pub(crate) fn softmax_rows(x: &mut [f32], width: usize) {
    for row in x.chunks_exact_mut(width) {
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        for v in row.iter_mut() {
            *v = exp(*v - max);
        }
        let inv = 1.0 / row.iter().sum::<f32>();
        for v in row.iter_mut() {
            *v *= inv;
        }
    }
}

/// `x · Φ(x)`, the exact GELU, on every element.
pub(crate) fn gelu_in_place(x: &mut [f32], threads: usize) {
    let apply = |block: &mut [f32]| {
        for v in block.iter_mut() {
            *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2));
        }
    };
    if threads > 1 && x.len() > 1 << 16 {
        x.par_chunks_mut(1 << 14).for_each(apply);
    } else {
        apply(x);
    }
}

/// `eˣ` for `x ≤ 0` down to the smallest normal result (softmax inputs after the maximum is
/// subtracted); larger inputs are clamped to 88.
#[inline(always)]
pub(crate) fn exp(x: f32) -> f32 {
    let x = x.clamp(-87.3, 88.0);
    // eˣ = 2ⁿ · eʳ with n = round(x / ln 2) and |r| ≤ ln 2 / 2.
    // Rounds to nearest by adding and removing 1.5 · 2²³ (no `round`, which is a library call
    // without SSE4.1).
    const ROUND: f32 = 12_582_912.0;
    let n = (x * std::f32::consts::LOG2_E + ROUND) - ROUND;
    let r = x - n * 0.693_359_4 + n * 2.121_944_4e-4;
    // Minimax polynomial for eʳ on [-ln2/2, ln2/2].
    let p = 1.987_569_1e-4_f32;
    let p = p * r + 1.398_2e-3;
    let p = p * r + 8.333_452e-3;
    let p = p * r + 4.166_579_6e-2;
    let p = p * r + 0.166_666_66;
    let p = p * r + 0.5;
    let p = p * (r * r) + r + 1.0;
    let scale = f32::from_bits(((n as i32 + 127) as u32) << 23);
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
