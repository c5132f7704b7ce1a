//! The encoder's dense layers, `y = x · Wᵀ + b`, and the two ways one is computed.
//!
//! Many rows (a batch of documents) go through `gemm`, which repacks the weights on every call
//! and amortises that over the rows. A query's few rows cannot amortise anything, and `gemm`
//! reading the weights in place still gathered 16 values from every input's row. So up to
//! [`FEW_ROWS`] rows a layer reads a second copy of its weights, in panels of [`PANEL`] outputs
//! whose values for one input are adjacent, and [`panel_product`] streams each panel front to
//! back. The copy costs the layer weights' size again in memory (42 MB for all-MiniLM-L6-v2);
//! one query's p50 went from 12.8 to 9.1 ms, its p99 from 21.8 to 17.4 ms (bench/README.md).

use multiversion::multiversion;
use multiversion::target::selected_target;

use crate::matmul::{View, matmul};

/// Up to this many rows, a layer is computed from its panels; above, by `gemm`. A sixth of
/// SciFact's test queries are over 32 tokens (the longest is 64): at 64 rather than 32, one-query
/// p99 fell from 26.6 to 18.5 ms (bench/README.md).
const FEW_ROWS: usize = 64;

/// Outputs per panel: one AVX-512 register, two AVX2 registers, one 64-byte cache line.
const PANEL: usize = 16;

/// Rows a panel is multiplied with at once: with [`PANEL`] outputs each, their sums fill twelve
/// of AVX2's sixteen registers.
const GROUP: usize = 6;

/// `f32`s per 64-byte cache line.
const LINE_FLOATS: usize = 16;

/// A dense layer `y = x · Wᵀ + b`, from a checkpoint's `W` (`[outputs, inputs]`, row-major).
pub(crate) struct Linear {
    /// `Wᵀ`: `inputs` rows of `outputs` values, for `gemm` (which repacks it on every call).
    weight_t: Vec<f32>,
    /// `W` in panels: panel `p` holds, for each input `i`, the weights of outputs
    /// `16p..16p + 16` (zeros past the last output), starting at `panels[panels_at]`, on a
    /// cache-line boundary (large allocations start 16 bytes past one), so each input's 16
    /// weights are one line.
    panels: Vec<f32>,
    panels_at: usize,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

/// A zeroed buffer of `len` values with room to start them on a cache-line boundary, and the
/// index where they start.
fn line_aligned(len: usize) -> (Vec<f32>, usize) {
    let buffer = vec![0.0f32; len + LINE_FLOATS];
    let at = buffer
        .as_ptr()
        .align_offset(LINE_FLOATS * 4)
        .min(LINE_FLOATS);
    (buffer, at)
}

impl Linear {
    pub(crate) fn new(weight: &[f32], bias: Vec<f32>, inputs: usize, outputs: usize) -> Self {
        let mut weight_t = vec![0.0f32; weight.len()];
        let (mut panels, panels_at) = line_aligned(outputs.div_ceil(PANEL) * PANEL * inputs);
        for (o, row) in weight.chunks_exact(inputs).enumerate() {
            let panel = panels_at + (o / PANEL) * PANEL * inputs;
            for (i, w) in row.iter().enumerate() {
                weight_t[i * outputs + o] = *w;
                panels[panel + i * PANEL + o % PANEL] = *w;
            }
        }
        Self {
            weight_t,
            panels,
            panels_at,
            bias,
            inputs,
            outputs,
        }
    }

    /// `out[t] = x[t] · Wᵀ + b` for `rows` rows.
    pub(crate) fn apply(&self, x: &[f32], rows: usize, out: &mut Vec<f32>, threads: usize) {
        if rows <= FEW_ROWS {
            self.apply_few(x, rows, out);
            return;
        }
        // `out` starts as the bias and the product is accumulated onto it (one pass over `out`
        // instead of clearing it and adding the bias).
        out.clear();
        out.reserve(rows * self.outputs);
        for _ in 0..rows {
            out.extend_from_slice(&self.bias);
        }
        let weights = View::dense(self.inputs, self.outputs);
        let (dst, input) = (
            View::dense(rows, self.outputs),
            View::dense(rows, self.inputs),
        );
        matmul(
            out,
            dst,
            x,
            input,
            &self.weight_t,
            weights,
            1.0,
            true,
            threads,
        );
    }

