//! `grk eval` on judgements that name lines of a source file (`PATH#L10-L42`): a target is found
//! by a chunk of that file whose lines overlap it, not by any chunk of the file; judgements that
//! name documents are measured by document as before.

use super::Fixture;

/// Three functions, each its own chunk at a 100-byte budget (two together are larger).
const SHAPES: &str = "\
def area_of_circle(radius):
    return 3.14159 * radius * radius


def perimeter_of_square(side):
    return 4 * side


def volume_of_cube(side):
    cube = side * side * side
    return cube
";

/// `grk eval --json` of the two queries judged by `qrels` (the TSV's rows, without its header).
fn eval(fx: &Fixture, qrels: &str) -> serde_json::Value {
    let queries = fx.outside().join("queries.jsonl");
    std::fs::write(
        &queries,
        "{\"_id\": \"q1\", \"text\": \"circle radius\"}\n{\"_id\": \"q2\", \"text\": \"cube side\"}\n",
    )
    .expect("write queries");
    let judged = fx.outside().join("qrels.tsv");
    std::fs::write(&judged, format!("query-id\tcorpus-id\tscore\n{qrels}")).expect("write qrels");
    let queries = queries.display().to_string();
    let judged = judged.display().to_string();
    fx.grk_json(&[
        "eval",
        "--collection",
        "c",
        "--queries",
        &queries,
        "--qrels",
        &judged,
        "--json",
    ])
}

fn close(report: &serde_json::Value, field: &str, expected: f64) {
    let got = report[field].as_f64().expect(field);
    assert!(
        (got - expected).abs() < 1e-9,
        "{field}: {got} != {expected}"
    );
}

#[test]
fn a_function_judged_by_its_lines_ranks_where_its_own_chunk_ranks() {
    let fx = Fixture::new();
    fx.write("shapes.py", SHAPES);
    fx.grk_ok(&[
        "ingest",
        "--collection",
        "c",
        "--chunk-bytes",
        "100",
        "shapes.py",
    ]);

    // "circle radius" finds only the first function; "cube side" ranks the cube's function
    // (both words) above the square's (one), and the square's is the one judged.
    let by_lines = eval(&fx, "q1\tshapes.py#L1-L2\t1\nq2\tshapes.py#L5-L6\t1\n");
    assert_eq!(by_lines["queries"], 2);
    close(&by_lines, "mrr_at_10", (1.0 + 0.5) / 2.0);
    close(&by_lines, "ndcg_at_10", (1.0 + 1.0 / 3f64.log2()) / 2.0);
    close(&by_lines, "recall_at_100", 1.0);

    // Lines past the end of every function (none overlaps them) are never found.
    let nowhere = eval(&fx, "q1\tshapes.py#L40-L50\t1\nq2\tshapes.py#L12-L12\t1\n");
    close(&nowhere, "mrr_at_10", 0.0);
    close(&nowhere, "recall_at_100", 0.0);

    // Judged by document, the file is the first document for both queries.
    let by_document = eval(&fx, "q1\tshapes.py\t1\nq2\tshapes.py\t1\n");
    close(&by_document, "mrr_at_10", 1.0);
    close(&by_document, "ndcg_at_10", 1.0);
}
