//! The outbound policy against every range it names, both sides of each boundary.

use super::*;

/// Not global but callable: allowed only with `allow_private`.
const PRIVATE: &[&str] = &[
    "127.0.0.1",
    "127.255.255.254",
    "10.0.0.1",
    "10.255.255.1",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "100.64.0.1",
    "100.127.255.254",
    "169.254.169.254",
    "192.0.0.1",
    "192.0.2.1",
    "198.51.100.7",
    "203.0.113.9",
    "198.18.0.1",
    "198.19.255.255",
    "240.0.0.1",
    "::1",
    "fc00::1",
    "fd12:3456::1",
    "fe80::1",
    "febf::1",
    "fec0::1",
    "2001:db8::1",
    "3fff::1",
    "2001::1",
    "2001:2::1",
    "64:ff9b:1::1",
    "100::1",
    // IPv4 carried in IPv6, judged by the IPv4 address.
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "::ffff:192.168.0.1",
    "::ffff:169.254.169.254",
    "::ffff:100.64.0.1",
    "::127.0.0.1",
    "::10.1.2.3",
    "64:ff9b::10.0.0.1",
    "64:ff9b::127.0.0.1",
    "2002:c0a8:101::1",
    "2002:7f00:1::",
    "2002:a00:1::",
];

/// Nothing can be called there: refused whatever the policy.
const NEVER: &[&str] = &[
    "0.0.0.0",
    "0.1.2.3",
    "255.255.255.255",
    "224.0.0.1",
    "239.255.255.250",
    "::",
    "ff02::1",
    "ff05::2",
    "::ffff:0.0.0.0",
    "::ffff:255.255.255.255",
    "::ffff:224.0.0.1",
    "64:ff9b::224.0.0.1",
    "2002:ffff:ffff::",
];

/// Public: always allowed. Several sit just outside a refused range.
const GLOBAL: &[&str] = &[
    "8.8.8.8",
    "1.1.1.1",
    "9.9.9.9",
    "11.0.0.1",
    "100.63.255.255",
    "100.128.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "192.167.255.255",
    "192.169.0.0",
    "169.253.0.1",
    "198.17.255.255",
    "198.20.0.0",
    "192.0.1.1",
    "223.255.255.255",
    "2606:4700::1111",
    "2001:4860:4860::8888",
    "2a00:1450::1",
    "2001:db9::1",
    "2001:200::1",
    "::ffff:8.8.8.8",
    "::ffff:1.1.1.1",
    "64:ff9b::8.8.8.8",
    "2002:808:808::1",
];

fn ip(text: &str) -> IpAddr {
    text.parse().expect("test address")
}

const STRICT: OutboundPolicy = OutboundPolicy {
    allow_private: false,
    names: Setting::field,
};
const OPEN: OutboundPolicy = OutboundPolicy {
    allow_private: true,
    names: Setting::field,
};
const ALLOW_PRIVATE: &str = "allow_private";

#[test]
fn every_range_is_classified() {
    for text in PRIVATE {
        assert!(!is_global(ip(text)), "{text} is not global");
        assert!(!STRICT.permits(ip(text)), "{text} refused by default");
        assert!(OPEN.permits(ip(text)), "{text} allowed with the opt-in");
    }
    for text in NEVER {
        assert!(!is_global(ip(text)), "{text} is not global");
        assert!(!STRICT.permits(ip(text)), "{text} refused by default");
        assert!(
            !OPEN.permits(ip(text)),
            "{text} refused even with the opt-in"
        );
    }
    for text in GLOBAL {
        assert!(is_global(ip(text)), "{text} is global");
        assert!(STRICT.permits(ip(text)), "{text} allowed by default");
        assert!(OPEN.permits(ip(text)), "{text} allowed with the opt-in");
    }
}

fn addrs(texts: &[&str]) -> Vec<SocketAddr> {
    texts.iter().map(|t| SocketAddr::new(ip(t), 443)).collect()
}

#[test]
fn vetting_keeps_the_allowed_addresses_in_order() {
    let resolved = addrs(&["10.0.0.1", "8.8.8.8", "::1", "2606:4700::1111"]);
    let kept = STRICT
        .vet("api.example.com", &resolved)
        .expect("public addresses");
    assert_eq!(kept, addrs(&["8.8.8.8", "2606:4700::1111"]));
    assert_eq!(
        OPEN.vet("api.example.com", &resolved).expect("all"),
        resolved
    );
}

#[test]
fn a_host_with_only_private_addresses_is_refused_naming_the_host_and_the_opt_in() {
    let resolved = addrs(&["127.0.0.1", "::1"]);
    let err = STRICT.vet("localhost", &resolved).expect_err("refused");
    assert_eq!(err.kind(), "validation_error");
    let message = err.to_string();
    assert!(message.contains("localhost"), "{message}");
    assert!(message.contains(ALLOW_PRIVATE), "{message}");
    assert!(message.contains("127.0.0.1"), "{message}");
    assert!(matches!(err, Error::Validation { ref field, .. } if field == "url"));
    let named = OutboundPolicy {
        names: |setting| match setting {
            Setting::AllowPrivate => "reranker.allow_private",
            _ => "reranker.url",
        },
        ..STRICT
    };
    let err = named.vet("localhost", &resolved).expect_err("refused");
    assert!(err.to_string().contains("reranker.allow_private"), "{err}");
    assert!(matches!(err, Error::Validation { ref field, .. } if field == "reranker.url"));
}

#[test]
fn uncallable_and_missing_addresses_are_refused_even_with_the_opt_in() {
    let err = OPEN
        .vet("[::]", &addrs(&["::", "0.0.0.0"]))
        .expect_err("refused");
    assert!(!err.to_string().contains(ALLOW_PRIVATE));
    let err = OPEN.vet("nowhere", &[]).expect_err("refused");
    assert!(err.to_string().contains("nowhere"));
}
