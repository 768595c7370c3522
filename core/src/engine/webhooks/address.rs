//! Where a webhook may be delivered: an `https://` URL to a public address.
//! A sandbox (or a host that allows private receivers) also takes
//! `http://` and loopback or private addresses, for a receiver on the
//! developer's machine. The URL is read as the WHATWG standard reads it, so
//! `https://2130706433/` is 127.0.0.1 and refused like it. A name is checked
//! again, resolved, when it is delivered to (the host's part).

use std::net::IpAddr;

/// Longest URL taken.
pub const MAX_URL: usize = 2048;

/// Why a URL is refused, or the URL as it will be used.
pub fn check(text: &str, allow_private: bool) -> Result<String, String> {
    if text.len() > MAX_URL {
        return Err(format!("url is longer than {MAX_URL} characters"));
    }
    let url = url::Url::parse(text).map_err(|e| format!("url is not a URL: {e}"))?;
    match url.scheme() {
        "https" => {}
        "http" if allow_private => {}
        "http" => return Err("url must be https:// (http:// only on a sandbox)".to_owned()),
        other => return Err(format!("url must be https://, not {}", crate::echo::echo(other))),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("url must not carry a user name or password".to_owned());
    }
    if url.fragment().is_some() {
        return Err("url must not have a fragment".to_owned());
    }
    let private = match url.host() {
        None => return Err("url has no host".to_owned()),
        Some(url::Host::Ipv4(ip)) => !is_public(IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => !is_public(IpAddr::V6(ip)),
        Some(url::Host::Domain(name)) => is_local_name(name),
    };
    if private && !allow_private {
        return Err(
            "url must reach a public address (loopback and private ones only on a sandbox)".to_owned()
        );
    }
    Ok(url.to_string())
}

/// Whether a name is one every resolver answers locally.
fn is_local_name(name: &str) -> bool {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || name.ends_with(".local")
        || name.ends_with(".internal")
}

/// Whether `ip` is a public unicast address: not loopback, private,
/// link-local, shared (CGNAT), documentation, benchmarking, multicast,
/// unspecified or reserved, nor an IPv6 address mapping or embedding one.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            !(v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 192 && b == 0 && c == 0)
                || (a == 198 && (b == 18 || b == 19))
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let s = v6.segments();
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] & 0xffc0) == 0xfe80
                || s[0] == 0x2001 && s[1] == 0x0db8
                || s[0] == 0x0064 && s[1] == 0xff9b
                || s[0] == 0x2002
                || (s[0] == 0 && s[1] == 0 && s[2] == 0 && s[3] == 0 && s[4] == 0))
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn only_https_to_public_addresses_unless_private_ones_are_allowed() {
        for ok in
            ["https://hooks.example.com/ach", "https://93.184.216.34:8443/x?y=1", "https://[2606:4700::1]/"]
        {
            assert_eq!(check(ok, false).as_deref(), Ok(ok));
        }
        for bad in [
            "http://hooks.example.com/",
            "ftp://hooks.example.com/",
            "https://127.0.0.1/",
            "https://2130706433/",
            "https://0x7f.1/",
            "https://10.1.2.3/",
            "https://172.16.0.1/",
            "https://192.168.1.1/",
            "https://169.254.169.254/latest/meta-data",
            "https://100.64.0.1/",
            "https://[::1]/",
            "https://[::ffff:127.0.0.1]/",
            "https://[fd00::1]/",
            "https://[fe80::1]/",
            "https://localhost/",
            "https://api.localhost./",
            "https://0.0.0.0/",
            "https://user:pw@hooks.example.com/",
            "https://hooks.example.com/#frag",
            "not a url",
            "https://",
        ] {
            let why = check(bad, false).unwrap_err();
            assert!(why.starts_with("url "), "{bad}: {why}");
        }
        assert_eq!(check("http://127.0.0.1:9000/hook", true).as_deref(), Ok("http://127.0.0.1:9000/hook"));
        assert_eq!(check("https://localhost/", true).as_deref(), Ok("https://localhost/"));
        assert_eq!(
            check(&format!("https://a.example/{}", "x".repeat(MAX_URL)), true),
            Err(format!("url is longer than {MAX_URL} characters"))
        );
    }
}
