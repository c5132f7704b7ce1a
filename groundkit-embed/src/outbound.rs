//! The outbound address policy: which addresses groundkit may open a connection to when it calls
//! an embedding or rerank endpoint. It is the inverse of the server's bind guard: that one keeps
//! the server's socket on loopback unless the operator opts out; this one keeps outbound calls
//! on public addresses unless the operator opts in ([`Setting::AllowPrivate`]).
//!
//! [`is_global`] classifies one address with the standard library's address methods where they
//! are stable, plus explicit ranges for the rest (no text matching). An IPv6 address that
//! carries an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4) is judged by the IPv4
//! address it carries, so `::ffff:127.0.0.1` is loopback. [`OutboundPolicy::vet`] filters the
//! resolved addresses of a host; the HTTP embedder's resolver applies it to every lookup, so the
//! addresses it vets are the only ones a connection is made to.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use groundkit_core::Error;

use crate::setting::{Names, Setting};

/// Which addresses outbound calls may go to.
#[derive(Clone, Copy)]
pub struct OutboundPolicy {
    /// Also allow addresses that are not global: loopback, private networks, CGNAT, link-local,
    /// unique-local and reserved ranges (an endpoint on this machine or the operator's network).
    /// Unspecified, broadcast and multicast addresses stay refused: nothing can be called there.
    pub allow_private: bool,
    /// How a refusal names the endpoint's URL and the opt-in.
    pub names: Names,
}

impl Default for OutboundPolicy {
    /// Public addresses only; settings named as this crate's fields.
    fn default() -> Self {
        Self {
            allow_private: false,
            names: Setting::field,
        }
    }
}

impl std::fmt::Debug for OutboundPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutboundPolicy")
            .field("allow_private", &self.allow_private)
            .finish_non_exhaustive()
    }
}

impl OutboundPolicy {
    /// Whether a connection to `ip` is allowed.
    pub fn permits(&self, ip: IpAddr) -> bool {
        is_unicast(ip) && (self.allow_private || is_global(ip))
    }

    /// The addresses among `resolved` (the addresses of `host`, as the operator wrote it) that
    /// may be connected to, in their order; a validation error when none may. The error names
    /// the host, its addresses and the setting that opts in, and nothing else.
    pub fn vet(&self, host: &str, resolved: &[SocketAddr]) -> Result<Vec<SocketAddr>, Error> {
        let allowed: Vec<SocketAddr> = resolved
            .iter()
            .copied()
            .filter(|addr| self.permits(addr.ip()))
            .collect();
        if !allowed.is_empty() {
            return Ok(allowed);
        }
        let mut shown: Vec<String> = resolved.iter().map(|a| a.ip().to_string()).collect();
        shown.dedup();
        let message = if resolved.is_empty() {
            format!("cannot connect to {host}: it resolves to no address")
        } else if self.allow_private || !resolved.iter().any(|a| is_unicast(a.ip())) {
            format!(
                "refusing to connect to {host}: it resolves only to addresses nothing can be called at ({})",
                shown.join(", ")
            )
        } else {
            format!(
                "refusing to connect to {host}: it resolves only to addresses that are not public ({}); to call an endpoint on this machine or a private network, set {}",
                shown.join(", "),
                (self.names)(Setting::AllowPrivate)
            )
        };
        Err(Error::Validation {
            field: (self.names)(Setting::Url).to_owned(),
            message,
        })
    }
}

/// Whether `ip` is a publicly routable address: not loopback, unspecified, private, shared
/// (CGNAT), link-local, broadcast, multicast, documentation, benchmarking or reserved, and for
/// IPv6 inside the global unicast range 2000::/3. IPv4 carried in IPv6 is judged as IPv4.
pub fn is_global(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_global_v4(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => is_global_v4(v4),
            None => is_global_v6(v6),
        },
    }
}

/// Whether `ip` is within `base/len` (`base` given as a 32-bit number).
fn in_v4(ip: Ipv4Addr, base: u32, len: u32) -> bool {
    let mask = u32::MAX.checked_shl(32 - len).unwrap_or(0);
    u32::from(ip) & mask == base & mask
}

/// Whether `ip` is within `base/len` (`base` given as a 128-bit number).
fn in_v6(ip: Ipv6Addr, base: u128, len: u32) -> bool {
    let mask = u128::MAX.checked_shl(128 - len).unwrap_or(0);
    u128::from(ip) & mask == base & mask
}

fn is_global_v4(ip: Ipv4Addr) -> bool {
    !(ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || in_v4(ip, 0x0000_0000, 8) // 0.0.0.0/8, "this network"
        || in_v4(ip, 0x6440_0000, 10) // 100.64.0.0/10, shared address space (CGNAT)
        || in_v4(ip, 0xc000_0000, 24) // 192.0.0.0/24, IETF protocol assignments
        || in_v4(ip, 0xc612_0000, 15) // 198.18.0.0/15, benchmarking
        || in_v4(ip, 0xf000_0000, 4)) // 240.0.0.0/4, reserved (broadcast included)
}

fn is_global_v6(ip: Ipv6Addr) -> bool {
    // Loopback, unspecified, unique-local fc00::/7, link-local fe80::/10, multicast ff00::/8,
    // the NAT64 local-use prefix and every other special range outside 2000::/3 fail this test.
    in_v6(ip, 0x2000 << 112, 3)
        && !(in_v6(ip, 0x2001_0db8 << 96, 32) // documentation
            || in_v6(ip, 0x3fff << 112, 20) // documentation (RFC 9637)
            || in_v6(ip, 0x2001 << 112, 23)) // IETF protocol assignments: Teredo, benchmarking, ORCHID
}

/// The IPv4 address an IPv6 address carries: IPv4-mapped `::ffff:0:0/96`, IPv4-compatible
/// `::/96` (but `::` and `::1`, which are IPv6's own unspecified and loopback addresses), NAT64
/// `64:ff9b::/96` (its last 32 bits) and 6to4 `2002::/16` (bits 16 to 48).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let bits = u128::from(ip);
    let low = Ipv4Addr::from(bits as u32);
    if let Some(mapped) = ip.to_ipv4_mapped() {
        Some(mapped)
    } else if (in_v6(ip, 0, 96) && bits > 1) || in_v6(ip, 0x0064_ff9b << 96, 96) {
        Some(low)
    } else if in_v6(ip, 0x2002 << 112, 16) {
        Some(Ipv4Addr::from((bits >> 80) as u32))
    } else {
        None
    }
}

/// Whether anything can be called at `ip`: not unspecified, "this network", broadcast or
/// multicast (judged as IPv4 when an IPv6 address carries one).
fn is_unicast(ip: IpAddr) -> bool {
    let v4 = match ip {
        IpAddr::V4(v4) => v4,
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => v4,
            None => return !(v6.is_unspecified() || v6.is_multicast()),
        },
    };
    !(in_v4(v4, 0, 8) || v4.is_broadcast() || v4.is_multicast())
}

#[cfg(test)]
mod tests;
