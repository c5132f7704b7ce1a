//! JSON-RPC 2.0 framing: what arrives is classified here, before any method runs, and every
//! frame that leaves is built here.
//!
//! jsonrpsee's own request type cannot carry MCP's ids (it rejects negative and very large
//! integers) and its server drops notifications, so this layer owns the envelope and hands the
//! method table only a method name and named params. The rules it enforces:
//!
//! - A request id is echoed byte for byte: it is kept as the raw JSON text it arrived as, so
//!   strings, `0`, negative integers and integers beyond 2^53 come back exactly.
//! - A `null`, fractional, exponent, boolean, array or object id is refused with -32600.
//! - Unparseable JSON is answered with -32700 and `"id": null`.
//! - Notifications (no `id`) and incoming responses (`result`/`error`, no `method`) are never
//!   answered.
//! - `params`, when present, must be an object (params by name only), else -32602.
//! - An object in `params` that names a key twice is refused, not read as its last value: in
//!   `tools/call` as an `isError` result like any invalid argument, elsewhere with -32602.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::edge::problem::rpc_code;

/// One classified message.
#[derive(Debug)]
pub enum Message {
    /// A call that expects an answer.
    Request(Request),
    /// A call that must not be answered.
    Notification {
        /// Method name.
        method: String,
        /// Named params (empty when omitted).
        params: Map<String, Value>,
    },
    /// A response from the peer (this server sends no requests, so it is ignored).
    Response,
    /// A message that is answered with an error and not dispatched.
    Invalid(ErrorFrame),
}

/// A request: raw id, method and named params.
#[derive(Debug)]
pub struct Request {
    /// The id exactly as it arrived.
    pub id: Box<RawValue>,
    /// Method name.
    pub method: String,
    /// Named params; `None` when `params` was omitted.
    pub params: Option<Map<String, Value>>,
    /// Why `params` is refused although it parsed: a key given twice (the map holds the last).
    pub duplicate_key: Option<String>,
}

/// What arrived in one frame.
#[derive(Debug)]
pub enum Incoming {
    /// One message.
    Single(Message),
    /// A JSON array of messages (whether it is allowed depends on the revision).
    Batch(Vec<Message>),
}

/// An error to send: code, message, optional data and the id it answers (`None` = `null`).
#[derive(Debug, Clone)]
pub struct ErrorFrame {
    /// The id it answers, raw; `None` renders `null`.
    pub id: Option<Box<RawValue>>,
    /// JSON-RPC error code.
    pub code: i32,
    /// Human-readable message (never a cause, path or `Debug` output).
    pub message: String,
    /// Structured detail.
    pub data: Option<Value>,
}

