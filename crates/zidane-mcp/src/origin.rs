//! Which web origins may reach the HTTP transport: a browser names the page that sends a
//! request in its `Origin` header, and a page of another site must not run commands.

use std::fmt;
use std::str::FromStr;

use axum::http::uri::Authority;

/// What `--allow-origin` accepts, said in every refusal of a bad value.
const ACCEPTED: &str = "expected scheme://host or scheme://host:port (e.g. http://localhost:3000), or * for any origin";

/// A web origin, `scheme://host[:port]`, normalized for comparison: scheme and host in
/// lower case, and no port when it is the scheme's default (a browser leaves it out).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Origin {
    scheme: String,
    host: String,
    port: Option<u16>,
}

impl Origin {
    /// The origins of this server's own loopback names on `port`: `http://localhost`,
    /// `http://127.0.0.1` and `http://[::1]`.
    pub fn loopback(port: u16) -> [Self; 3] {
        ["localhost", "127.0.0.1", "[::1]"].map(|host| Self {
            scheme: "http".to_owned(),
            host: host.to_owned(),
            port: (port != 80).then_some(port),
        })
    }
}

impl FromStr for Origin {
    type Err = OriginParseError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let refuse = |why: &str| OriginParseError {
            value: value.to_owned(),
            why: why.to_owned(),
        };
        let (scheme, authority) = value
            .split_once("://")
            .ok_or_else(|| refuse("it has no scheme://"))?;
        let mut chars = scheme.chars();
        let scheme_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if !scheme_ok {
            return Err(refuse("its scheme is not a URL scheme"));
        }
        if authority.is_empty() {
            return Err(refuse("it has no host"));
        }
        if authority.contains(['/', '?', '#']) {
            return Err(refuse("an origin has no path, query or fragment"));
        }
        if authority.contains('@') || authority.ends_with(':') {
            return Err(refuse("its host[:port] is not valid"));
        }
        let parsed =
            Authority::from_str(authority).map_err(|_| refuse("its host[:port] is not valid"))?;
        if parsed.host().is_empty() {
            return Err(refuse("it has no host"));
        }
        // The port as written: `Authority` reads one past 65535 as none.
        let written_port = authority
            .rsplit_once(':')
            .map(|(_, port)| port)
            .filter(|port| !port.contains(']'));
        if written_port.is_some_and(|port| port.parse::<u16>().is_err()) {
            return Err(refuse("its port is not a number up to 65535"));
        }
        let scheme = scheme.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" | "ws" => Some(80),
            "https" | "wss" => Some(443),
            _ => None,
        };
        Ok(Self {
            port: parsed.port_u16().filter(|port| Some(*port) != default_port),
            host: parsed.host().to_ascii_lowercase(),
            scheme,
        })
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.scheme, self.host)?;
        match self.port {
            Some(port) => write!(f, ":{port}"),
            None => Ok(()),
        }
    }
}

/// One `--allow-origin` value: an exact origin, or `*` for any.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AllowedOrigin {
    /// Requests whose `Origin` is this one, compared as normalized `scheme://host[:port]`.
    Exact(Origin),
    /// Any origin at all: every web page the user opens may then run commands as the
    /// server's user, by way of their browser. Unsafe; never a default.
    Any,
}

impl FromStr for AllowedOrigin {
    type Err = OriginParseError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        if value == "*" {
            return Ok(Self::Any);
        }
        value.parse().map(Self::Exact)
    }
}

impl fmt::Display for AllowedOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Exact(origin) => origin.fmt(f),
            Self::Any => f.write_str("*"),
        }
    }
}

/// A value that is not an origin, with why and what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{value:?} is not an origin: {why}; {ACCEPTED}")]
pub struct OriginParseError {
    value: String,
    why: String,
}

/// The origins a server lets through: its own loopback ones and those allowed.
#[derive(Debug, Clone)]
pub(crate) struct OriginPolicy {
    allowed: Vec<Origin>,
    any: bool,
}

impl OriginPolicy {
    /// The loopback origins of `port` and `extra`.
    pub(crate) fn new(port: u16, extra: &[AllowedOrigin]) -> Self {
        let mut allowed = Origin::loopback(port).to_vec();
        let mut any = false;
        for origin in extra {
            match origin {
                AllowedOrigin::Exact(origin) => allowed.push(origin.clone()),
                AllowedOrigin::Any => any = true,
            }
        }
        Self { allowed, any }
    }

    /// Whether a request whose `Origin` header says `value` may go on. `null` (a
    /// sandboxed frame, a local file) and anything unreadable are refused unless any
    /// origin is allowed.
    pub(crate) fn allows(&self, value: &[u8]) -> bool {
        if self.any {
            return true;
        }
        std::str::from_utf8(value)
            .ok()
            .and_then(|value| value.parse::<Origin>().ok())
            .is_some_and(|origin| self.allowed.contains(&origin))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(value: &str) -> Origin {
        value.parse().unwrap()
    }

    #[test]
    fn origins_are_normalized_for_comparison() {
        assert_eq!(
            origin("HTTP://LocalHost:3000"),
            origin("http://localhost:3000")
        );
        assert_eq!(
            origin("http://example.com:80"),
            origin("http://example.com")
        );
        assert_eq!(
            origin("https://example.com:443"),
            origin("https://example.com")
        );
        assert_ne!(
            origin("https://example.com:80"),
            origin("https://example.com")
        );
        assert_eq!(origin("http://[::1]:8931").to_string(), "http://[::1]:8931");
        assert_eq!(
            origin("vscode-webview://abc").to_string(),
            "vscode-webview://abc"
        );
    }

    #[test]
    fn what_is_not_an_origin_says_what_is() {
        for bad in [
            "",
            "localhost:3000",
            "http://",
            "http://localhost:3000/",
            "http://localhost/app",
            "http://user@localhost",
            "http://localhost:",
            "http://localhost:99999",
            "1http://localhost",
            "null",
            "**",
        ] {
            let error = bad.parse::<AllowedOrigin>().unwrap_err().to_string();
            assert!(error.contains("scheme://host:port"), "{bad:?}: {error}");
            assert!(error.contains(&format!("{bad:?}")), "{bad:?}: {error}");
        }
        assert_eq!("*".parse::<AllowedOrigin>().unwrap(), AllowedOrigin::Any);
    }

    #[test]
    fn the_policy_lets_through_its_own_loopback_and_the_allowed_only() {
        let policy = OriginPolicy::new(
            8931,
            &["https://app.example".parse::<AllowedOrigin>().unwrap()],
        );
        for allowed in [
            "http://localhost:8931",
            "http://127.0.0.1:8931",
            "http://[::1]:8931",
            "https://app.example",
            "https://app.example:443",
        ] {
            assert!(policy.allows(allowed.as_bytes()), "{allowed}");
        }
        for refused in [
            "http://evil.example",
            "http://localhost:8932",
            "https://localhost:8931",
            "http://app.example",
            "https://app.example:8443",
            "https://app.example.evil",
            "null",
            "",
            "http://localhost:8931/",
        ] {
            assert!(!policy.allows(refused.as_bytes()), "{refused}");
        }
        assert!(!policy.allows(b"\xff"));
        let any = OriginPolicy::new(8931, &[AllowedOrigin::Any]);
        assert!(any.allows(b"http://evil.example"));
        assert!(any.allows(b"null"));
    }
}
