#!/usr/bin/env python3
"""Writes one large file per format grk extracts, each in a directory of its own, for
`bench/formats.sh`: DIR/FORMAT/big.FORMAT.

Standard library only. The files are laid out by hand (a zip of the parts a reader needs), as
large as each format's limits let a file be read: about 40 MB of text where only the 64 MiB
source limit binds; 950,000 cells for the workbooks (the cap is 1,000,000); 5,000 slides,
chapters or sheets' parts below the 10,000-entry cap. Words are drawn from a fixed vocabulary with
a fixed seed, so the files compress like prose and are the same on every run.

    python3 bench/formats_corpus.py /tmp/formats-corpus
"""

import email.message
import io
import json
import mailbox
import os
import random
import sys
import zipfile

WORDS = (
    "harbour lantern granite tide orchard quince ledger apiary moraine glacier curlew marsh "
    "sluice weir millpond kelp urchin otter saffron cardamom caravan ferry dawn storm shutter "
    "keeper wick chalk downs honey lavender basket terrace cistern drought seedling survey"
).split()
RNG = random.Random(7)
TEXT_BYTES = 40 << 20


def sentence(n=12):
    return " ".join(RNG.choice(WORDS) for _ in range(n)).capitalize() + "."


def paragraphs(total):
    """Paragraphs of a few sentences, `total` bytes of them in all."""
    size = 0
    while size < total:
        p = " ".join(sentence() for _ in range(4))
        size += len(p) + 2
        yield p


