//! Embedders: what turns text into vectors for dense search, behind one trait.
//!
//! The trait and the vector helpers are part of the read surface (a server embeds queries).
//! The implementations live in the `groundkit-embed` crate, so nothing here computes a vector.
//! Only the operator's configuration chooses an embedder; no request can.

use crate::model::EmbeddingIdentity;
use groundkit_core::Error;

/// What a text is embedded as: some models prefix queries and documents with different prompts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A search query.
    Query,
    /// A chunk of a document being indexed.
    Document,
}

/// Turns texts into vectors.
pub trait Embedder: Send + Sync {
    /// What produces this embedder's vectors; recorded with every generation it embeds.
    fn identity(&self) -> &EmbeddingIdentity;

    /// One vector of `identity().dimension` values per text, in order.
    fn embed(&self, texts: &[&str], role: Role) -> Result<Vec<Vec<f32>>, Error>;

    /// Whether the embedder can embed now: an embedder whose service has not answered yet
    /// says why, as an `embedding_error`, and its identity is not yet its own. Searches check
    /// this before comparing identities.
    fn ready(&self) -> Result<(), Error> {
        Ok(())
    }
}

/// Scales `vector` to unit length (a zero vector stays zero). Finite values too large for
/// their squares to sum in `f32` are scaled through `f64`.
pub fn normalize(vector: &mut [f32]) {
    let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
    if norm.is_finite() {
        if norm > 0.0 {
            for v in vector.iter_mut() {
                *v /= norm;
            }
        }
        return;
    }
    let wide = vector
        .iter()
        .map(|&v| f64::from(v) * f64::from(v))
        .sum::<f64>()
        .sqrt();
    for v in vector.iter_mut() {
        *v = (f64::from(*v) / wide) as f32;
    }
}

/// `vector` scaled to unit length, or an embedding error if a value in it is not a finite
/// number (an endpoint's `1e39` is infinite as `f32`): such a vector would make every score
/// it meets `NaN` or infinite, which no caller can use and no JSON number can carry. Every
/// vector an [`Embedder`] returns, for a query or a chunk, passes through here.
pub fn unit_vector(mut vector: Vec<f32>) -> Result<Vec<f32>, Error> {
    if vector.iter().any(|v| !v.is_finite()) {
        return Err(Error::embedding(
            "the embedder returned a vector with a value that is not a finite number",
            None,
        ));
    }
    normalize(&mut vector);
    Ok(vector)
}

/// The dot product of two vectors of equal length (the cosine similarity of unit vectors).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Sixteen independent sums, so the loop vectorises (four 128-bit lanes in flight) without
    // reassociating a single sum.
    let mut acc = [0.0f32; 16];
    let (a16, a_rest) = a.split_at(a.len() - a.len() % 16);
    let (b16, b_rest) = b.split_at(a16.len().min(b.len()));
    for (x, y) in a16.chunks_exact(16).zip(b16.chunks_exact(16)) {
        for i in 0..16 {
            acc[i] += x[i] * y[i];
        }
    }
    let tail: f32 = a_rest.iter().zip(b_rest).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_matches_the_plain_sum_for_every_tail_length() {
        for len in [0usize, 1, 7, 8, 9, 17, 384] {
            let a: Vec<f32> = (0..len).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..len).map(|i| (i as f32 * 0.11).cos()).collect();
            let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - plain).abs() < 1e-4, "len {len}");
        }
    }

    #[test]
    fn normalized_vectors_have_unit_length_and_zero_stays_zero() {
        let mut v = vec![3.0, 4.0];
        normalize(&mut v);
        assert_eq!(v, vec![0.6, 0.8]);
        let mut z = vec![0.0; 3];
        normalize(&mut z);
        assert_eq!(z, vec![0.0; 3]);
    }

    #[test]
    fn values_whose_squares_overflow_f32_still_normalize_to_unit_length() {
        let v = unit_vector(vec![3.0e30, 4.0e30]).expect("finite");
        assert!(
            (v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6,
            "{v:?}"
        );
    }

    #[test]
    fn a_vector_with_an_infinite_or_nan_value_is_an_embedding_error() {
        for bad in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
            let err = unit_vector(vec![0.5, bad, 0.5]).expect_err("not finite");
            assert_eq!(err.kind(), "embedding_error", "{bad}");
        }
    }
}
