//! Running the encoder over many sequences: passes bounded in tokens (which bounds the
//! activations' memory), and the threads split either by share of a pass or inside each product.

use rayon::prelude::*;

use crate::bert::{Bert, Sequence};

/// Tokens per forward pass: bounds the activations' memory (about 30 MiB for a 384-wide model).
const TOKENS_PER_PASS: usize = 4096;

/// A pass of fewer tokens runs on one thread: for SciFact's test queries, splitting each product
/// between 2 threads was not faster than 1 (p50 18-20 ms against 15-18 ms per query, runs on a
/// busy machine).
const SPLIT_PRODUCTS_FROM_TOKENS: usize = 256;

/// Runs `bert` over `sequences` on `threads` threads and gives each sequence's last hidden states
/// (`len` rows of the hidden size, from row `start` of `states`) to `read`, in order.
///
/// With several threads and enough sequences in a pass, each thread runs the encoder on its own
/// share, one thread per matrix product: that scales better than splitting every product
/// between threads. A pass of one or a few sequences splits the products instead, unless it is
/// too short to gain from it.
pub(crate) fn run<T: Send>(
    bert: &Bert,
    sequences: &[Sequence<'_>],
    threads: usize,
    read: &(dyn Fn(&[f32], usize, usize) -> T + Sync),
) -> Vec<T> {
    let mut out = Vec::with_capacity(sequences.len());
    for pass in passes(sequences, TOKENS_PER_PASS) {
        let total: usize = pass.iter().map(|s| s.ids.len()).sum();
        if threads > 1 && pass.len() >= 2 * threads {
            let shares = passes(pass, total.div_ceil(threads));
            let results: Vec<Vec<T>> = shares
                .into_par_iter()
                .map(|share| encode(bert, share, 1, read))
                .collect();
            out.extend(results.into_iter().flatten());
        } else if total < SPLIT_PRODUCTS_FROM_TOKENS {
            // A short query: splitting its small products costs more than it saves.
            out.extend(encode(bert, pass, 1, read));
        } else {
            out.extend(encode(bert, pass, threads, read));
        }
    }
    out
}

fn encode<T>(
    bert: &Bert,
    sequences: &[Sequence<'_>],
    threads: usize,
    read: &(dyn Fn(&[f32], usize, usize) -> T + Sync),
) -> Vec<T> {
    let states = bert.forward(sequences, threads);
    let mut start = 0;
    sequences
        .iter()
        .map(|sequence| {
            let len = sequence.ids.len().min(bert.max_positions());
            let value = read(&states, start, len);
            start += len;
            value
        })
        .collect()
}

/// Consecutive runs of `sequences` holding at most `budget` tokens each (a longer sequence runs
/// alone).
fn passes<'s, 'a>(sequences: &'s [Sequence<'a>], budget: usize) -> Vec<&'s [Sequence<'a>]> {
    let mut out = Vec::new();
    let (mut start, mut tokens) = (0, 0);
    for (i, sequence) in sequences.iter().enumerate() {
        if i > start && tokens + sequence.ids.len() > budget {
            out.push(&sequences[start..i]);
            (start, tokens) = (i, 0);
        }
        tokens += sequence.ids.len();
    }
    if start < sequences.len() {
        out.push(&sequences[start..]);
    }
    out
}
