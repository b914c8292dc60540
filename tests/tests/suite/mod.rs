mod context_api;
mod licenses;

// Real processes, probed through /proc.
#[cfg(target_os = "linux")]
mod delivery;
#[cfg(target_os = "linux")]
mod destroy;
#[cfg(target_os = "linux")]
mod example;
#[cfg(target_os = "linux")]
mod facade;
#[cfg(target_os = "linux")]
mod forged;
#[cfg(target_os = "linux")]
mod full_disk;
#[cfg(target_os = "linux")]
mod interactive;
#[cfg(target_os = "linux")]
mod latch;
#[cfg(target_os = "linux")]
mod models;
#[cfg(target_os = "linux")]
mod orphan_sweep;
#[cfg(target_os = "linux")]
mod quickstart_flow;
#[cfg(target_os = "linux")]
mod replay;
#[cfg(target_os = "linux")]
mod support;
#[cfg(target_os = "linux")]
mod tracing_story;
