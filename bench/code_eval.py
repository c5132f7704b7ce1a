#!/usr/bin/env python3
"""A CodeSearchNet-style code-search evaluation set built from a source tree.

    python3 bench/code_eval.py python SRC OUT [--test-share 0.5]

For every documented Python function or method in SRC (parsed with `ast`; folders named
`test`, `tests`, `site-packages` and `__pycache__` are left out) the query is the summary of its
docstring (the first sentence of the first paragraph) without the words that spell the
function's own name or a part of it (`parse_header`: "parse", "parses", "header", ...). The
corpus is a copy of the tree's `.py` files with those docstrings removed (a body left empty
becomes `pass`), so the answer is not in the text. The relevant target is the function: its
lines in the copy, from its first decorator to its last line, named `PATH#L<first>-L<last>`
with PATH relative to the corpus folder (as `grk ingest --base-dir OUT/corpus` names it).

Files are split into train and test by a hash of their path (`--test-share` of them in test),
so the split is the same on every run and machine. Written to OUT:

    corpus/              the copy, to ingest as source code
    corpus-text/         the same files with `.txt` appended: grk reads them as text (text
                         chunks, English analyser), the behaviour for a file it does not parse
    queries_{train,test}.jsonl, qrels_{train,test}.tsv            judged against corpus/
    qrels_{train,test}_text.tsv                                   judged against corpus-text/

A query with fewer than three words left is dropped. Standard library only.
"""

import argparse
import ast
import hashlib
import json
import os
import re
import shutil
import sys

SKIP_DIRS = {"test", "tests", "site-packages", "__pycache__"}
MIN_QUERY_WORDS = 3
SUFFIXES = ("ing", "es", "ed", "s", "d")


def identifier_parts(name):
    """Lowercase parts of an identifier: split at underscores and case changes."""
    parts = []
    for segment in filter(None, name.split("_")):
        parts += re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+", segment)
    return [p.lower() for p in parts]


def names_the_function(word, name_parts):
    """Whether `word` spells the function's name or a part of it (plural, past, -ing)."""
    core = word.strip("`'\"()[]{}.,:;!?*<>")
    if not core:
        return False
    candidates = {core.lower(), core.lower().replace("_", "")}
    candidates.update(identifier_parts(core))
    for c in list(candidates):
        candidates.update(c[: -len(s)] for s in SUFFIXES if c.endswith(s) and len(c) > len(s) + 2)
    return bool(candidates & name_parts)


def summary(docstring):
    """The first sentence of the docstring's first paragraph, on one line."""
    paragraph = docstring.strip().split("\n\n")[0]
    text = " ".join(line.strip() for line in paragraph.splitlines())
    match = re.search(r"\.(\s|$)", text)
    return text[: match.start() + 1] if match else text


def query_text(docstring, name):
    name_parts = set(identifier_parts(name)) | {name.lower(), name.lower().replace("_", "")}
    words = [w for w in summary(docstring).split() if not names_the_function(w, name_parts)]
    return " ".join(words)


def functions(tree):
    """Every function and method, in a fixed order (`ast.walk`)."""
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def qualified_names(tree):
    names = {}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = f"{prefix}{child.name}"
                names[id(child)] = qual
                visit(child, qual + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return names


def removable_docstring(node):
    """The docstring statement of `node` when it can be removed as whole lines, else None."""
    if ast.get_docstring(node, clean=False) is None:
        return None
    doc = node.body[0]
    if doc.lineno == node.lineno:  # `def f(): "doc"` on one line
        return None
    if len(node.body) > 1 and node.body[1].lineno == doc.end_lineno:  # `"doc"; x = 1`
        return None
    return doc


def process_file(source):
    """The source without its functions' docstrings, and (qualname, query, first, last) of each
    documented function, lines counted in the new source."""
    tree = ast.parse(source)
    quals = qualified_names(tree)
    lines = source.splitlines(keepends=True)
    removals = []  # (first line index, last line index, pass line or None)
    wanted = {}  # index in walk order -> (qualname, query)
    for i, node in enumerate(functions(tree)):
        doc = removable_docstring(node)
        if doc is None:
            continue
        replacement = None
        if len(node.body) == 1:
            replacement = " " * doc.col_offset + "pass\n"
        removals.append((doc.lineno - 1, doc.end_lineno - 1, replacement))
        query = query_text(ast.get_docstring(node), node.name)
        if len(query.split()) >= MIN_QUERY_WORDS:
            wanted[i] = (quals[id(node)], query)
    for first, last, replacement in sorted(removals, reverse=True):
        lines[first : last + 1] = [replacement] if replacement else []
    new_source = "".join(lines)
    new_functions = functions(ast.parse(new_source))
    targets = []
    for i, (qual, query) in sorted(wanted.items()):
        node = new_functions[i]
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        targets.append((qual, query, first, node.end_lineno))
    return new_source, targets


def in_test(rel, share):
    digest = hashlib.sha256(rel.encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


def python_files(src):
    for root, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(root, name)
                yield path, os.path.relpath(path, src).replace(os.sep, "/")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("language", choices=["python"])
    parser.add_argument("src")
    parser.add_argument("out")
    parser.add_argument("--test-share", type=float, default=0.5)
    args = parser.parse_args()
    for sub in ("corpus", "corpus-text"):
        shutil.rmtree(os.path.join(args.out, sub), ignore_errors=True)
    splits = {"train": [], "test": []}
    files = {"train": 0, "test": 0}
    for path, rel in python_files(args.src):
        try:
            with open(path, encoding="utf-8") as f:
                source = f.read()
            new_source, targets = process_file(source)
        except (SyntaxError, UnicodeDecodeError, ValueError, RecursionError):
            continue
        for sub, name in (("corpus", rel), ("corpus-text", rel + ".txt")):
            dest = os.path.join(args.out, sub, name)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "w", encoding="utf-8") as f:
                f.write(new_source)
        split = "test" if in_test(rel, args.test_share) else "train"
        files[split] += 1
        splits[split] += [(rel, *t) for t in targets]
    for split, rows in splits.items():
        with open(os.path.join(args.out, f"queries_{split}.jsonl"), "w") as q:
            for rel, qual, query, first, last in rows:
                q.write(json.dumps({"_id": f"{rel}:{qual}:{first}", "text": query}) + "\n")
        for suffix, ext in (("", ""), ("_text", ".txt")):
            with open(os.path.join(args.out, f"qrels_{split}{suffix}.tsv"), "w") as r:
                r.write("query-id\tcorpus-id\tscore\n")
                for rel, qual, _, first, last in rows:
                    r.write(f"{rel}:{qual}:{first}\t{rel}{ext}#L{first}-L{last}\t1\n")
        print(f"{split}: {files[split]} files, {len(rows)} queries", file=sys.stderr)


if __name__ == "__main__":
    main()
