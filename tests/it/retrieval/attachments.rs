//! Mail attachments read as documents of their own (`MAIL#ADDRESS`), verified by finding them
//! again in the mail file; attachments of no format grk reads, or past the caps, counted; a bomb
//! attached to a message failing alone.

use base64::Engine;
use groundkit_retrieval::Verification;

use super::Fixture;
use super::formats::{copy_fixture, fetch, top_hit_verified};

#[test]
fn attachments_are_documents_addressed_in_their_mail_file_and_verified_against_it() {
    let fx = Fixture::new();
    copy_fixture(&fx, "weir.eml", "weir.eml");
    copy_fixture(&fx, "weir.mbox", "weir.mbox");
    let summary = fx.ingest_all("c");
    assert!(summary.failed.is_empty(), "{:?}", summary.failed);
    // Two mail files, a Word document and a text file from the message, a Markdown file from
    // the mailbox's second message; the opaque `blob.bin` is counted, not read.
    assert_eq!(summary.added, 5);
    assert_eq!(summary.attachments_skipped, 1);
    let mut sluice = String::new();
    for (query, document, extractor) in [
        (
            "sluice gate",
            "weir.eml#attachment-1/minutes.docx",
            "mail-attachment@1+groundkit-docx@1",
        ),
        (
            "millpond gauge",
            "weir.eml#attachment-2/readings.txt",
            "mail-attachment@1+text",
        ),
    ] {
        let fetched = top_hit_verified(&fx, query, "weir.eml");
        assert_eq!(fetched.document_id, document);
        assert_eq!(fetched.citation.extractor.as_deref(), Some(extractor));
        if query == "sluice gate" {
            sluice = fetched.chunk_id;
        }
    }
    let eels = top_hit_verified(&fx, "elvers eel pass", "weir.mbox");
    assert_eq!(eels.document_id, "weir.mbox#message-2/attachment-1/eels.md");
    assert_eq!(
        eels.content.as_deref(),
        Some("Elvers climbed the eel pass beside the weir at night.")
    );
    // The mail's own text does not take in its attachments.
    let mail = top_hit_verified(&fx, "minutes readings attached", "weir.eml");
    assert_eq!(mail.document_id, "weir.eml");
    assert!(!mail.content.unwrap_or_default().contains("millpond"));

    // The Word document changes inside the mail file: its citation drifts, the text file's
    // stays verified.
    copy_fixture(&fx, "revised/weir.eml", "weir.eml");
    assert_eq!(fetch(&fx, &sluice).verification, Verification::Drifted);
    let readings = fx.search("c", "millpond", 1).results.remove(0);
    assert_eq!(
        fetch(&fx, &readings.chunk_id).verification,
        Verification::Verified
    );
}

/// A message with `parts`, each `(file name, content type, transfer encoding, body)`.
fn message(parts: &[(String, &str, &str, Vec<u8>)]) -> Vec<u8> {
    let mut mail = b"Subject: Kelp survey\r\nFrom: a@example.org\r\nMIME-Version: 1.0\r\n\
        Content-Type: multipart/mixed; boundary=\"b\"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\n\
        The kelp survey attachments.\r\n"
        .to_vec();
    for (name, content_type, encoding, body) in parts {
        mail.extend_from_slice(
            format!(
                "--b\r\nContent-Type: {content_type}\r\nContent-Transfer-Encoding: {encoding}\r\n\
                 Content-Disposition: attachment; filename=\"{name}\"\r\n\r\n"
            )
            .as_bytes(),
        );
        mail.extend_from_slice(body);
        mail.extend_from_slice(b"\r\n");
    }
    mail.extend_from_slice(b"--b--\r\n");
    mail
}

#[test]
fn attachments_past_the_caps_are_counted_and_a_bomb_attached_fails_alone() {
    let fx = Fixture::new();
    // 66 text attachments: the first 64 are read, the last two counted.
    let notes: Vec<_> = (1..=66)
        .map(|n| {
            let body = format!("Note {n} on the kelp forest.").into_bytes();
            (format!("note-{n}.txt"), "text/plain", "7bit", body)
        })
        .collect();
    fx.write("notes.eml", message(&notes));
    // A zip bomb attached as a Word document, beside a text file, and a 17 MiB text file.
    let bomb = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/office/hostile/bomb.docx"
    ))
    .expect("bomb fixture");
    let encoded = base64::engine::general_purpose::STANDARD.encode(bomb);
    let lines: Vec<&[u8]> = encoded.as_bytes().chunks(76).collect();
    let big = "urchin barren\r\n".repeat((17 << 20) / 15).into_bytes();
    fx.write(
        "bomb.eml",
        message(&[
            (
                "bomb.docx".into(),
                "application/octet-stream",
                "base64",
                lines.join(&b"\r\n"[..]),
            ),
            (
                "otters.txt".into(),
                "text/plain",
                "7bit",
                b"Sea otters keep the urchins down.".to_vec(),
            ),
            ("big.txt".into(), "text/plain", "7bit", big),
        ]),
    );
    let summary = fx.ingest_all("c");
    assert_eq!(summary.failed.len(), 1, "{:?}", summary.failed);
    assert_eq!(summary.failed[0].source, "bomb.eml#attachment-1/bomb.docx");
    assert!(
        summary.failed[0]
            .reason
            .contains("declares more than 256 MiB uncompressed"),
        "{}",
        summary.failed[0].reason
    );
    // Two mail files, 64 notes and the otters; two notes and the 17 MiB file counted.
    assert_eq!(summary.added, 2 + 64 + 1);
    assert_eq!(summary.attachments_skipped, 3);
    let note = top_hit_verified(&fx, "note 64 kelp", "notes.eml");
    assert_eq!(note.document_id, "notes.eml#attachment-64/note-64.txt");
    let hits = fx.search("c", "note 65 kelp", 100).results;
    assert!(hits.iter().all(|hit| !hit.text().contains("Note 65")));
    top_hit_verified(&fx, "sea otters urchins", "bomb.eml");
}
