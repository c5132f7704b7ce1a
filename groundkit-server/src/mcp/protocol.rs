//! The protocol revisions this server speaks, and the rules that differ between them.
//!
//! Two eras: the handshake era (2025-03-26, 2025-06-18, 2025-11-25: `initialize`, then optional
//! sessions) and the stateless era (2026-07-28: no `initialize`, every request carries its
//! version and client capabilities in `params._meta`, `server/discover` replaces the handshake).
//! Everything that depends on the revision asks a [`Revision`] rather than comparing strings.
//!
//! Era resolution lives here too: which era a request belongs to ([`is_stateless`]) and the
//! revision it is served under ([`handshake_revision`], [`stateless_revision`]). A transport
//! contributes only what its envelope says: the `MCP-Protocol-Version` header, read once into a
//! [`HeaderVersion`], and (over HTTP) a check that its headers agree with the body.

use serde_json::{Map, Value, json};

use super::jsonrpc::{ErrorFrame, Request};
use crate::edge::problem::rpc_code;

/// `_meta` key carrying the protocol version of a stateless-era request.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key carrying the client capabilities of a stateless-era request.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key carrying the server's name and version on a `server/discover` result.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// JSON-RPC codes the stateless era adds (the 2026-07-28 schema defines them; none is invented).
pub mod code {
    /// A request header disagrees with the body (or is missing).
    pub const HEADER_MISMATCH: i32 = -32020;
    /// The requested protocol version is not one this server implements.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;
}

/// A protocol revision this server implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Revision {
    /// Streamable HTTP, batching, tool annotations.
    V2025_03_26,
    /// Batching removed; `outputSchema`, `structuredContent`, `title`; version header required.
    V2025_06_18,
    /// Origin 403, argument errors as tool results, JSON Schema 2020-12 default, `icons`.
    V2025_11_25,
    /// Stateless: `server/discover`, per-request `_meta`, `Mcp-Method`/`Mcp-Name`, cache hints.
    V2026_07_28,
}

impl Revision {
    /// Every supported revision, oldest first.
    pub const ALL: [Revision; 4] = [
        Revision::V2025_03_26,
        Revision::V2025_06_18,
        Revision::V2025_11_25,
        Revision::V2026_07_28,
    ];

    /// The newest handshake-era revision: the answer to an `initialize` asking for a version
    /// this server does not know.
    pub const LATEST_HANDSHAKE: Revision = Revision::V2025_11_25;

    /// What a request without any version information is treated as (the transport spec's
    /// rule for a missing `MCP-Protocol-Version` header).
    pub const ASSUMED: Revision = Revision::V2025_03_26;

    /// The wire string.
    pub const fn as_str(self) -> &'static str {
        match self {
            Revision::V2025_03_26 => "2025-03-26",
            Revision::V2025_06_18 => "2025-06-18",
            Revision::V2025_11_25 => "2025-11-25",
            Revision::V2026_07_28 => "2026-07-28",
        }
    }

    /// The revision named by `s`, if this server implements it.
    pub fn parse(s: &str) -> Option<Revision> {
        Self::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// Whether this is the stateless era (no handshake, no sessions, `_meta` on every request).
    pub const fn is_stateless(self) -> bool {
        matches!(self, Revision::V2026_07_28)
    }

    /// Whether a JSON array of messages is accepted (2025-03-26 only).
    pub const fn allows_batches(self) -> bool {
        matches!(self, Revision::V2025_03_26)
    }

    /// Whether tool definitions carry `title` and `outputSchema`, and results `structuredContent`.
    pub const fn has_structured_output(self) -> bool {
        !matches!(self, Revision::V2025_03_26)
    }

    /// Whether a tool result may carry `resource_link` content blocks.
    pub const fn has_resource_links(self) -> bool {
        !matches!(self, Revision::V2025_03_26)
    }

    /// Whether tools and resources may carry `icons`.
    pub const fn has_icons(self) -> bool {
        matches!(self, Revision::V2025_11_25 | Revision::V2026_07_28)
    }

    /// The JSON-RPC code of a `resources/read` whose resource does not exist: MCP's -32002 in
    /// the handshake era, -32602 (invalid params) in the stateless era (SEP-2164).
    pub const fn resource_not_found_code(self) -> i32 {
        if self.is_stateless() {
            rpc_code::INVALID_PARAMS
        } else {
            rpc_code::RESOURCE_NOT_FOUND
        }
    }

    /// The version an `initialize` asking for `requested` is answered with: the same one when
    /// it is a handshake-era version this server implements, else the latest handshake version
    /// (never an error: the client decides whether it can live with the answer).
    pub fn negotiate(requested: Option<&str>) -> Revision {
        match requested.and_then(Revision::parse) {
            Some(r) if !r.is_stateless() => r,
            _ => Revision::LATEST_HANDSHAKE,
        }
    }

    /// The supported versions as wire strings, oldest first.
    pub fn supported() -> Vec<&'static str> {
        Self::ALL.iter().map(|r| r.as_str()).collect()
    }
}

