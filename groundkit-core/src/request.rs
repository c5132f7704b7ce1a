//! Turning untrusted JSON arguments into a validated request, with errors that name the field.
//!
//! Both transports hand the raw JSON object to the tool's handler, which parses it here: one
//! parser (serde, with the type's `deny_unknown_fields`) and one validator (garde, with the
//! bounds declared on the type) decide, so REST and MCP cannot disagree about a bad request.

use serde::de::DeserializeOwned;

use crate::error::Error;

/// Deserialize `arguments` into `Req` and check its declared bounds.
pub fn parse<Req>(arguments: serde_json::Value) -> Result<Req, Error>
where
    Req: DeserializeOwned + garde::Validate<Context = ()>,
{
    let request: Req = serde_path_to_error::deserialize(arguments).map_err(|err| {
        let path = err.path().to_string();
        let field = (path != ".").then_some(path);
        Error::InvalidRequest {
            field,
            message: err.into_inner().to_string(),
        }
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
