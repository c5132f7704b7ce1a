//! Mail attachments, named by a stable address inside their mail file: `attachment-M/NAME` in a
//! message (`.eml`), `message-N/attachment-M/NAME` in a mailbox (`.mbox`), N and M counted from
//! 1 in the file's order and NAME the attachment's file name (`/`, `#`, `\` and control
//! characters replaced by `_`; `unnamed` when it has none). A document read from an attachment
//! has the id `MAIL#ADDRESS` (`inbox.mbox#message-3/attachment-1/report.docx`): the mail file is
//! its source, and finding the address again in the file, as it is now, is how it is verified.
//!
//! Walking a file's attachments is bounded: at most [`MAX_ATTACHMENTS`] per mail file and
//! [`MAX_ATTACHMENT_BYTES`] decoded per attachment are handed on; those past a cap, and messages
//! attached to messages, are seen but not handed on ([`Seen::Skipped`]).

use std::io::Cursor;

use mail_parser::mailbox::mbox::MessageIterator;
use mail_parser::{Message, MessageParser, MimeHeaders, PartType};

use super::Malformed;
use super::archive::malformed;

/// Most attachments handed on from one mail file.
pub const MAX_ATTACHMENTS: usize = 64;
/// Largest attachment handed on, decoded.
pub const MAX_ATTACHMENT_BYTES: usize = 16 << 20;

/// An attachment met while walking a mail file.
pub enum Seen<'a> {
    /// One to read: its address and its decoded bytes.
    Attachment {
        /// Its address inside the mail file.
        address: String,
        /// Its decoded bytes.
        bytes: &'a [u8],
    },
    /// One not handed on: past a cap, or a message attached to a message.
    Skipped,
}

/// Walks the attachments of `mail`, a message (`mailbox` false) or a mailbox, in order.
pub fn for_each<E: From<Malformed>>(
    mail: &[u8],
    mailbox: bool,
    mut visit: impl FnMut(Seen<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let mut handed = 0usize;
    if !mailbox {
        let message = MessageParser::default()
            .parse(mail)
            .ok_or_else(|| malformed("an e-mail message", "no message".into()))?;
        return walk(&message, None, &mut handed, &mut visit);
    }
    for (i, entry) in MessageIterator::new(Cursor::new(mail)).enumerate() {
        let entry = entry.map_err(|err| malformed("a mailbox", err.to_string()))?;
        let message = MessageParser::default()
            .parse(entry.contents())
            .ok_or_else(|| malformed("a mailbox", format!("message {} does not parse", i + 1)))?;
        walk(&message, Some(i + 1), &mut handed, &mut visit)?;
    }
    Ok(())
}

fn walk<E>(
    message: &Message<'_>,
    number: Option<usize>,
    handed: &mut usize,
    visit: &mut impl FnMut(Seen<'_>) -> Result<(), E>,
) -> Result<(), E> {
    for (i, part) in message.attachments().enumerate() {
        let bytes = part.contents();
        let nested = matches!(part.body, PartType::Message(_));
        if nested || bytes.len() > MAX_ATTACHMENT_BYTES || *handed >= MAX_ATTACHMENTS {
            visit(Seen::Skipped)?;
            continue;
        }
        *handed += 1;
        let name = part
            .attachment_name()
            .map_or_else(|| "unnamed".into(), clean);
        let address = match number {
            Some(n) => format!("message-{n}/attachment-{}/{name}", i + 1),
            None => format!("attachment-{}/{name}", i + 1),
        };
        visit(Seen::Attachment { address, bytes })?;
    }
    Ok(())
}

/// A file name fit for an address: no separators, no control characters.
fn clean(name: &str) -> String {
    let name: String = name
        .trim()
        .chars()
        .map(|c| match c {
            '/' | '\\' | '#' => '_',
            c if c.is_control() => '_',
            c => c,
        })
        .collect();
    if name.is_empty() {
        "unnamed".into()
    } else {
        name
    }
}

/// The decoded bytes of the attachment at `address` in `mail`, if it still has one there.
pub fn find(mail: &[u8], address: &str) -> Result<Option<Vec<u8>>, Malformed> {
    let mailbox = address.starts_with("message-");
    let mut found = None;
    for_each::<Malformed>(mail, mailbox, |seen| {
        if let Seen::Attachment { address: at, bytes } = seen
            && found.is_none()
            && at == address
        {
            found = Some(bytes.to_vec());
        }
        Ok(())
    })?;
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_lose_separators_and_control_characters() {
        assert_eq!(clean(" q3/report#2.docx "), "q3_report_2.docx");
        assert_eq!(clean("a\\b\u{7}.txt"), "a_b_.txt");
        assert_eq!(clean("  "), "unnamed");
    }
}
