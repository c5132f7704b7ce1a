"""Writes the Cranfield collection (cran.all.1400, cran.qry, cranqrel) as a BEIR directory:
corpus.jsonl (title and text), queries.jsonl and qrels/test.tsv, for `grk ingest --format beir`
and `grk eval`.

Cranfield numbers its queries 1, 2, 4, 8, ... in cran.qry but 1 to 225 in cranqrel; cranqrel's
numbers are the queries' positions in cran.qry, and are used as their ids here. Its relevance
grades run from 1 (a complete answer) to 4 (of minimal interest), and -1 (no interest); a grade g
of 1 to 4 becomes the gain 5 - g, and -1 is left out.

    python3 bench/cranfield_beir.py ../shared/data/cranfield OUT_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def records(path: Path) -> list[dict[str, str]]:
    """The records of a Cranfield file: `.I` starts one, `.T`, `.A`, `.B`, `.W` its fields."""
    out: list[dict[str, str]] = []
    field = None
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith(".I "):
            out.append({"id": line[3:].strip()})
            field = None
        elif line[:2] in (".T", ".A", ".B", ".W") and line[2:].strip() == "":
            field = line[1]
            out[-1].setdefault(field, "")
        elif field is not None:
            out[-1][field] += line.strip() + " "
    return out


def main() -> None:
    source, target = Path(sys.argv[1]), Path(sys.argv[2])
    (target / "qrels").mkdir(parents=True, exist_ok=True)
    with (target / "corpus.jsonl").open("w") as corpus:
        for doc in records(source / "cran.all.1400"):
            title = doc.get("T", "").strip()
            text = doc.get("W", "").strip()
            corpus.write(json.dumps({"_id": doc["id"], "title": title, "text": text}) + "\n")
    with (target / "queries.jsonl").open("w") as queries:
        for position, query in enumerate(records(source / "cran.qry"), start=1):
            queries.write(json.dumps({"_id": str(position), "text": query.get("W", "").strip()}) + "\n")
    with (target / "qrels" / "test.tsv").open("w") as qrels:
        qrels.write("query-id\tcorpus-id\tscore\n")
        for line in (source / "cranqrel").read_text().splitlines():
            parts = line.split()
            if len(parts) < 3 or not parts[2].lstrip("-").isdigit():
                continue
            grade = int(parts[2])
            if 1 <= grade <= 4:
                qrels.write(f"{parts[0]}\t{parts[1]}\t{5 - grade}\n")


if __name__ == "__main__":
    main()
