//! The one matrix product the BERT forward pass needs, as a safe function over slices.
//!
//! The `gemm` crate takes raw pointers and strides; this module is the only place that calls it,
//! and it checks, before the call, that every element the strides can reach lies inside its
//! slice. That check is what makes the `unsafe` block sound.
#![allow(unsafe_code)]

/// A row-major view of a matrix inside a slice: element `(r, c)` is at `offset + r * row_stride
/// + c * col_stride`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct View {
    pub(crate) offset: usize,
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    pub(crate) row_stride: usize,
    pub(crate) col_stride: usize,
}

impl View {
    /// A dense row-major `rows x cols` matrix at the start of its slice.
    pub(crate) fn dense(rows: usize, cols: usize) -> Self {
        Self {
            offset: 0,
            rows,
            cols,
            row_stride: cols,
            col_stride: 1,
        }
    }

    /// The transpose of this view (no data moves).
    pub(crate) fn t(self) -> Self {
        Self {
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
            ..self
        }
    }

    /// Whether every element lies inside a slice of `len` elements.
    fn fits(&self, len: usize) -> bool {
        if self.rows == 0 || self.cols == 0 {
            return self.offset <= len;
        }
        let last = (self.rows - 1)
            .checked_mul(self.row_stride)
            .and_then(|r| r.checked_add((self.cols - 1).checked_mul(self.col_stride)?))
            .and_then(|x| x.checked_add(self.offset));
        last.is_some_and(|last| last < len)
    }
}

/// `dst = lhs · rhs` (or `dst += lhs · rhs` when `accumulate`), scaled by `scale`, on `threads`
/// threads.
///
/// # Panics
///
/// When the shapes disagree or a view reaches outside its slice: a bug in the caller, never a
/// property of input data.
#[allow(clippy::too_many_arguments)]
pub(crate) fn matmul(
    dst: &mut [f32],
    d: View,
    lhs: &[f32],
    l: View,
    rhs: &[f32],
    r: View,
    scale: f32,
    accumulate: bool,
    threads: usize,
) {
    assert_eq!(l.cols, r.rows, "inner dimensions differ");
    assert_eq!(d.rows, l.rows, "row counts differ");
    assert_eq!(d.cols, r.cols, "column counts differ");
    assert!(d.fits(dst.len()) && l.fits(lhs.len()) && r.fits(rhs.len()));
    if d.rows == 0 || d.cols == 0 {
        return;
    }
    let parallelism = if threads > 1 {
        gemm::Parallelism::Rayon(threads)
    } else {
        gemm::Parallelism::None
    };
    let stride = |s: usize| s as isize;
    // SAFETY: the asserts above prove that every element `gemm` reads through `lhs`/`rhs` and
    // writes through `dst` lies inside the corresponding slice; `dst` is borrowed mutably, so it
    // aliases neither input.
    unsafe {
        gemm::gemm(
            d.rows,
            d.cols,
            l.cols,
            dst.as_mut_ptr().add(d.offset),
            stride(d.col_stride),
            stride(d.row_stride),
            accumulate,
            lhs.as_ptr().add(l.offset),
            stride(l.col_stride),
            stride(l.row_stride),
            rhs.as_ptr().add(r.offset),
            stride(r.col_stride),
            stride(r.row_stride),
            1.0,
            scale,
            false,
            false,
            false,
            parallelism,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_match_the_definition_for_strided_and_transposed_views() {
        // lhs 2x3, rhs given as its 2x3 transpose.
        let lhs = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let rhs_t = [7.0, 9.0, 11.0, 8.0, 10.0, 12.0];
        let mut dst = [1.0f32; 4];
        matmul(
            &mut dst,
            View::dense(2, 2),
            &lhs,
            View::dense(2, 3),
            &rhs_t,
            View::dense(2, 3).t(),
            1.0,
            false,
            1,
        );
        assert_eq!(dst, [58.0, 64.0, 139.0, 154.0]);
        matmul(
            &mut dst,
            View::dense(2, 2),
            &lhs,
            View::dense(2, 3),
            &rhs_t,
            View::dense(2, 3).t(),
            0.5,
            true,
            2,
        );
        assert_eq!(dst, [87.0, 96.0, 208.5, 231.0]);
    }

    #[test]
    #[should_panic]
    fn a_view_past_its_slice_is_refused() {
        let mut dst = [0.0f32; 4];
        matmul(
            &mut dst,
            View::dense(2, 2),
            &[0.0; 5],
            View::dense(2, 3),
            &[0.0; 6],
            View::dense(3, 2),
            1.0,
            false,
            1,
        );
    }
}
