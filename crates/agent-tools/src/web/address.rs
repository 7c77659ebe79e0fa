//! Which addresses `web_fetch` may reach: every public address, and the loopback, private,
//! link-local, shared and metadata addresses only when `[web] allow_private_hosts` names them
//! (by host name, address or range).
//!
//! The check is made on the addresses a name resolves to, not on the name: `localhost.example`
//! may point anywhere. An address written another way (an IPv4-mapped or NAT64 IPv6 address, a
//! 6to4 address) is read as the IPv4 address inside it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Host names that reach a cloud's metadata service whatever they resolve to.
const METADATA_NAMES: [&str; 3] = [
    "metadata.google.internal",
    "metadata.goog",
    "metadata.azure.com",
];

/// What kind of address an IP is, for the refusal's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// Reachable from anywhere on the internet.
    Public,
    /// Not public; the text says which kind (`loopback`, `private`, ...).
    Internal(&'static str),
}

/// What `allow_private_hosts` names: host names, addresses and ranges whose internal addresses
/// may be fetched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrivateHosts {
    names: Vec<String>,
    ranges: Vec<(IpAddr, u8)>,
}

/// An entry of `allow_private_hosts` that is neither a host name, an address nor a range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("allow_private_hosts: {entry:?} is not a host name, an IP address or a range (10.0.0.0/8)")]
pub struct BadHostEntry {
    /// The entry as written.
    pub entry: String,
}

impl PrivateHosts {
    /// Reads the entries: a host name (`localhost`, `wiki.corp`), an address (`127.0.0.1`,
    /// `::1`) or a range in CIDR form (`10.0.0.0/8`, `fd00::/8`).
    ///
    /// # Errors
    ///
    /// The first entry that is none of these.
    pub fn parse<S: AsRef<str>>(entries: &[S]) -> Result<Self, BadHostEntry> {
        let mut hosts = Self::default();
        for entry in entries {
            let text = entry.as_ref().trim();
            let bad = || BadHostEntry {
                entry: text.to_owned(),
            };
            let bare = text.trim_start_matches('[').trim_end_matches(']');
            if let Some((address, bits)) = bare.split_once('/') {
                let address: IpAddr = address.parse().map_err(|_| bad())?;
                let bits: u8 = bits.parse().map_err(|_| bad())?;
                let max = if address.is_ipv4() { 32 } else { 128 };
                if bits > max {
                    return Err(bad());
                }
                hosts.ranges.push((address, bits));
            } else if let Ok(address) = bare.parse::<IpAddr>() {
                let bits = if address.is_ipv4() { 32 } else { 128 };
                hosts.ranges.push((address, bits));
            } else if is_host_name(text) {
                hosts
                    .names
                    .push(text.trim_end_matches('.').to_ascii_lowercase());
            } else {
                return Err(bad());
            }
        }
        Ok(hosts)
    }

    /// Whether nothing is allowed.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty() && self.ranges.is_empty()
    }

    /// Whether `host` (as the URL names it) is named.
    pub(crate) fn names(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.names.contains(&host)
    }

    /// Whether `address` lies in a named address or range.
    pub(crate) fn covers(&self, address: IpAddr) -> bool {
        let address = canonical(address);
        self.ranges
            .iter()
            .any(|(base, bits)| in_range(address, canonical(*base), *bits))
    }
}

/// Whether `text` looks like a DNS host name: labels of letters, digits, `-` and `_`.
fn is_host_name(text: &str) -> bool {
    let text = text.trim_end_matches('.');
    !text.is_empty()
        && text.len() <= 253
        && text.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

/// Whether `host` is a name that reaches a metadata service whatever it resolves to.
pub(crate) fn is_metadata_name(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    METADATA_NAMES.contains(&host.as_str())
}

/// The IPv4 address an IPv6 address carries (mapped, NAT64, 6to4), else the address itself.
pub(crate) fn canonical(address: IpAddr) -> IpAddr {
    let IpAddr::V6(v6) = address else {
        return address;
    };
    if let Some(v4) = v6.to_ipv4_mapped() {
        return IpAddr::V4(v4);
    }
    let segments = v6.segments();
    let embedded = |high: u16, low: u16| {
        let [a, b] = high.to_be_bytes();
        let [c, d] = low.to_be_bytes();
        IpAddr::V4(Ipv4Addr::new(a, b, c, d))
    };
    // NAT64 (64:ff9b::/96) carries the IPv4 address in its last 32 bits.
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return embedded(segments[6], segments[7]);
    }
    // 6to4 (2002::/16) carries it in bits 16 to 48.
    if segments[0] == 0x2002 {
        return embedded(segments[1], segments[2]);
    }
    address
}

