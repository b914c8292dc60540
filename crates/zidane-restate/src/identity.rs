//! Request identity: which Restate servers a worker answers.
//!
//! A Restate server given a private key (`request-identity-private-key-pem-file`) signs
//! every request it sends a deployment: a JWT in `x-restate-jwt-v1` whose audience is the
//! request's path, valid for a minute. A worker given the matching public keys refuses
//! every request without such a signature, so only those servers can make it run
//! commands. Without keys a worker answers anyone who reaches its port.

use std::fmt;
use std::sync::Arc;

use restate_sdk_shared_core::IdentityVerifier;

use crate::error::RestateError;

/// How a Restate request-identity public key begins: `publickeyv1_` and the base58 of
/// the 32 bytes of an ed25519 public key (what `restate-server` logs as the `kid` of
/// the key it loaded).
pub(crate) const IDENTITY_KEY_PREFIX: &str = "publickeyv1_";

/// Most characters of a refused key that an error repeats: enough to recognise it,
/// never a whole secret pasted in the wrong place.
const SHOWN: usize = 16;

/// The public keys whose signatures a worker accepts: requests signed by any of them
/// are served (several, so a server's key can be rotated without a gap), every other
/// request is refused. Empty ([`IdentityKeys::none`]): every request is served.
#[derive(Clone, Default)]
pub struct IdentityKeys {
    keys: Vec<String>,
    /// Built from `keys`; `None` while there are none.
    verifier: Option<Arc<IdentityVerifier>>,
}

impl fmt::Debug for IdentityKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdentityKeys")
            .field("keys", &self.keys)
            .finish_non_exhaustive()
    }
}

impl IdentityKeys {
    /// No keys: the worker serves every request that reaches it.
    pub fn none() -> Self {
        Self::default()
    }

    /// Adds one key (surrounding whitespace ignored); `source` names where it came from
    /// (a flag, a file, a variable) for the error. Returns whether it was new.
    pub fn add(&mut self, key: &str, source: &str) -> Result<bool, RestateError> {
        let key = key.trim();
        if self.keys.iter().any(|known| known == key) {
            return Ok(false);
        }
        if let Err(error) = IdentityVerifier::new(&[key]) {
            return Err(refused(source, key, &error.to_string()));
        }
        self.keys.push(key.to_owned());
        let all: Vec<&str> = self.keys.iter().map(String::as_str).collect();
        let verifier = IdentityVerifier::new(&all)
            .map_err(|error| refused(source, key, &error.to_string()))?;
        self.verifier = Some(Arc::new(verifier));
        Ok(true)
    }

    /// Adds every key in `text`: keys separated by whitespace or commas, `#` starting a
    /// comment to the end of its line (a key file, or a variable holding several keys).
    /// Errors name `source`, and the line when `text` has several. Returns how many keys
    /// `text` held.
    pub fn add_all(&mut self, text: &str, source: &str) -> Result<usize, RestateError> {
        if text.contains("PRIVATE KEY") {
            return Err(RestateError::IdentityKey {
                origin: source.to_owned(),
                reason: "this is a private key: a worker takes the public key \
                         (`publickeyv1_…`), the private key stays with restate-server"
                    .to_owned(),
            });
        }
        let lines = text.lines().count();
        let mut count = 0;
        for (index, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or_default();
            let source = if lines > 1 {
                format!("{source} line {}", index + 1)
            } else {
                source.to_owned()
            };
            for key in line
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|key| !key.is_empty())
            {
                self.add(key, &source)?;
                count += 1;
            }
        }
        Ok(count)
    }

    /// The keys, in the order given.
    pub fn keys(&self) -> &[String] {
        &self.keys
    }

    /// Whether there are no keys (every request is served).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Checks the signature of a request for `path` as it reached the worker (the path
    /// Restate signed); `Err` says why it is refused.
    pub(crate) fn verify(&self, headers: &http::HeaderMap, path: &str) -> Result<(), String> {
        match &self.verifier {
            None => Ok(()),
            Some(verifier) => verifier
                .verify_identity(headers, path)
                .map_err(|error| error.to_string()),
        }
    }
}

