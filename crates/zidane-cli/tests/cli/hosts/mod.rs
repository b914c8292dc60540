//! `zidane mcp` inside real MCP hosts — Claude Code, Codex, opencode, GitHub Copilot
//! CLI, Gemini CLI and qwen-code from npm, pinned and installed by `cargo xtask hosts`
//! (or `cargo xtask ci`) into `target/mcp-hosts` — each run offline against a scripted
//! model server, and the MCP Inspector's CLI. The assertions are on what the host
//! showed the model: the tool results in the requests the scripted model received.
//!
//! Without the hosts installed the tests skip, saying why; under `CI=true` they fail.

/// One test per host for each scenario, named for the host:
/// `host_tests!([claude_code => ClaudeCode, codex => Codex], a_scenario, another)` runs
/// `a_scenario(Host::ClaudeCode)` as `a_scenario::claude_code`, and so on.
macro_rules! host_tests {
    ($hosts:tt, $($scenario:ident),* $(,)?) => {$(
        host_tests!(@one $scenario $hosts);
    )*};
    (@one $scenario:ident [$($test:ident => $host:ident),+ $(,)?]) => {
        mod $scenario {$(
            #[tokio::test(flavor = "multi_thread")]
            async fn $test() {
                super::$scenario(crate::hosts::host::Host::$host).await;
            }
        )+}
    };
}

mod host;

mod ceiling;
mod claude_tasks;
mod codex_sandbox;
mod detached;
mod fleet;
mod inspector;
mod latency;
mod moved;
mod scenarios;
mod setup;
