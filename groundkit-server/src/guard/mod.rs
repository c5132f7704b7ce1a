//! Serving safely without authentication. groundkit has no authentication, so two decisions
//! stand in for it:
//!
//! - [`bind`]: who can reach the socket. Only loopback address literals bind unless the
//!   operator says otherwise, and a wildcard bind must name the Hosts it serves.
//! - [`host`]: which requests are answered once they arrive. The Host/Origin policy derived
//!   once from the bind, and the middleware ([`host_guard`]) that applies it to every route
//!   before any body is read.
//! - [`expect`]: the same check for a request sending `Expect: 100-continue`, before the
//!   interim `100 Continue` that would invite its body.

pub(crate) mod bind;
pub(crate) mod expect;
pub(crate) mod host;

use std::net::IpAddr;

pub use bind::{AllowedHosts, BindError, BindTarget, check_allowed_hosts, check_bind};
pub(crate) use expect::expect_guard;
pub use host::{HostPolicy, host_guard};

/// Parse an IP literal, with or without IPv6 brackets.
fn ip_literal(host: &str) -> Option<IpAddr> {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    bare.parse().ok()
}
