//! The limits a background task runs under: one type from an agent's defaults, through
//! a tool call's own budgets, down to the context that enforces them.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The limits a background task runs under. Each `None` sets no limit here; see
/// [`or`](Self::or) for how a call's own limits fill in from a host's defaults. Start
/// from [`new`](Self::new) (no limits) and set the ones you want.
///
/// ```
/// use std::time::Duration;
/// use zidane_context::TaskLimits;
///
/// let defaults = TaskLimits::new()
///     .max_output_bytes(10 << 20)
///     .stall_timeout(Duration::from_secs(45));
/// let call = TaskLimits::new().max_output_bytes(1 << 20);
/// let limits = call.or(defaults);
/// assert_eq!(limits.max_output_bytes, Some(1 << 20));
/// assert_eq!(limits.stall_timeout, Some(Duration::from_secs(45)));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskLimits {
    /// Bytes kept in the task's log; later bytes are counted and dropped.
    #[serde(default)]
    pub max_output_bytes: Option<u64>,
    /// Quiet window after which the task's stall is reported.
    #[serde(
        rename = "stall_timeout_ms",
        with = "crate::duration_ms::option",
        default
    )]
    pub stall_timeout: Option<Duration>,
    /// Wall-time budget: past it the task is killed (`SIGTERM`, then `SIGKILL`) with
    /// [`KillReason::WallTime`](crate::KillReason::WallTime).
    #[serde(rename = "wall_time_ms", with = "crate::duration_ms::option", default)]
    pub wall_time: Option<Duration>,
    /// CPU-time budget of the task's processes together: past it the task is killed
    /// with [`KillReason::CpuTime`](crate::KillReason::CpuTime). How a context measures
    /// it is its own (the local context sums its process group from `/proc`).
    #[serde(rename = "cpu_time_ms", with = "crate::duration_ms::option", default)]
    pub cpu_time: Option<Duration>,
}

impl TaskLimits {
    /// No limits.
    pub const fn new() -> Self {
        Self {
            max_output_bytes: None,
            stall_timeout: None,
            wall_time: None,
            cpu_time: None,
        }
    }

    /// Sets the bytes kept in the task's log (`None`: no cap here).
    #[must_use]
    pub fn max_output_bytes(mut self, bytes: impl Into<Option<u64>>) -> Self {
        self.max_output_bytes = bytes.into();
        self
    }

    /// Sets the quiet window after which a stall is reported (`None`: none here).
    #[must_use]
    pub fn stall_timeout(mut self, timeout: impl Into<Option<Duration>>) -> Self {
        self.stall_timeout = timeout.into();
        self
    }

    /// Sets the wall-time budget (`None`: none here).
    #[must_use]
    pub fn wall_time(mut self, budget: impl Into<Option<Duration>>) -> Self {
        self.wall_time = budget.into();
        self
    }

    /// Sets the CPU-time budget (`None`: none here).
    #[must_use]
    pub fn cpu_time(mut self, budget: impl Into<Option<Duration>>) -> Self {
        self.cpu_time = budget.into();
        self
    }

    /// Each limit set here, and where one is not, the one in `defaults`: a call's own
    /// limits win over the host's.
    #[must_use]
    pub fn or(self, defaults: Self) -> Self {
        Self {
            max_output_bytes: self.max_output_bytes.or(defaults.max_output_bytes),
            stall_timeout: self.stall_timeout.or(defaults.stall_timeout),
            wall_time: self.wall_time.or(defaults.wall_time),
            cpu_time: self.cpu_time.or(defaults.cpu_time),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn limits() -> impl Strategy<Value = TaskLimits> {
        let ms = proptest::option::of((1u64..1 << 40).prop_map(Duration::from_millis));
        (proptest::option::of(1u64..), ms.clone(), ms.clone(), ms).prop_map(
            |(bytes, stall, wall, cpu)| TaskLimits {
                max_output_bytes: bytes,
                stall_timeout: stall,
                wall_time: wall,
                cpu_time: cpu,
            },
        )
    }

    proptest! {
        #[test]
        fn or_keeps_every_own_limit_and_fills_only_the_unset(own in limits(), defaults in limits()) {
            let merged = own.or(defaults);
            prop_assert_eq!(merged.max_output_bytes, own.max_output_bytes.or(defaults.max_output_bytes));
            prop_assert_eq!(merged.stall_timeout, own.stall_timeout.or(defaults.stall_timeout));
            prop_assert_eq!(merged.wall_time, own.wall_time.or(defaults.wall_time));
            prop_assert_eq!(merged.cpu_time, own.cpu_time.or(defaults.cpu_time));
            prop_assert_eq!(own.or(TaskLimits::default()), own);
            prop_assert_eq!(TaskLimits::default().or(defaults), defaults);
        }

        #[test]
        fn limits_round_trip_through_json_in_milliseconds(own in limits()) {
            let json = serde_json::to_string(&own).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let back: TaskLimits = serde_json::from_str(&json).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(back, own);
        }
    }

    #[test]
    fn an_empty_object_is_no_limits_and_names_carry_their_unit() {
        let none: TaskLimits = serde_json::from_str("{}").unwrap();
        assert_eq!(none, TaskLimits::default());
        let json = serde_json::to_value(TaskLimits {
            max_output_bytes: Some(5),
            stall_timeout: Some(Duration::from_millis(6)),
            wall_time: Some(Duration::from_millis(7)),
            cpu_time: Some(Duration::from_millis(8)),
        })
        .unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "max_output_bytes": 5,
                "stall_timeout_ms": 6,
                "wall_time_ms": 7,
                "cpu_time_ms": 8,
            })
        );
    }
}