/// The error for `key`, from `source`, refused for `reason`.
fn refused(source: &str, key: &str, reason: &str) -> RestateError {
    let shown: String = key.chars().take(SHOWN).collect();
    let shown = if shown.len() < key.len() {
        format!("{shown}…")
    } else {
        shown
    };
    RestateError::IdentityKey {
        origin: source.to_owned(),
        reason: format!(
            "{shown:?} is not a Restate request-identity public key ({reason}); expected \
             `{IDENTITY_KEY_PREFIX}` and the base58 of a 32-byte ed25519 public key"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key of the SDK's own documentation.
    const KEY: &str = "publickeyv1_ChjENKeMvCtRnqG2mrBK1HmPKufgFUc98K8B3ononQvp";
    const OTHER: &str = "publickeyv1_w7YHemBctH5Ck2nQRQ47iBBqhNHy4FV7t2Usbye2A6f";

    #[test]
    fn keys_are_read_from_lists_and_files_and_deduplicated() {
        let mut keys = IdentityKeys::none();
        assert!(keys.is_empty());
        assert_eq!(
            keys.add_all(&format!(" {KEY}, {OTHER} "), "VAR").unwrap(),
            2
        );
        let file = format!("# rotation\n{OTHER}   # the new one\n\n{KEY}\n");
        assert_eq!(keys.add_all(&file, "FILE").unwrap(), 2);
        assert_eq!(keys.keys(), [KEY, OTHER]);
        assert!(!keys.add(KEY, "flag").unwrap());
    }

    #[test]
    fn a_bad_key_is_refused_naming_where_it_came_from() {
        let mut keys = IdentityKeys::none();
        let error = keys.add("publickey_abc", "--identity-key").unwrap_err();
        let message = error.to_string();
        assert!(message.starts_with("--identity-key: "), "{message}");
        assert!(message.contains("publickeyv1_"), "{message}");
        // Not base58 ('0' is not in its alphabet), then too short.
        for bad in ["publickeyv1_0000", "publickeyv1_abc"] {
            assert!(keys.add(bad, "x").is_err(), "{bad}");
        }
        let file = format!("{KEY}\n\nnot-a-key\n");
        let message = keys.add_all(&file, "keys.txt").unwrap_err().to_string();
        assert!(message.starts_with("keys.txt line 3: "), "{message}");
        assert_eq!(keys.keys(), [KEY]);
    }

    #[test]
    fn a_private_key_is_refused_without_repeating_it() {
        let pem = "-----BEGIN PRIVATE KEY-----\n\
                   MC4CAQAwBQYDK2VwBCIEIKZ/cE6axeVmVwGY0j+IKGZhpZU4g3Ty20x2STGPGPiY\n\
                   -----END PRIVATE KEY-----\n";
        let message = IdentityKeys::none()
            .add_all(pem, "--identity-key-file k.pem")
            .unwrap_err()
            .to_string();
        assert!(message.contains("private key"), "{message}");
        assert!(!message.contains("MC4CAQ"), "{message}");
    }

    #[test]
    fn a_long_refused_key_is_cut_short() {
        let secret = "x".repeat(64);
        let message = IdentityKeys::none()
            .add(&secret, "flag")
            .unwrap_err()
            .to_string();
        assert!(!message.contains(&secret), "{message}");
    }

    #[test]
    fn without_keys_every_request_passes_and_with_keys_an_unsigned_one_does_not() {
        let headers = http::HeaderMap::new();
        assert!(IdentityKeys::none().verify(&headers, "/invoke/A/b").is_ok());
        let mut keys = IdentityKeys::none();
        keys.add(KEY, "flag").unwrap();
        assert!(keys.verify(&headers, "/invoke/A/b").is_err());
        let mut unsigned = http::HeaderMap::new();
        unsigned.insert(
            "x-restate-signature-scheme",
            http::HeaderValue::from_static("unsigned"),
        );
        assert!(keys.verify(&unsigned, "/discover").is_err());
    }
}
