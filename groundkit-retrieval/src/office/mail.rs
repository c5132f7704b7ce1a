//! Mail: an `.eml` message, or an `.mbox` mailbox with one unit per message (scope `message
//! N`). A message reads as its `Subject`, `From`, `To`, `Cc` and `Date` headers, one a line,
//! then its text body parts (an HTML-only part as its text). Attachments are not read.

use std::io::Cursor;

use mail_parser::{Address, Message, MessageParser, mailbox::mbox::MessageIterator};

use super::Malformed;
use super::archive::malformed;
use super::{Extracted, UnitText};

/// One message, as one flow of text.
pub(super) fn message(bytes: &[u8], format: &'static str) -> Result<Extracted, Malformed> {
    let text = message_text(bytes).ok_or_else(|| malformed(format, "no message".into()))?;
    Ok(Extracted {
        text: text.trim().to_owned(),
        units: None,
    })
}

/// A mailbox: each message a unit, in order.
pub(super) fn mailbox(bytes: &[u8], format: &'static str) -> Result<Extracted, Malformed> {
    let mut out = UnitText::new(format);
    for (i, entry) in MessageIterator::new(Cursor::new(bytes)).enumerate() {
        let entry = entry.map_err(|err| malformed(format, err.to_string()))?;
        let text = message_text(entry.contents())
            .ok_or_else(|| malformed(format, format!("message {} does not parse", i + 1)))?;
        out.push(format!("message {}", i + 1), &text)?;
    }
    Ok(out.finish())
}

/// The chosen headers, a blank line, then the text body parts separated by blank lines.
fn message_text(bytes: &[u8]) -> Option<String> {
    let message = MessageParser::default().parse(bytes)?;
    let mut text = String::new();
    let headers = [
        ("Subject", message.subject().map(str::to_owned)),
        ("From", message.from().map(addresses)),
        ("To", message.to().map(addresses)),
        ("Cc", message.cc().map(addresses)),
        ("Date", message.date().map(|date| date.to_rfc3339())),
    ];
    for (name, value) in headers {
        if let Some(value) = value.filter(|v| !v.trim().is_empty()) {
            text.push_str(&format!("{name}: {}\n", one_line(&value)));
        }
    }
    for body in bodies(&message) {
        let body = body.trim();
        if !body.is_empty() {
            text.push('\n');
            text.push_str(body);
            text.push('\n');
        }
    }
    Some(text)
}

fn bodies(message: &Message<'_>) -> Vec<String> {
    (0..message.text_body_count())
        .filter_map(|i| message.body_text(i).map(|body| body.replace("\r\n", "\n")))
        .collect()
}

/// An address list as `Name <address>`, separated by commas.
fn addresses(list: &Address<'_>) -> String {
    list.iter()
        .map(|addr| match (&addr.name, &addr.address) {
            (Some(name), Some(address)) => format!("{name} <{address}>"),
            (Some(name), None) => name.to_string(),
            (None, Some(address)) => address.to_string(),
            (None, None) => String::new(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn one_line(value: &str) -> String {
    value.split_whitespace().collect::<Vec<_>>().join(" ")
}
