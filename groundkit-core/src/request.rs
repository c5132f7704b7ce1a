//! Turning untrusted JSON arguments into a validated request, with errors that name the field.
//!
//! Both transports hand the raw JSON object to the tool's handler, which parses it here: one
//! parser (serde, with the type's `deny_unknown_fields`) and one validator (garde, with the
//! bounds declared on the type) decide, so REST and MCP cannot disagree about a bad request.
//!
//! The JSON is held to what the published schema says ([`crate::schema`]): an integral number
//! such as `5.0` is an integer, `null` is never a value (an optional field is omitted, not null),
//! and an object with a key twice is refused ([`parse_object`]) rather than read as its last
//! value. Errors speak JSON (`expected an integer`), not Rust (`expected u32`).

use std::fmt;

use serde::Deserialize;
use serde::de::{DeserializeOwned, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::error::Error;

/// Deserialize `arguments` into `Req` and check its declared bounds.
pub fn parse<Req>(mut arguments: Value) -> Result<Req, Error>
where
    Req: DeserializeOwned + garde::Validate<Context = ()>,
{
    conform(&mut arguments, &mut Vec::new())?;
    let request: Req = serde_path_to_error::deserialize(arguments).map_err(|err| {
        let path = err.path().to_string();
        let message = json_terms(&err.inner().to_string());
        let field = (path != ".")
            .then_some(path)
            .or_else(|| named_field(&message));
        Error::InvalidRequest { field, message }
    })?;
    if let Err(report) = request.validate() {
        let (path, error) = report
            .iter()
            .next()
            .map(|(path, error)| (path.to_string(), error.message().to_owned()))
            .unwrap_or_else(|| (String::new(), "invalid value".to_owned()));
        return Err(Error::Validation {
            field: path,
            message: error,
        });
    }
    Ok(request)
}

/// Parse a JSON object, refusing a key given twice at any depth.
pub fn parse_object(text: &[u8]) -> Result<Map<String, Value>, Error> {
    let invalid = |message: String| Error::InvalidRequest {
        field: None,
        message,
    };
    match serde_json::from_slice::<Strict>(text) {
        Ok(Strict(Value::Object(object))) => Ok(object),
        Ok(_) => Err(invalid("the arguments must be a JSON object".into())),
        // A duplicate key is reported without its position, which differs between a REST body
        // and the same arguments inside a JSON-RPC frame.
        Err(err) if err.is_data() => {
            let text = err.to_string();
            let bare = text
                .rfind(" at line ")
                .map_or(text.as_str(), |at| &text[..at]);
            Err(invalid(bare.to_owned()))
        }
        Err(err) => Err(invalid(format!("not valid JSON: {err}"))),
    }
}

/// Hold `value` to the schema's reading of JSON: integral numbers become integers, and a `null`
/// anywhere is refused with the path of the field that holds it.
fn conform(value: &mut Value, path: &mut Vec<String>) -> Result<(), Error> {
    match value {
        Value::Null => Err(Error::InvalidRequest {
            field: (!path.is_empty()).then(|| path.join(".")),
            message: "must not be null; omit an optional field instead".into(),
        }),
        Value::Number(number) => {
            if let Some(integer) = integral(number) {
                *number = integer;
            }
            Ok(())
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                path.push(i.to_string());
                conform(item, path)?;
                path.pop();
            }
            Ok(())
        }
        Value::Object(object) => {
            for (key, item) in object.iter_mut() {
                path.push(key.clone());
                conform(item, path)?;
                path.pop();
            }
            Ok(())
        }
        Value::Bool(_) | Value::String(_) => Ok(()),
    }
}

/// `5.0` as the integer `5` (JSON Schema counts it as an integer); `None` for anything else.
fn integral(number: &Number) -> Option<Number> {
    let float = number.as_f64().filter(|_| number.is_f64())?;
    if float.fract() != 0.0 {
        return None;
    }
    if (0.0..18_446_744_073_709_551_616.0).contains(&float) {
        Some(Number::from(float as u64))
    } else if (-9_223_372_036_854_775_808.0..0.0).contains(&float) {
        Some(Number::from(float as i64))
    } else {
        None
    }
}

