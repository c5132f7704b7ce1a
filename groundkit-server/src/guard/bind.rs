//! The bind guard: who can reach the socket.
//!
//! Only a loopback *address literal* (127.0.0.0/8, `::1`, and their IPv4-mapped form
//! `::ffff:127.0.0.0/104`) binds by default ([`check_bind`]). `0.0.0.0`, `::`, a routable
//! address, and any name — even `localhost`, whose resolution this process does not control —
//! are refused unless the operator passes `--allow-remote-access`, and then a warning names what
//! is published. The classification uses the standard library's IP types and never resolves a
//! name: a resolver that answers "loopback" for a name the socket then binds elsewhere would
//! publish the corpus while saying it did not.
//!
//! The operator can name the Hosts clients use (`--allowed-host`, [`AllowedHosts`]; the
//! [Host policy](super::host) then answers only those, the loopback names and the bound address
//! or name). A wildcard bind must name at least one, or say `--allow-any-host`
//! ([`check_allowed_hosts`]): it is reachable from every network the machine is on, so an
//! unrestricted Host would leave DNS rebinding open through any browser there. Whether a bind is
//! a wildcard is read from the addresses the socket will be bound to ([`BindTarget::addrs`]:
//! what the resolver makes of the operator's spelling), not from the spelling, so `0`, `0.0` and
//! `0x0`, which the resolver reads as `0.0.0.0`, are wildcards as much as `0.0.0.0`, `::` and
//! `::ffff:0.0.0.0` are.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

use super::ip_literal;

/// Why a bind address is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BindError {
    /// Not a loopback address literal, and remote access was not acknowledged.
    #[error(
        "refusing to bind {host}: without --allow-remote-access only loopback address literals (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104) may be bound; groundkit has no authentication, so anything else publishes every tool to whoever can reach it"
    )]
    NotLoopback {
        /// The address as given.
        host: String,
    },
    /// A wildcard bind (an address the socket would be bound to is `0.0.0.0` or `::`) that
    /// names no Host to allow: it would answer any Host, which leaves DNS rebinding open
    /// through every browser on the network.
    #[error(
        "refusing to bind {host} without a Host to allow: name each Host clients use with --allowed-host NAME (repeatable), or pass --allow-any-host to turn DNS-rebinding protection off deliberately"
    )]
    WildcardWithoutAllowedHost {
        /// The address as given.
        host: String,
    },
}

/// The Host names the operator allows beyond those derived from the bind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedHosts {
    /// `--allowed-host`: names (or address literals) clients use to reach the server.
    pub names: Vec<String>,
    /// `--allow-any-host`: answer any Host (DNS-rebinding protection off).
    pub any: bool,
}

/// Refuse a wildcard bind that names no Host: it must list the Hosts it serves, or say
/// deliberately that it serves any. `addrs` are the addresses the socket will be bound to
/// ([`BindTarget::addrs`]); `host` is the operator's spelling, for the message.
pub fn check_allowed_hosts(
    host: &str,
    addrs: &[SocketAddr],
    allowed: &AllowedHosts,
) -> Result<(), BindError> {
    let wildcard = addrs.iter().any(|a| a.ip().to_canonical().is_unspecified());
    if wildcard && allowed.names.is_empty() && !allowed.any {
        return Err(BindError::WildcardWithoutAllowedHost {
            host: host.to_owned(),
        });
    }
    Ok(())
}

/// What the bind address is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BindTarget {
    /// A loopback address literal.
    Loopback(IpAddr),
    /// Any other address literal (routable, or unspecified like `0.0.0.0`).
    Remote(IpAddr),
    /// A name, resolved when the socket is bound.
    Name(String),
}

impl BindTarget {
    /// The addresses a socket bound to this target on `port` may get: the literal itself, or
    /// every address the resolver gives the name (the bind takes the first that binds).
    pub fn addrs(&self, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        match self {
            BindTarget::Loopback(ip) | BindTarget::Remote(ip) => {
                Ok(vec![SocketAddr::new(*ip, port)])
            }
            BindTarget::Name(name) => Ok((name.as_str(), port).to_socket_addrs()?.collect()),
        }
    }
}

/// Decide whether `host` may be bound. Only loopback literals pass without `allow_remote`; with
/// it, everything passes and a warning says what is published.
pub fn check_bind(host: &str, allow_remote: bool) -> Result<BindTarget, BindError> {
    let target = match ip_literal(host) {
        // `to_canonical` reads an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) as the IPv4
        // address it maps, so a mapped loopback is loopback.
        Some(ip) if ip.to_canonical().is_loopback() => return Ok(BindTarget::Loopback(ip)),
        Some(ip) => BindTarget::Remote(ip),
        None => BindTarget::Name(host.to_owned()),
    };
    if !allow_remote {
        return Err(BindError::NotLoopback {
            host: host.to_owned(),
        });
    }
    match &target {
        BindTarget::Remote(ip) if ip.is_unspecified() => tracing::warn!(
            "--allow-remote-access: binding {ip} publishes every tool of this server, unauthenticated, on every network interface of this machine"
        ),
        BindTarget::Remote(ip) => tracing::warn!(
            "--allow-remote-access: binding {ip} publishes every tool of this server, unauthenticated, to every host that can route to {ip}"
        ),
        BindTarget::Name(name) => tracing::warn!(
            "--allow-remote-access: binding the name {name:?} publishes every tool of this server, unauthenticated, on whatever addresses it resolves to"
        ),
        BindTarget::Loopback(_) => {}
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_literals_bind_by_default() {
        for host in [
            "127.0.0.1",
            "127.8.9.10",
            "::1",
            "[::1]",
            "::ffff:127.0.0.1",
            "[::ffff:127.0.0.2]",
        ] {
            assert!(
                matches!(check_bind(host, false), Ok(BindTarget::Loopback(_))),
                "{host}"
            );
        }
        for host in [
            "0.0.0.0",
            "::",
            "::ffff:0.0.0.0",
            "::ffff:192.168.1.20",
            "192.168.1.20",
            "8.8.8.8",
            "localhost",
            "example.com",
        ] {
            assert!(check_bind(host, false).is_err(), "{host}");
            assert!(check_bind(host, true).is_ok(), "{host}");
        }
    }

    #[test]
    fn a_wildcard_bind_must_name_its_hosts_or_allow_any_deliberately() {
        for host in ["0.0.0.0", "::", "[::]", "::ffff:0.0.0.0", "0", "0.0", "0x0"] {
            let target = check_bind(host, true).expect("allowed remote");
            let target = target.addrs(9000).expect("resolved");
            let err = check_allowed_hosts(host, &target, &AllowedHosts::default())
                .expect_err("no Host named");
            assert!(err.to_string().contains("--allowed-host"), "{err}");
            let named = AllowedHosts {
                names: vec!["Corpus.LAN".into()],
                any: false,
            };
            assert!(check_allowed_hosts(host, &target, &named).is_ok());
            let any = AllowedHosts {
                names: vec![],
                any: true,
            };
            assert!(check_allowed_hosts(host, &target, &any).is_ok());
        }
        let specific = check_bind("192.168.1.20", true).expect("allowed remote");
        let specific = specific.addrs(9000).expect("a literal");
        assert!(check_allowed_hosts("192.168.1.20", &specific, &AllowedHosts::default()).is_ok());
    }
}
