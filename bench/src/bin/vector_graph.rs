//! The HNSW graph of a generation's vectors against exact search, on synthetic clustered unit
//! vectors: build time, memory, file size and load time of the graph; recall@10 against exact
//! search; query time of both, in alternating rounds. Prints JSON. Run it with `--release`.
//!
//! `vector_graph N [QUERIES] [DIMENSION]`
//!
//! The vectors: 2,000 cluster centres in a 48-dimensional latent space, points scattered around
//! them, projected to DIMENSION (384) by one fixed random matrix, with a little noise in every
//! dimension, normalised. Sentence embeddings have a similar low intrinsic dimension; uniformly
//! random vectors, which have none, are the worst case for any graph index and unlike any
//! embedding model's output.

use std::time::Instant;

use groundkit_retrieval::vectors::graph::{Graph, exact_nearest};

/// SplitMix64 and Box-Muller: deterministic synthetic data without a dependency.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn uniform(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 + 0.5) / (1u64 << 24) as f32
    }
    fn normal(&mut self) -> f32 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f32::consts::TAU * v).cos()
    }
}

const LATENT: usize = 48;
const CLUSTERS: usize = 2_000;

fn normalise(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
}

/// `count` vectors of `dimension` values, row after row.
fn synthetic(
    rng: &mut Rng,
    count: usize,
    dimension: usize,
    basis: &[f32],
    centres: &[f32],
) -> Vec<f32> {
    let mut out = Vec::with_capacity(count * dimension);
    let mut z = [0f32; LATENT];
    for _ in 0..count {
        let centre = (rng.next_u64() % CLUSTERS as u64) as usize;
        for (i, zi) in z.iter_mut().enumerate() {
            *zi = centres[centre * LATENT + i] + 0.7 * rng.normal();
        }
        let mut v = vec![0f32; dimension];
        for (zi, row) in z.iter().zip(basis.chunks_exact(dimension)) {
            v.iter_mut().zip(row).for_each(|(o, b)| *o += zi * b);
        }
        normalise(&mut v);
        v.iter_mut().for_each(|x| *x += 0.02 * rng.normal());
        normalise(&mut v);
        out.extend_from_slice(&v);
    }
    out
}

/// Resident and peak resident memory of this process, in MiB (Linux).
fn memory_mib() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next()?.parse::<f64>().ok())
            .map_or(f64::NAN, |kib| kib / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let Some(&count) = args.first() else {
        return Err("usage: vector_graph N [QUERIES] [DIMENSION]".into());
    };
    let queries = args.get(1).copied().unwrap_or(500);
    let dimension = args.get(2).copied().unwrap_or(384);
    let mut rng = Rng(0x0067_726b);
    let basis: Vec<f32> = (0..LATENT * dimension).map(|_| rng.normal()).collect();
    let centres: Vec<f32> = (0..CLUSTERS * LATENT).map(|_| rng.normal()).collect();
    let rows = synthetic(&mut rng, count, dimension, &basis, &centres);
    let probes = synthetic(&mut rng, queries, dimension, &basis, &centres);
    let (rss_before, _) = memory_mib();

    let started = Instant::now();
    // Entries named by their row, so the graph's entries are the rows.
    let entries = rows
        .chunks_exact(dimension)
        .enumerate()
        .map(|(row, vector)| ((row as u128).to_le_bytes(), vector));
    let graph = Graph::build(entries, dimension);
    let build_seconds = started.elapsed().as_secs_f64();
    let (rss_built, peak_built) = memory_mib();

    let file = std::env::temp_dir().join(format!("vector_graph_{}.hnsw", std::process::id()));
    let mut out = std::io::BufWriter::new(std::fs::File::create(&file)?);
    graph.write_to(&mut out)?;
    drop(out);
    let file_mib = std::fs::metadata(&file)?.len() as f64 / (1024.0 * 1024.0);
    drop(graph);
    let started = Instant::now();
    let input = std::io::BufReader::new(std::fs::File::open(&file)?);
    let graph = Graph::read_from(input, dimension)?.ok_or("a graph of the current format")?;
    let load_seconds = started.elapsed().as_secs_f64();
    std::fs::remove_file(&file)?;

    // Three rounds, each every query exactly and then every query through the graph; the
    // figures are the medians of the rounds' percentiles.
    let mut found = 0usize;
    let (mut exact_rounds, mut graph_rounds) = (Vec::new(), Vec::new());
    for round in 0..3 {
        let mut exact_ms = Vec::new();
        let mut exact_rows = Vec::new();
        for probe in probes.chunks_exact(dimension) {
            let started = Instant::now();
            exact_rows.push(exact_nearest(&rows, dimension, probe, 10));
            exact_ms.push(started.elapsed().as_secs_f64() * 1e3);
        }
        let mut graph_ms = Vec::new();
        for (probe, exact) in probes.chunks_exact(dimension).zip(&exact_rows) {
            let started = Instant::now();
            let approximate = graph.nearest(probe, 10);
            graph_ms.push(started.elapsed().as_secs_f64() * 1e3);
            if round == 0 {
                found += approximate
                    .iter()
                    .filter(|(_, row)| exact.iter().any(|(_, r)| r == row))
                    .count();
            }
        }
        exact_ms.sort_by(f64::total_cmp);
        graph_ms.sort_by(f64::total_cmp);
        exact_rounds.push([percentile(&exact_ms, 0.5), percentile(&exact_ms, 0.99)]);
        graph_rounds.push([percentile(&graph_ms, 0.5), percentile(&graph_ms, 0.99)]);
    }
    let median = |rounds: &[[f64; 2]], at: usize| {
        let mut values: Vec<f64> = rounds.iter().map(|r| r[at]).collect();
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    let report = serde_json::json!({
        "vectors": count,
        "dimension": dimension,
        "queries": queries,
        "recall_at_10": found as f64 / (10 * queries) as f64,
        "graph_query_ms": {"p50": median(&graph_rounds, 0), "p99": median(&graph_rounds, 1)},
        "exact_query_ms": {"p50": median(&exact_rounds, 0), "p99": median(&exact_rounds, 1)},
        "build_seconds": build_seconds,
        "load_seconds": load_seconds,
        "file_mib": file_mib,
        "rss_mib": {"vectors": rss_before, "with_graph": rss_built, "peak_while_building": peak_built},
    });
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}