/// serde's wording with JSON's names for types in place of Rust's.
fn json_terms(message: &str) -> String {
    const TERMS: &[(&str, &str)] = &[
        ("expected usize", "expected a non-negative integer"),
        ("expected u64", "expected a non-negative integer"),
        ("expected u32", "expected a non-negative integer"),
        ("expected u16", "expected a non-negative integer"),
        ("expected u8", "expected a non-negative integer"),
        ("expected isize", "expected an integer"),
        ("expected i64", "expected an integer"),
        ("expected i32", "expected an integer"),
        ("expected i16", "expected an integer"),
        ("expected i8", "expected an integer"),
        ("expected f64", "expected a number"),
        ("expected f32", "expected a number"),
        ("expected a sequence", "expected an array"),
        ("expected a map", "expected an object"),
        ("invalid type: map", "invalid type: object"),
        ("invalid type: sequence", "invalid type: array"),
        ("invalid type: floating point", "invalid type: number"),
        ("invalid value: floating point", "invalid value: number"),
    ];
    let mut text = message.to_owned();
    for (rust, json) in TERMS {
        text = text.replace(rust, json);
    }
    match text.find("expected struct ") {
        Some(at) => {
            let end = text[at..]
                .find([',', ' ', '\n'])
                .filter(|&n| n > "expected struct ".len())
                .map_or(text.len(), |n| at + n);
            text.replace_range(at..end, "expected an object");
            text
        }
        None => text,
    }
}

/// The field a root-level serde message names: `missing field `x`` or `unknown field `x``.
fn named_field(message: &str) -> Option<String> {
    ["missing field `", "unknown field `"]
        .iter()
        .find_map(|prefix| {
            let rest = message.strip_prefix(prefix)?;
            rest.split('`').next().map(str::to_owned)
        })
}

/// A JSON value whose objects hold each key once.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(serde::de::Error::custom(format_args!(
                    "duplicate key `{key}`"
                )));
            }
            let Strict(value) = map.next_value()?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_key_given_twice_is_refused_at_any_depth() {
        assert!(parse_object(br#"{"a": 1, "b": {"c": 2}}"#).is_ok());
        for text in [
            r#"{"a": 1, "a": 2}"#,
            r#"{"a": {"c": 1, "c": 1}}"#,
            r#"{"a": [{"c": 1, "c": 2}]}"#,
        ] {
            let err = parse_object(text.as_bytes()).expect_err(text);
            assert_eq!(err.kind(), "invalid_request", "{text}");
            assert!(err.to_string().contains("duplicate key `"), "{text}: {err}");
        }
    }

    #[test]
    fn integral_numbers_are_integers_and_null_is_refused_with_its_field() {
        let mut value = json!({"a": 5.0, "b": [2.0, 2.5], "c": -3.0});
        conform(&mut value, &mut Vec::new()).expect("no null");
        assert_eq!(value, json!({"a": 5, "b": [2, 2.5], "c": -3}));
        let err =
            conform(&mut json!({"mode": {"lexical": null}}), &mut Vec::new()).expect_err("null");
        assert_eq!(err.field(), Some("mode.lexical"));
    }

    #[test]
    fn type_errors_read_as_json() {
        assert_eq!(
            json_terms("invalid type: string \"5\", expected u32"),
            "invalid type: string \"5\", expected a non-negative integer"
        );
        assert_eq!(
            json_terms("invalid type: floating point `2.5`, expected u32"),
            "invalid type: number `2.5`, expected a non-negative integer"
        );
        assert_eq!(
            json_terms("invalid type: sequence, expected struct Inner"),
            "invalid type: array, expected an object"
        );
        assert_eq!(named_field("missing field `query`"), Some("query".into()));
    }
}
