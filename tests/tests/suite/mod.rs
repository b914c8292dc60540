mod context_api;

// Real processes, probed through /proc.
#[cfg(target_os = "linux")]
mod example;
#[cfg(target_os = "linux")]
mod quickstart_flow;
#[cfg(target_os = "linux")]
mod support;