impl ErrorFrame {
    /// An error answering `id`.
    pub fn new(id: Option<&RawValue>, code: i32, message: impl Into<String>) -> Self {
        Self {
            id: id.map(ToOwned::to_owned),
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The same error with `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// The wire frame.
    pub fn render(&self) -> String {
        let mut error = json!({ "code": self.code, "message": self.message });
        if let Some(data) = &self.data {
            error["data"] = data.clone();
        }
        frame(self.id.as_deref(), "error", &error)
    }
}

/// A success frame answering `id` with `result`.
pub fn success(id: &RawValue, result: &str) -> String {
    // Spliced as raw text too: the result is JSON the method table already serialized.
    let mut frame = String::with_capacity(result.len() + SUCCESS_ENVELOPE_LEN + id.get().len());
    open_success(&mut frame, id);
    frame.push_str(result);
    frame.push('}');
    frame
}

/// The bytes a success frame adds to its id and result.
pub const SUCCESS_ENVELOPE_LEN: usize = r#"{"jsonrpc":"2.0","id":,"result":}"#.len();

/// Write the head of a success frame answering `id` to `out`: what follows is the result, then
/// one `}`.
pub fn open_success(out: &mut String, id: &RawValue) {
    out.push_str(r#"{"jsonrpc":"2.0","id":"#);
    out.push_str(id.get());
    out.push_str(r#","result":"#);
}

/// A notification frame.
pub fn notification(method: &str, params: &Value) -> String {
    json!({ "jsonrpc": "2.0", "method": method, "params": params }).to_string()
}

fn frame(id: Option<&RawValue>, key: &str, body: &Value) -> String {
    // The id is spliced in as raw text so it is echoed exactly; serde_json output never
    // contains a raw newline, so the frame is one line.
    let id = id.map_or("null", RawValue::get);
    format!(r#"{{"jsonrpc":"2.0","id":{id},"{key}":{body}}}"#)
}

/// The envelope as parsed; `id` keeps the raw text and distinguishes "absent" from `null`. The
/// other members are borrowed from the frame's text: only the id and the method are kept.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, deserialize_with = "present_owned")]
    id: Option<Box<RawValue>>,
    #[serde(default)]
    method: Option<Value>,
    #[serde(default, borrow, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(default)]
    result: Option<serde::de::IgnoredAny>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

fn present_owned<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Box<RawValue>>, D::Error> {
    Box::<RawValue>::deserialize(d).map(Some)
}

/// Whether a `jsonrpc` member is the string "2.0" (however its characters are written).
fn is_version_2(raw: &RawValue) -> bool {
    raw.get() == r#""2.0""# || serde_json::from_str::<String>(raw.get()).is_ok_and(|v| v == "2.0")
}

/// Classify one frame of bytes.
pub fn parse(bytes: &[u8]) -> Incoming {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        return match serde_json::from_slice::<Vec<Box<RawValue>>>(bytes) {
            Ok(items) => Incoming::Batch(items.iter().map(|raw| classify(raw.get())).collect()),
            Err(_) => Incoming::Single(Message::Invalid(parse_error())),
        };
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Incoming::Single(classify(text)),
        Err(_) => Incoming::Single(Message::Invalid(parse_error())),
    }
}

/// The -32700 answer to unparseable input.
pub fn parse_error() -> ErrorFrame {
    ErrorFrame::new(
        None,
        rpc_code::PARSE_ERROR,
        "Parse error: the message is not valid JSON",
    )
}

/// Classify one frame's text: not JSON at all is a parse error, JSON that is not a JSON-RPC
/// object an invalid request.
fn classify(text: &str) -> Message {
    let invalid = |id: Option<&RawValue>, message: &str| {
        Message::Invalid(ErrorFrame::new(id, rpc_code::INVALID_REQUEST, message))
    };
    // Read as an envelope first: a well-formed message is then parsed once. Only a text that
    // is no envelope is read again, to tell malformed JSON from the wrong JSON.
    let Ok(envelope) = serde_json::from_str::<Envelope>(text) else {
        if serde_json::from_str::<&RawValue>(text).is_err() {
            return Message::Invalid(parse_error());
        }
        return invalid(None, "Invalid Request: a message must be a JSON-RPC object");
    };
    let valid_id = envelope.id.as_deref().filter(|id| is_valid_id(id));
    if !envelope.jsonrpc.is_some_and(is_version_2) {
        return invalid(valid_id, "Invalid Request: jsonrpc must be \"2.0\"");
    }
    let Some(method) = envelope.method else {
        if envelope.id.is_some() && (envelope.result.is_some() || envelope.error.is_some()) {
            return Message::Response;
        }
        return invalid(valid_id, "Invalid Request: method is missing");
    };
    let Value::String(method) = method else {
        return invalid(valid_id, "Invalid Request: method must be a string");
    };
    let mut duplicate_key = None;
    let params = match envelope.params.map(|raw| {
        groundkit_core::request::parse_object(raw.get().as_bytes())
            .map(Value::Object)
            .or_else(|error| {
                // Parse again, leniently, only to tell a duplicated key from a non-object.
                let lenient = serde_json::from_str::<Value>(raw.get());
                if matches!(lenient, Ok(Value::Object(_))) {
                    duplicate_key = Some(error.to_string());
                }
                lenient
            })
    }) {
        None => None,
        Some(Ok(Value::Object(map))) => Some(map),
        Some(_) => {
            let error = ErrorFrame::new(
                valid_id,
                rpc_code::INVALID_PARAMS,
                "Invalid params: params must be an object (params are passed by name)",
            );
            return match envelope.id {
                // A notification with bad params is still never answered.
                None => Message::Notification {
                    method,
                    params: Map::new(),
                },
                Some(_) if valid_id.is_none() => invalid(None, "Invalid Request: invalid id"),
                Some(_) => Message::Invalid(error),
            };
        }
    };
    match envelope.id {
        None => Message::Notification {
            method,
            params: params.unwrap_or_default(),
        },
        Some(id) if is_valid_id(&id) => Message::Request(Request {
            id,
            method,
            params,
            duplicate_key,
        }),
        Some(_) => invalid(
            None,
            "Invalid Request: id must be a string or an integer (not null, fractional or structured)",
        ),
    }
}

/// A string or an integer literal (no fraction, no exponent).
fn is_valid_id(id: &RawValue) -> bool {
    let text = id.get();
    match text.as_bytes().first() {
        Some(b'"') => true,
        Some(b'-' | b'0'..=b'9') => !text.contains(['.', 'e', 'E']),
        _ => false,
    }
}

/// The id as a map key (its raw text: `1` and `"1"` are different ids).
pub fn id_key(id: &RawValue) -> String {
    id.get().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(text: &str) -> Request {
        match parse(text.as_bytes()) {
            Incoming::Single(Message::Request(r)) => r,
            other => panic!("not a request: {other:?}"),
        }
    }

    fn invalid(text: &str) -> ErrorFrame {
        match parse(text.as_bytes()) {
            Incoming::Single(Message::Invalid(e)) => e,
            other => panic!("not invalid: {other:?}"),
        }
    }

    #[test]
    fn ids_are_kept_as_their_raw_text() {
        for id in [
            "0",
            "-7",
            "9007199254740993",
            "18446744073709551615",
            r#""a\"b""#,
        ] {
            let r = request(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
            assert_eq!(r.id.get(), id);
            assert!(success(&r.id, "{}").contains(&format!(r#""id":{id}"#)));
        }
    }

    #[test]
    fn null_and_fractional_ids_are_invalid_requests() {
        for id in ["null", "1.5", "1e3", "true", "[1]", "{}"] {
            let e = invalid(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
            assert_eq!(e.code, -32600, "id {id}");
            assert!(e.render().contains(r#""id":null"#));
        }
    }

    #[test]
    fn malformed_json_is_a_parse_error_with_null_id() {
        let e = invalid(r#"{"jsonrpc":"2.0","id":1,"method":"#);
        assert_eq!(e.code, -32700);
        assert!(e.render().contains(r#""id":null"#));
    }

    #[test]
    fn positional_params_are_refused() {
        let e = invalid(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":[1]}"#);
        assert_eq!(e.code, -32602);
        assert!(e.render().contains(r#""id":3"#));
    }

    #[test]
    fn responses_and_notifications_are_recognised() {
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Incoming::Single(Message::Response)
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Incoming::Single(Message::Notification { .. })
        ));
    }
}
