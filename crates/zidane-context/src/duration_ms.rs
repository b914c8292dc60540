//! Serde for `Duration` as integer milliseconds (`"duration_ms": 4200`).
//!
//! Use with `#[serde(with = "zidane_context::duration_ms")]`; the `option` submodule
//! handles `Option<Duration>`.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serializer};

/// Serialises a duration as whole milliseconds (saturating at `u64::MAX`).
pub fn serialize<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
}

/// Deserialises whole milliseconds into a duration.
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    u64::deserialize(deserializer).map(Duration::from_millis)
}

/// The same for `Option<Duration>` (`null` when absent).
pub mod option {
    use super::*;

    /// Serialises `Some(d)` as milliseconds, `None` as `null`.
    pub fn serialize<S: Serializer>(
        duration: &Option<Duration>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match duration {
            Some(d) => super::serialize(d, serializer),
            None => serializer.serialize_none(),
        }
    }

    /// Deserialises milliseconds or `null`.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Duration>, D::Error> {
        Option::<u64>::deserialize(deserializer).map(|ms| ms.map(Duration::from_millis))
    }
}