impl std::fmt::Display for Revision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a stateless-era request's `params._meta` says about itself.
#[derive(Debug, Clone, PartialEq)]
pub enum MetaVersion {
    /// No `_meta` protocol version: a handshake-era request.
    Absent,
    /// A version string, supported or not.
    Present(String),
}

/// The `_meta` protocol version of `params`, if it names one.
pub fn meta_version(params: Option<&Map<String, Value>>) -> MetaVersion {
    match params
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
    {
        Some(Value::String(v)) => MetaVersion::Present(v.clone()),
        Some(_) => MetaVersion::Present(String::new()),
        None => MetaVersion::Absent,
    }
}

/// Why a stateless-era request's `_meta` is refused, if it is.
pub fn check_meta(params: Option<&Map<String, Value>>) -> Result<String, &'static str> {
    let meta = params
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
        .ok_or("this request must carry params._meta with the protocol version and client capabilities")?;
    let version = meta
        .get(META_PROTOCOL_VERSION)
        .and_then(Value::as_str)
        .ok_or("params._meta must carry io.modelcontextprotocol/protocolVersion as a string")?;
    if !meta
        .get(META_CLIENT_CAPABILITIES)
        .is_some_and(Value::is_object)
    {
        return Err(
            "params._meta must carry io.modelcontextprotocol/clientCapabilities as an object",
        );
    }
    Ok(version.to_owned())
}

/// What a request's `MCP-Protocol-Version` header names: the one reading of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderVersion<'a> {
    /// No header (stdio, or an HTTP client that sent none).
    Absent,
    /// A revision this server implements.
    Known(Revision),
    /// Something else, trimmed.
    Unknown(&'a str),
}

impl<'a> HeaderVersion<'a> {
    /// Read the header's value, if there is one.
    pub fn read(value: Option<&'a str>) -> Self {
        match value.map(str::trim) {
            None => HeaderVersion::Absent,
            Some(value) => {
                Revision::parse(value).map_or(HeaderVersion::Unknown(value), Self::Known)
            }
        }
    }

    /// Whether it names the stateless era.
    pub fn is_stateless(self) -> bool {
        matches!(self, HeaderVersion::Known(revision) if revision.is_stateless())
    }

    /// The version as sent (trimmed), if a header was.
    pub fn as_str(self) -> Option<&'a str> {
        match self {
            HeaderVersion::Absent => None,
            HeaderVersion::Known(revision) => Some(revision.as_str()),
            HeaderVersion::Unknown(value) => Some(value),
        }
    }
}

/// Whether `request` belongs to the stateless era: it names its version in `_meta`, is a
/// `server/discover`, or its envelope declares 2026-07-28.
pub fn is_stateless(request: &Request, header: HeaderVersion<'_>) -> bool {
    request.method == "server/discover"
        || meta_version(request.params.as_ref()) != MetaVersion::Absent
        || header.is_stateless()
}

/// The revision of a handshake-era request: the header's (which must name a supported version),
/// else the `negotiated` one, else the transport spec's assumption.
pub fn handshake_revision(
    negotiated: Option<Revision>,
    header: HeaderVersion<'_>,
) -> Result<Revision, ErrorFrame> {
    match header {
        HeaderVersion::Known(revision) => Ok(revision),
        HeaderVersion::Unknown(_) => Err(ErrorFrame::new(
            None,
            rpc_code::INVALID_REQUEST,
            "Bad Request: unsupported MCP-Protocol-Version",
        )
        .with_data(json!({ "supported": Revision::supported() }))),
        HeaderVersion::Absent => Ok(negotiated.unwrap_or(Revision::ASSUMED)),
    }
}

/// The revision of a stateless-era request, after checking its `_meta` and that its envelope
/// agrees with its body (`envelope` gets the `_meta` version and says what disagrees).
pub fn stateless_revision(
    request: &Request,
    envelope: impl FnOnce(&str) -> Result<(), &'static str>,
) -> Result<Revision, ErrorFrame> {
    let fail = |code: i32, message: &str| ErrorFrame::new(Some(&request.id), code, message);
    let version = check_meta(request.params.as_ref()).map_err(|message| {
        fail(
            rpc_code::INVALID_PARAMS,
            &format!("Invalid params: {message}"),
        )
    })?;
    envelope(&version).map_err(|message| fail(code::HEADER_MISMATCH, message))?;
    match Revision::parse(&version) {
        Some(revision) if revision.is_stateless() => Ok(revision),
        _ => Err(fail(
            code::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
        )
        .with_data(json!({ "supported": Revision::supported(), "requested": version }))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_versions_negotiate_to_the_latest_handshake_version() {
        assert_eq!(
            Revision::negotiate(Some("1999-01-01")),
            Revision::V2025_11_25
        );
        assert_eq!(Revision::negotiate(None), Revision::V2025_11_25);
        assert_eq!(
            Revision::negotiate(Some("2026-07-28")),
            Revision::V2025_11_25
        );
        assert_eq!(
            Revision::negotiate(Some("2025-06-18")),
            Revision::V2025_06_18
        );
    }
}
