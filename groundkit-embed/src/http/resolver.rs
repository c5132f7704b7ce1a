//! The HTTP embedder's name resolver: the one place its connections get their addresses.
//!
//! ureq resolves a request's host through the agent's [`Resolver`] and hands exactly the
//! addresses it returns to its TCP connector, which connects to nothing else (no proxy is
//! configured, so no other host is resolved or called). This resolver looks the host up with
//! the system resolver (std's `ToSocketAddrs`, as ureq's default does) on every request, vets
//! every address with the [`OutboundPolicy`], and returns only the vetted ones. The check and
//! the connection therefore use the same answer: a name that re-resolves to a private address
//! after the check (DNS rebinding) is not reached, because no second lookup happens between the
//! two.

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::mpsc;
use std::time::Duration;

use ureq::http::Uri;
use ureq::unversioned::resolver::{ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;

use crate::outbound::OutboundPolicy;

/// A host refused by the policy: carried out of ureq as `ureq::Error::Other`.
#[derive(Debug)]
pub(super) struct Refused(pub(super) groundkit_core::Error);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Refused {}

/// Resolves with the system resolver and keeps only the addresses the policy permits.
#[derive(Debug)]
pub(super) struct VettingResolver {
    pub(super) policy: OutboundPolicy,
}

impl Resolver for VettingResolver {
    fn resolve(
        &self,
        uri: &Uri,
        _config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let (Some(authority), Some(scheme)) = (uri.authority(), uri.scheme_str()) else {
            return Err(ureq::Error::BadUri("no host".to_owned()));
        };
        let port = match (authority.port_u16(), scheme) {
            (Some(port), _) => port,
            (None, "https") => 443,
            (None, _) => 80,
        };
        let host = authority.host();
        let limit = (!timeout.after.is_not_happening()).then(|| *timeout.after);
        let found = lookup(format!("{host}:{port}"), limit)?;
        let vetted = self
            .policy
            .vet(host, &found)
            .map_err(|err| ureq::Error::Other(Box::new(Refused(err))))?;
        let mut out = self.empty();
        for addr in vetted {
            if out.try_push(addr).is_err() {
                break;
            }
        }
        Ok(out)
    }
}

/// The addresses of `host_port` from the system resolver, within `limit` when one is given (the
/// lookup then runs on its own thread, which is left to finish on its own if it is late).
fn lookup(host_port: String, limit: Option<Duration>) -> Result<Vec<SocketAddr>, ureq::Error> {
    let Some(limit) = limit else {
        return Ok(host_port
            .to_socket_addrs()
            .map_err(|_| ureq::Error::HostNotFound)?
            .collect());
    };
    let (tx, rx) = mpsc::sync_channel(1);
    std::thread::spawn(move || {
        let found = host_port.to_socket_addrs().map(Iterator::collect::<Vec<_>>);
        let _ = tx.send(found);
    });
    match rx.recv_timeout(limit) {
        Ok(Ok(found)) => Ok(found),
        Ok(Err(_)) | Err(mpsc::RecvTimeoutError::Disconnected) => Err(ureq::Error::HostNotFound),
        Err(mpsc::RecvTimeoutError::Timeout) => Err(ureq::Error::Timeout(ureq::Timeout::Resolve)),
    }
}
