//! The Host/Origin policy: which requests are answered once they arrive.
//!
//! A loopback socket is still reachable from a browser through DNS rebinding: a page re-points
//! its own name at 127.0.0.1 and its requests become same-origin. The `Host` header still
//! carries the attacker's name, so it is checked against a list derived once from the bind
//! ([`HostPolicy::derive`]): a loopback literal allows only this machine's loopback names (with
//! and without the port); a routable literal allows any Host (rebinding gains nothing against a
//! socket the attacker can reach directly), with a warning; a name is judged by the address
//! its socket was bound to — loopback allows only loopback names and the name itself, any
//! other address allows any Host. Reading the bound address is right here and wrong for the
//! [bind](super::bind)'s loopback decision because the errors are not the same size: a wrong
//! answer here costs a refused client, not a published corpus. Hosts the operator names with
//! `--allowed-host` ([`AllowedHosts`]) restrict the policy to loopback names, the bound address
//! or name, and those, whatever the bind (a wildcard bind must name some, or allow any:
//! [`check_allowed_hosts`](super::bind::check_allowed_hosts)).
//!
//! The Host is read from the raw `Host` header only — never `Forwarded` or `X-Forwarded-Host`,
//! which a rebinding page can set — and a request with no Host, or more than one, is refused
//! (400 `invalid_host`). Over HTTP/1.x actix-http's parser refuses most of those first, with an
//! empty 400, and closes the connection: an HTTP/1.1 request without a Host, and a request of
//! any version with two. An HTTP/1.0 request without one reaches this guard. A request target
//! in absolute form (`GET http://name/path`) names the request's host itself (RFC 9112
//! §3.2.2), so its authority must be allowed as well.
//!
//! A foreign `Origin` is refused too (a browser page from another site): under a restricted
//! policy an `Origin` must be the server's own, scheme, host and port
//! ([`HostPolicy::allows_origin`]), so a page served from another port of the same machine, or
//! over https, is foreign. A page served through a TLS-terminating proxy carries the proxy's
//! origin; such a proxy checks origins itself, in front of a server that allows any Host
//! (`--allow-any-host`).
//!
//! [`host_guard`] applies both to every route, before any body is read; the MCP HTTP transport
//! wraps its own resource in it again, with its state's policy, so it stays safe if mounted in
//! another app.

use std::net::{IpAddr, SocketAddr};

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Uri;
use actix_web::http::header::{self, HeaderMap};
use actix_web::middleware::Next;
use actix_web::web;

use super::bind::{AllowedHosts, BindTarget};
use super::ip_literal;
use crate::edge::id::RequestId;
use crate::edge::problem::{self, Refusal};

/// Which `Host` (and `Origin`) values a server answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostPolicy {
    /// Only these host names (lower case, IPv6 in brackets), each with no port or with `port`
    /// (any port when `port` is `None`).
    Restricted {
        /// Allowed names.
        names: Vec<String>,
        /// The bound port, when known.
        port: Option<u16>,
    },
    /// Any Host: the socket is reachable from other machines, where Host checks protect
    /// nothing.
    Unrestricted,
}

impl Default for HostPolicy {
    /// Fail closed: loopback names on any port, until the bind says otherwise.
    fn default() -> Self {
        Self::loopback(None, None)
    }
}

impl HostPolicy {
    /// This machine's loopback names (`localhost`, `127.0.0.1`, `[::1]`) plus `extra`, on `port`
    /// (any port when `None`).
    pub fn loopback(port: Option<u16>, extra: Option<&str>) -> Self {
        let mut names: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
            .into_iter()
            .map(str::to_owned)
            .collect();
        if let Some(extra) = extra {
            let extra = normalise(extra);
            if !names.contains(&extra) {
                names.push(extra);
            }
        }
        Self::Restricted { names, port }
    }