def esc(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def zip_parts(path, parts):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in parts:
            out.writestr(name, data)


def txt(path):
    with open(path, "w") as f:
        f.write("\n\n".join(paragraphs(TEXT_BYTES)))


def html(path):
    body = "".join(f"<p>{p}</p>\n" for p in paragraphs(TEXT_BYTES))
    with open(path, "w") as f:
        f.write(f"<html><head><title>Bench</title></head><body>{body}</body></html>")


def docx(path):
    body = "".join(f"<w:p><w:r><w:t>{p}</w:t></w:r></w:p>" for p in paragraphs(TEXT_BYTES))
    xml = (
        '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
        f"<w:body>{body}</w:body></w:document>"
    )
    zip_parts(path, [("word/document.xml", xml)])


def odt(path):
    body = "".join(f"<text:p>{p}</text:p>" for p in paragraphs(TEXT_BYTES))
    xml = (
        '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text>'
        f"{body}</office:text></office:body></office:document-content>"
    )
    zip_parts(path, [("mimetype", "application/vnd.oasis.opendocument.text"), ("content.xml", xml)])


def pptx(path):
    parts = []
    per_slide = TEXT_BYTES // 5000
    for i in range(1, 5001):
        texts = "".join(f"<a:p><a:r><a:t>{p}</a:t></a:r></a:p>" for p in paragraphs(per_slide))
        parts.append(
            (
                f"ppt/slides/slide{i}.xml",
                '<p:sld xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" '
                'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main">'
                f"<p:cSld><p:spTree><p:sp><p:txBody>{texts}</p:txBody></p:sp></p:spTree></p:cSld></p:sld>",
            )
        )
    zip_parts(path, parts)


ROWS, COLUMNS = 190_000, 5


def row_values(r):
    return [f"lot {r}", str(r * 3), RNG.choice(WORDS), sentence(4), str(r % 97)]


def xlsx(path):
    main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    rels = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    package = "http://schemas.openxmlformats.org/package/2006/relationships"
    rows = []
    for r in range(1, ROWS + 1):
        cells = "".join(
            f'<c r="{"ABCDE"[c]}{r}" t="inlineStr"><is><t>{v}</t></is></c>'
            for c, v in enumerate(row_values(r))
        )
        rows.append(f'<row r="{r}">{cells}</row>')
    sheet = f'<worksheet xmlns="{main}"><sheetData>{"".join(rows)}</sheetData></worksheet>'
    relationship = (
        f'<Relationships xmlns="{package}"><Relationship Id="rId1" Type="{rels}/%s" Target="%s"/>'
        "</Relationships>"
    )
    zip_parts(
        path,
        [
            ("_rels/.rels", relationship % ("officeDocument", "xl/workbook.xml")),
            (
                "xl/workbook.xml",
                f'<workbook xmlns="{main}" xmlns:r="{rels}"><sheets>'
                '<sheet name="Lots" sheetId="1" r:id="rId1"/></sheets></workbook>',
            ),
            ("xl/_rels/workbook.xml.rels", relationship % ("worksheet", "worksheets/sheet1.xml")),
            ("xl/worksheets/sheet1.xml", sheet),
        ],
    )


def ods(path):
    rows = []
    for r in range(1, ROWS + 1):
        cells = "".join(
            f"<table:table-cell><text:p>{v}</text:p></table:table-cell>" for v in row_values(r)
        )
        rows.append(f"<table:table-row>{cells}</table:table-row>")
    xml = (
        '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:spreadsheet>'
        f'<table:table table:name="Lots">{"".join(rows)}</table:table>'
        "</office:spreadsheet></office:body></office:document-content>"
    )
    zip_parts(path, [("mimetype", "application/vnd.oasis.opendocument.spreadsheet"), ("content.xml", xml)])


def rtf(path):
    body = "".join(f"{{\\pard \\f0 {p}\\par}}\n" for p in paragraphs(TEXT_BYTES))
    with open(path, "w") as f:
        f.write("{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0 Helvetica;}}\n" + body + "}")


def ipynb(path):
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": p}
        for p in paragraphs(TEXT_BYTES)
    ]
    with open(path, "w") as f:
        json.dump({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, f)


def message(i, body):
    m = email.message.EmailMessage()
    m["Subject"] = f"Survey {i}"
    m["From"] = "Warden <warden@example.org>"
    m["To"] = "Archive <archive@example.org>"
    m["Date"] = "Tue, 03 Mar 2026 09:15:00 +0000"
    m.set_content(body)
    return m


def eml(path):
    with open(path, "wb") as f:
        f.write(message(1, "\n\n".join(paragraphs(TEXT_BYTES))).as_bytes())


def mbox(path):
    box = mailbox.mbox(path)
    for i, p in enumerate(paragraphs(TEXT_BYTES)):
        if i % 8 == 0:
            if i:
                box.add(message(i // 8, body))
            body = p
        else:
            body += "\n\n" + p
    box.flush()
    box.close()


def epub(path):
    container = (
        '<?xml version="1.0"?><container xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
        'version="1.0"><rootfiles><rootfile full-path="content.opf" '
        'media-type="application/oebps-package+xml"/></rootfiles></container>'
    )
    chapters, items, refs = [], [], []
    per_chapter = TEXT_BYTES // 2000
    for i in range(1, 2001):
        body = "".join(f"<p>{p}</p>" for p in paragraphs(per_chapter))
        chapters.append(
            (f"c{i}.xhtml", f"<html xmlns='http://www.w3.org/1999/xhtml'><body><h1>Chapter {i}</h1>{body}</body></html>")
        )
        items.append(f'<item id="c{i}" href="c{i}.xhtml" media-type="application/xhtml+xml"/>')
        refs.append(f'<itemref idref="c{i}"/>')
    package = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        f"<manifest>{''.join(items)}</manifest><spine>{''.join(refs)}</spine></package>"
    )
    zip_parts(
        path,
        [("mimetype", "application/epub+zip"), ("META-INF/container.xml", container), ("content.opf", package)]
        + chapters,
    )


def pdf(path, pages=2000):
    """A PDF of `pages` pages of 50 lines each in Helvetica, its cross-reference table by hand."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>", None, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for _ in range(pages):
        lines = "".join(f"({sentence(10)}) Tj T* " for _ in range(50))
        stream = f"BT /F1 9 Tf 11 TL 40 800 Td {lines}ET"
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> "
            f"/Contents {len(objects)} 0 R >>"
        )
        kids.append(f"{len(objects)} 0 R")
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {pages} >>"
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{n} 0 obj\n{body}\nendobj\n".encode())
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
    with open(path, "wb") as f:
        f.write(out.getvalue())


MAKERS = {
    "txt": txt, "html": html, "pdf": pdf, "docx": docx, "odt": odt, "pptx": pptx,
    "xlsx": xlsx, "ods": ods, "rtf": rtf, "ipynb": ipynb, "eml": eml, "mbox": mbox, "epub": epub,
}

if __name__ == "__main__":
    root = sys.argv[1]
    for fmt in sys.argv[2:] or MAKERS:
        os.makedirs(os.path.join(root, fmt), exist_ok=True)
        target = os.path.join(root, fmt, f"big.{fmt}")
        if not os.path.exists(target):
            MAKERS[fmt](target)
        print(fmt, os.path.getsize(target))
