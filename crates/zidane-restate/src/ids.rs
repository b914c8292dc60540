//! Worker ids and the random numbers handles, boot ids and tokens are made of.

use crate::error::RestateError;

/// Most characters a worker id may have.
const MAX_WORKER_ID: usize = 64;

/// Refuses a worker id that cannot be part of a service name.
pub(crate) fn validate_worker_id(id: &str) -> Result<(), RestateError> {
    let ok = !id.is_empty()
        && id.len() <= MAX_WORKER_ID
        && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(RestateError::InvalidWorkerId(id.to_owned()))
    }
}

/// A random number from the standard library's per-process hash keys, mixed with the
/// time and pid: unique enough for handles and boot ids without a dependency.
pub(crate) fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    hasher.write_u32(std::process::id());
    hasher.finish()
}

/// The handle of a workspace key: FNV-1a, so every host and every version of zidane
/// finds the same handle for the same key, within JSON's exact integers.
pub(crate) fn workspace_handle(key: &str) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;
    let hash = key.bytes().fold(OFFSET, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(PRIME)
    });
    hash >> 11
}

/// A random hex token of 16 digits: unique enough for ids (not a secret: it is made
/// from the time, the pid and the standard library's per-process hash keys).
pub fn random_token() -> String {
    format!("{:016x}", random_u64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_ids() {
        assert!(validate_worker_id("w1").is_ok());
        assert!(validate_worker_id("gpu_box_7").is_ok());
        for bad in ["", "a-b", "a b", "é", &"x".repeat(65)] {
            assert!(validate_worker_id(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_workspace_key_always_gives_the_same_handle() {
        // Pinned: a change would lose every workspace's tasks on upgrade.
        assert_eq!(workspace_handle(""), 0xcbf2_9ce4_8422_2325 >> 11);
        assert_eq!(workspace_handle("a:/w"), workspace_handle("a:/w"));
        assert_ne!(workspace_handle("a:/w"), workspace_handle("b:/w"));
        assert!(workspace_handle("any key at all") < 1 << 53);
    }

    #[test]
    fn tokens_differ() {
        assert_ne!(random_token(), random_token());
    }
}