    /// [`Linear::apply`] from the panels, on the calling thread (one query gains nothing from a
    /// second one: bench/README.md).
    fn apply_few(&self, x: &[f32], rows: usize, out: &mut Vec<f32>) {
        let (inputs, outputs) = (self.inputs, self.outputs);
        // The rows in groups of GROUP, each input's values of a group adjacent (zeros past the
        // last row).
        let mut grouped = vec![0.0f32; rows.div_ceil(GROUP) * GROUP * inputs];
        for (g, group) in grouped.chunks_exact_mut(GROUP * inputs).enumerate() {
            for (t, row) in x
                .chunks_exact(inputs)
                .skip(g * GROUP)
                .take(GROUP)
                .enumerate()
            {
                for (i, v) in row.iter().enumerate() {
                    group[i * GROUP + t] = *v;
                }
            }
        }
        out.clear();
        out.resize(rows * outputs, 0.0);
        let panels = &self.panels[self.panels_at..][..outputs.div_ceil(PANEL) * PANEL * inputs];
        for (p, panel) in panels.chunks_exact(PANEL * inputs).enumerate() {
            let first = p * PANEL;
            for (g, group) in grouped.chunks_exact(GROUP * inputs).enumerate() {
                let sums = panel_product(panel, group);
                for (t, sum) in sums.iter().enumerate().take(rows - g * GROUP) {
                    let row = &mut out[(g * GROUP + t) * outputs..][..outputs];
                    for ((y, s), b) in row[first..].iter_mut().zip(sum).zip(&self.bias[first..]) {
                        *y = s + b;
                    }
                }
            }
        }
    }
}

/// The sums `Σᵢ panel[i][j] · group[i][t]` for the [`PANEL`] outputs `j` of one panel and the
/// [`GROUP`] rows `t` of one group. Fused multiply-adds where the CPU has them (`mul_add`
/// without them is a library call).
#[multiversion(targets("x86_64+avx512f+avx512vl", "x86_64+avx2+fma"))]
fn panel_product(panel: &[f32], group: &[f32]) -> [[f32; PANEL]; GROUP] {
    // Evaluated at compile time for each clone (at run time it is a string search).
    const FUSED: bool = selected_target!().supports_feature_str("fma");
    let mut sums = [[0.0f32; PANEL]; GROUP];
    let (panel, group) = (panel.as_chunks::<PANEL>().0, group.as_chunks::<GROUP>().0);
    for (w, v) in panel.iter().zip(group) {
        for (sum, v) in sums.iter_mut().zip(v) {
            for (s, w) in sum.iter_mut().zip(w) {
                *s = if FUSED { w.mul_add(*v, *s) } else { *s + w * v };
            }
        }
    }
    sums
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `x · Wᵀ + b` by the definition, in `f64`.
    fn reference(weight: &[f32], bias: &[f32], x: &[f32], inputs: usize) -> Vec<f32> {
        x.chunks_exact(inputs)
            .flat_map(|row| {
                weight.chunks_exact(inputs).zip(bias).map(move |(w, b)| {
                    let dot: f64 = w
                        .iter()
                        .zip(row)
                        .map(|(a, c)| f64::from(*a) * f64::from(*c))
                        .sum();
                    (dot + f64::from(*b)) as f32
                })
            })
            .collect()
    }

    #[test]
    fn both_ways_match_the_definition_for_every_row_count_and_a_partial_last_panel() {
        let value = |k: usize, salt: usize| ((k * 7919 + salt) % 23) as f32 / 23.0 - 0.5;
        for (inputs, outputs) in [(24, 37), (40, 2), (16, 48)] {
            let weight: Vec<f32> = (0..inputs * outputs).map(|k| value(k, 1)).collect();
            let bias: Vec<f32> = (0..outputs).map(|k| value(k, 2)).collect();
            let layer = Linear::new(&weight, bias.clone(), inputs, outputs);
            for rows in [1, 5, 6, 7, 13, FEW_ROWS, FEW_ROWS + 1, 70] {
                let x: Vec<f32> = (0..rows * inputs).map(|k| value(k, 3)).collect();
                let expected = reference(&weight, &bias, &x, inputs);
                let mut out = vec![9.0; 3];
                layer.apply(&x, rows, &mut out, 2);
                assert_eq!(out.len(), rows * outputs);
                for (k, (got, want)) in out.iter().zip(&expected).enumerate() {
                    assert!(
                        (got - want).abs() < 1e-4,
                        "{inputs}x{outputs}, {rows} rows, element {k}: {got} against {want}"
                    );
                }
            }
        }
    }
}
