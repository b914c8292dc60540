//! The one error type of this crate.

/// What can go wrong when assembling tools. Calling a tool never returns this: a failed
/// call is a [`ToolOutput`](crate::ToolOutput) with `is_error` set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// A tool's name or alias is already claimed by a registered tool.
    #[error("tool name `{name}` is already taken by the tool `{owner}`")]
    NameTaken {
        /// The name or alias claimed twice.
        name: String,
        /// The registered tool that claims it.
        owner: String,
    },
    /// A tool claims the same name twice (its name among its aliases, or an alias
    /// repeated), or an empty name.
    #[error("tool `{tool}` has an invalid name or alias `{name}`: {reason}")]
    InvalidName {
        /// The tool concerned.
        tool: String,
        /// The offending name.
        name: String,
        /// Why it was refused.
        reason: &'static str,
    },
}