/// Whether `address` is in `base/bits` (both canonical; of one family).
fn in_range(address: IpAddr, base: IpAddr, bits: u8) -> bool {
    match (address, base) {
        (IpAddr::V4(a), IpAddr::V4(b)) => prefix_equal(&a.octets(), &b.octets(), bits),
        (IpAddr::V6(a), IpAddr::V6(b)) => prefix_equal(&a.octets(), &b.octets(), bits),
        _ => false,
    }
}

fn prefix_equal(a: &[u8], b: &[u8], bits: u8) -> bool {
    let bits = usize::from(bits);
    let (whole, rest) = (bits / 8, bits % 8);
    if a[..whole] != b[..whole] {
        return false;
    }
    if rest == 0 {
        return true;
    }
    let mask = 0xffu8 << (8 - rest);
    (a[whole] & mask) == (b[whole] & mask)
}

/// What kind of address `address` is.
pub(crate) fn reach(address: IpAddr) -> Reach {
    match canonical(address) {
        IpAddr::V4(v4) => reach_v4(v4),
        IpAddr::V6(v6) => reach_v6(v6),
    }
}

fn reach_v4(v4: Ipv4Addr) -> Reach {
    let [a, b, c, _] = v4.octets();
    let kind = if v4 == Ipv4Addr::new(169, 254, 169, 254) || v4 == Ipv4Addr::new(100, 100, 100, 200)
    {
        "metadata"
    } else if v4.is_loopback() {
        "loopback"
    } else if v4.is_private() {
        "private"
    } else if v4.is_link_local() {
        "link-local"
    } else if v4.is_unspecified() || a == 0 {
        "unspecified"
    } else if a == 100 && (64..128).contains(&b) {
        "shared (carrier-grade NAT)"
    } else if v4.is_broadcast() || v4.is_multicast() || a >= 240 {
        "broadcast, multicast or reserved"
    } else if (a, b, c) == (192, 0, 0) || (a == 198 && (b & 0xfe) == 18) {
        "reserved"
    } else {
        return Reach::Public;
    };
    Reach::Internal(kind)
}

fn reach_v6(v6: Ipv6Addr) -> Reach {
    let first = v6.segments()[0];
    let kind = if v6 == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        "metadata"
    } else if v6.is_loopback() {
        "loopback"
    } else if v6.is_unspecified() {
        "unspecified"
    } else if (first & 0xfe00) == 0xfc00 {
        "private (unique local)"
    } else if (first & 0xffc0) == 0xfe80 || (first & 0xffc0) == 0xfec0 {
        "link-local"
    } else if v6.is_multicast() {
        "multicast"
    } else if v6.to_ipv4().is_some() && first == 0 {
        // IPv4-compatible (deprecated) addresses, ::a.b.c.d.
        "reserved"
    } else {
        return Reach::Public;
    };
    Reach::Internal(kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> Reach {
        reach(text.parse().unwrap())
    }

    #[test]
    fn internal_addresses_in_every_spelling_are_not_public() {
        for internal in [
            "127.0.0.1",
            "127.3.4.5",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "169.254.1.1",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "fd00:ec2::254",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a00:1",
            "2002:7f00:1::",
            "100.100.100.200",
            "224.0.0.1",
            "255.255.255.255",
        ] {
            assert_ne!(kind(internal), Reach::Public, "{internal}");
        }
        assert_eq!(kind("169.254.169.254"), Reach::Internal("metadata"));
        assert_eq!(kind("::ffff:169.254.169.254"), Reach::Internal("metadata"));
        for public in ["1.1.1.1", "93.184.215.14", "2606:4700::1111", "172.32.0.1"] {
            assert_eq!(kind(public), Reach::Public, "{public}");
        }
    }

    #[test]
    fn allowed_hosts_are_names_addresses_and_ranges() {
        let hosts = PrivateHosts::parse(&["localhost", "10.0.0.0/8", "::1", "Wiki.Corp."]).unwrap();
        assert!(hosts.names("LOCALHOST"));
        assert!(hosts.names("wiki.corp"));
        assert!(!hosts.names("127.0.0.1"));
        assert!(hosts.covers("10.200.3.4".parse().unwrap()));
        assert!(hosts.covers("::ffff:10.0.0.1".parse().unwrap()));
        assert!(!hosts.covers("11.0.0.1".parse().unwrap()));
        assert!(hosts.covers("::1".parse().unwrap()));
        assert!(!hosts.covers("127.0.0.1".parse().unwrap()));
        for bad in ["10.0.0.0/33", "http://x", "a b", ""] {
            assert!(PrivateHosts::parse(&[bad]).is_err(), "{bad}");
        }
        assert!(is_metadata_name("Metadata.Google.Internal."));
    }
}
