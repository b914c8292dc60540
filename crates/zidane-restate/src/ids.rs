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

/// A random hex token.
pub(crate) fn random_token() -> String {
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
    fn tokens_differ() {
        assert_ne!(random_token(), random_token());
    }
}