    /// Also allow `extra` (normalised as [`HostPolicy::loopback`] does); no change to an
    /// unrestricted policy.
    fn also(mut self, extra: &[String]) -> Self {
        if let Self::Restricted { names, .. } = &mut self {
            for name in extra {
                let name = normalise(name);
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        self
    }

    /// The policy for a server bound as `target` at `bound`, derived once at start.
    ///
    /// `--allow-any-host` makes it unrestricted; `--allowed-host` names make it restricted to
    /// this machine's loopback names, the bound address or name, and those names, whatever the
    /// bind. Without either, the bind decides, as the module documentation describes.
    pub fn derive(target: &BindTarget, bound: SocketAddr, allowed: &AllowedHosts) -> Self {
        let port = Some(bound.port());
        if allowed.any {
            tracing::warn!(
                "--allow-any-host: Host validation is off; any page a browser on a network that reaches this server loads can call it through DNS rebinding"
            );
            return Self::Unrestricted;
        }
        if !allowed.names.is_empty() {
            let bound_name = match target {
                BindTarget::Loopback(ip) | BindTarget::Remote(ip) => ip.to_string(),
                BindTarget::Name(name) => name.clone(),
            };
            return Self::loopback(port, Some(&bound_name)).also(&allowed.names);
        }
        match target {
            BindTarget::Loopback(ip) => Self::loopback(port, Some(&ip.to_string())),
            BindTarget::Remote(ip) => {
                tracing::warn!(
                    "Host validation is off: {ip} is reachable from other machines, where DNS-rebinding protection adds nothing"
                );
                Self::Unrestricted
            }
            BindTarget::Name(name) if bound.ip().to_canonical().is_loopback() => {
                Self::loopback(port, Some(name))
            }
            BindTarget::Name(name) => {
                tracing::warn!(
                    "Host validation is off: {name:?} was bound at {}, reachable from other machines",
                    bound.ip()
                );
                Self::Unrestricted
            }
        }
    }

    /// Whether a `Host` header value (`name` or `name:port`) is allowed.
    pub fn allows_host(&self, host: &str) -> bool {
        let Self::Restricted { names, port } = self else {
            return true;
        };
        let Some((name, given_port)) = split_host(host) else {
            return false;
        };
        let port_ok = match (given_port, port) {
            (None, _) | (_, None) => true,
            (Some(given), Some(port)) => given == *port,
        };
        port_ok && names.iter().any(|n| n.eq_ignore_ascii_case(name))
    }

    /// Whether an `Origin` header value is allowed: this server's own origin, as a browser
    /// that addresses it directly sends it. The server speaks plain HTTP, so the scheme is
    /// `http`; the host is one the policy allows; and the port is the bound one, written out or
    /// (port 80) left out, as browsers leave out a scheme's default port.
    pub fn allows_origin(&self, origin: &str) -> bool {
        let Self::Restricted { port, .. } = self else {
            return true;
        };
        let Some(authority) = origin.strip_prefix("http://") else {
            return false;
        };
        if authority.contains(['/', '@', '?', '#']) {
            return false;
        }
        let Some((name, given)) = split_host(authority) else {
            return false;
        };
        let port_ok = match port {
            Some(port) => given.unwrap_or(80) == *port,
            None => true,
        };
        port_ok && self.allows_host(name)
    }
}

/// A host name lower-cased, an IPv6 literal in brackets.
fn normalise(name: &str) -> String {
    match ip_literal(name) {
        Some(IpAddr::V6(v6)) => format!("[{v6}]"),
        Some(IpAddr::V4(v4)) => v4.to_string(),
        None => name.to_ascii_lowercase(),
    }
}

/// Split `name[:port]` (IPv6 in brackets); `None` when malformed.
fn split_host(host: &str) -> Option<(&str, Option<u16>)> {
    if host.is_empty() || host.contains(|c: char| c.is_whitespace() || c == '/' || c == '@') {
        return None;
    }
    let (name, port) = if host.starts_with('[') {
        let end = host.find(']')?;
        let (name, rest) = host.split_at(end + 1);
        match rest {
            "" => (name, None),
            _ => (name, Some(rest.strip_prefix(':')?)),
        }
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        }
    };
    let port = match port {
        Some(port) => Some(port.parse::<u16>().ok()?),
        None => None,
    };
    (!name.is_empty()).then_some((name, port))
}

/// Check the raw `Host` (exactly one, allowed), the authority of a `target` in absolute form
/// (allowed too: RFC 9112 §3.2.2 makes it the request's host, whatever the `Host` says) and
/// `Origin` (absent, or allowed) headers.
pub fn check(policy: &HostPolicy, target: &Uri, headers: &HeaderMap) -> Result<(), Refusal> {
    let mut hosts = headers.get_all(header::HOST);
    let host = match (hosts.next(), hosts.next()) {
        (Some(host), None) => host.to_str().map_err(|_| Refusal::ForbiddenHost)?,
        _ => return Err(Refusal::InvalidHost),
    };
    if !policy.allows_host(host) {
        return Err(Refusal::ForbiddenHost);
    }
    if let Some(authority) = target.authority()
        && !policy.allows_host(authority.as_str())
    {
        return Err(Refusal::ForbiddenHost);
    }
    let mut origins = headers.get_all(header::ORIGIN);
    match (origins.next(), origins.next()) {
        (None, _) => Ok(()),
        (Some(origin), None) => match origin.to_str() {
            Ok(origin) if policy.allows_origin(origin) => Ok(()),
            _ => Err(Refusal::ForbiddenOrigin),
        },
        (Some(_), Some(_)) => Err(Refusal::ForbiddenOrigin),
    }
}

/// Middleware applying [`check`] to every route before routing, with the policy the app holds
/// as `web::Data<HostPolicy>` (none registered: the fail-closed default).
pub async fn host_guard(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let verdict = match req.app_data::<web::Data<HostPolicy>>() {
        Some(policy) => check(policy, req.uri(), req.headers()),
        None => check(&HostPolicy::default(), req.uri(), req.headers()),
    };
    match verdict {
        Ok(()) => Ok(next.call(req).await?.map_into_boxed_body()),
        Err(refusal) => {
            let response = problem::response(refusal, &RequestId::of(req.request()));
            Ok(req.into_response(response))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_policy_allows_this_machines_names_with_and_without_port() {
        let bound: SocketAddr = "127.0.0.1:8123".parse().expect("a socket address literal");
        let policy = HostPolicy::derive(
            &BindTarget::Loopback(bound.ip()),
            bound,
            &AllowedHosts::default(),
        );
        for ok in [
            "localhost",
            "localhost:8123",
            "127.0.0.1:8123",
            "[::1]:8123",
            "LOCALHOST",
        ] {
            assert!(policy.allows_host(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:8123",
            "localhost:8124",
            "127.0.0.1.nip.io",
            "",
            "[::1",
        ] {
            assert!(!policy.allows_host(bad), "{bad}");
        }
        assert!(policy.allows_origin("http://localhost:8123"));
        assert!(policy.allows_origin("http://[::1]:8123"));
        assert!(!policy.allows_origin("http://evil.example"));
        assert!(!policy.allows_origin("null"));
        // Scheme and port are the origin's as much as the host is.
        assert!(!policy.allows_origin("https://localhost:8123"));
        assert!(!policy.allows_origin("http://localhost"));
        assert!(!policy.allows_origin("http://localhost:8124"));
        let on_80 = HostPolicy::loopback(Some(80), None);
        assert!(on_80.allows_origin("http://localhost"));
        assert!(on_80.allows_origin("http://localhost:80"));
        assert!(!on_80.allows_origin("https://localhost"));
    }

    #[test]
    fn missing_or_duplicated_host_is_refused_whatever_forwarding_headers_say() {
        use actix_web::http::header::{HeaderName, HeaderValue};
        let policy = HostPolicy::loopback(None, None);
        let header = |name: &'static str, value: &'static str| {
            (
                HeaderName::from_static(name),
                HeaderValue::from_static(value),
            )
        };
        let headers = |pairs: &[(HeaderName, HeaderValue)]| {
            let mut map = HeaderMap::new();
            for (name, value) in pairs {
                map.append(name.clone(), value.clone());
            }
            map
        };
        let origin_form = Uri::from_static("/languages");
        let forwarded = header("x-forwarded-host", "localhost");
        assert!(matches!(
            check(&policy, &origin_form, &headers(&[forwarded])),
            Err(Refusal::InvalidHost)
        ));
        let twice = headers(&[header("host", "localhost"), header("host", "localhost")]);
        assert!(matches!(
            check(&policy, &origin_form, &twice),
            Err(Refusal::InvalidHost)
        ));
        let good = headers(&[header("host", "localhost")]);
        assert!(check(&policy, &origin_form, &good).is_ok());
        let two_origins = headers(&[
            header("host", "localhost"),
            header("origin", "http://localhost"),
            header("origin", "http://localhost"),
        ]);
        assert!(matches!(
            check(&policy, &origin_form, &two_origins),
            Err(Refusal::ForbiddenOrigin)
        ));
    }

    #[test]
    fn an_absolute_form_target_must_name_an_allowed_host_too() {
        use actix_web::http::header::HeaderValue;
        let policy = HostPolicy::loopback(Some(8123), None);
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("localhost:8123"));
        for (target, allowed) in [
            ("/languages", true),
            ("http://localhost:8123/languages", true),
            ("http://127.0.0.1/languages", true),
            ("http://evil.example/languages", false),
            ("http://localhost:8124/languages", false),
            ("http://user@localhost:8123/languages", false),
        ] {
            let target = Uri::from_static(target);
            let verdict = check(&policy, &target, &headers);
            match allowed {
                true => assert!(verdict.is_ok(), "{target}"),
                false => assert!(matches!(verdict, Err(Refusal::ForbiddenHost)), "{target}"),
            }
        }
    }

    #[test]
    fn routable_binds_are_unrestricted_and_a_name_is_judged_by_the_address_it_bound() {
        let none = AllowedHosts::default();
        let bound: SocketAddr = "192.168.1.20:9000"
            .parse()
            .expect("a socket address literal");
        assert_eq!(
            HostPolicy::derive(&BindTarget::Remote(bound.ip()), bound, &none),
            HostPolicy::Unrestricted
        );
        let name = BindTarget::Name("corpus.lan".into());
        assert_eq!(
            HostPolicy::derive(&name, bound, &none),
            HostPolicy::Unrestricted
        );
        let loopback: SocketAddr = "127.0.0.1:9000".parse().expect("a socket address literal");
        let policy = HostPolicy::derive(&name, loopback, &none);
        assert!(policy.allows_host("corpus.lan:9000"));
        assert!(!policy.allows_host("evil.example:9000"));
    }

    #[test]
    fn a_wildcard_bind_that_names_its_hosts_answers_only_those() {
        let named = AllowedHosts {
            names: vec!["Corpus.LAN".into()],
            any: false,
        };
        let any = AllowedHosts {
            names: vec![],
            any: true,
        };
        for host in ["0.0.0.0", "::"] {
            let ip: IpAddr = host.parse().expect("an address literal");
            let target = BindTarget::Remote(ip);
            let bound = SocketAddr::new(ip, 9000);
            let policy = HostPolicy::derive(&target, bound, &named);
            assert!(policy.allows_host("corpus.lan:9000"));
            assert!(policy.allows_host("127.0.0.1:9000"));
            assert!(!policy.allows_host("rebound.attacker.example:9000"));
            assert!(!policy.allows_origin("http://rebound.attacker.example:9000"));
            assert_eq!(
                HostPolicy::derive(&target, bound, &any),
                HostPolicy::Unrestricted
            );
        }
    }
}
