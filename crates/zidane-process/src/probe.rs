//! Readiness probes on this machine, for `ProcessContext::probe`: a TCP connect to a
//! loopback port, or an HTTP GET that does not follow redirects. Both are bounded by the
//! caller's timeout; a failure is a reason to report, never an error of the context.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use zidane_context::{Probe, ProbeOutcome};

/// Runs `probe` once, within `timeout`.
pub(crate) async fn run(probe: Probe, timeout: Duration) -> ProbeOutcome {
    match probe {
        Probe::Port { port } => connect(port, timeout).await,
        Probe::Http { url } => get(url, timeout).await,
        // A kind of probe this version does not know: say so rather than guess.
        other => ProbeOutcome::NotReady {
            reason: format!("this machine cannot run the probe {other:?}"),
        },
    }
}

async fn connect(port: u16, timeout: Duration) -> ProbeOutcome {
    let addr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port);
    match tokio::time::timeout(timeout, tokio::net::TcpStream::connect(addr)).await {
        Ok(Ok(_)) => ProbeOutcome::Ready { status: None },
        Ok(Err(error)) => ProbeOutcome::NotReady {
            reason: format!("connect to {addr}: {error}"),
        },
        Err(_) => ProbeOutcome::NotReady {
            reason: format!("connect to {addr}: no answer within {timeout:?}"),
        },
    }
}

async fn get(url: String, timeout: Duration) -> ProbeOutcome {
    // ureq blocks; the probe runs on the blocking pool, bounded by its own timeout.
    let probe = tokio::task::spawn_blocking(move || {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .max_redirects(0)
            .http_status_as_error(false)
            .build()
            .into();
        match agent.get(&url).call() {
            Ok(response) => {
                let status = response.status().as_u16();
                if (200..400).contains(&status) {
                    ProbeOutcome::Ready {
                        status: Some(status),
                    }
                } else {
                    ProbeOutcome::NotReady {
                        reason: format!("GET {url} answered {status}"),
                    }
                }
            }
            Err(error) => ProbeOutcome::NotReady {
                reason: format!("GET {url}: {error}"),
            },
        }
    });
    probe.await.unwrap_or_else(|join| ProbeOutcome::NotReady {
        reason: format!("the probe failed: {join}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_closed_port_is_not_ready_and_says_why() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let outcome = run(Probe::port(port), Duration::from_secs(2)).await;
        let ProbeOutcome::NotReady { reason } = outcome else {
            panic!("{outcome:?}");
        };
        assert!(
            reason.starts_with(&format!("connect to 127.0.0.1:{port}: ")),
            "{reason}"
        );
    }

    #[tokio::test]
    async fn an_open_port_is_ready() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let outcome = run(Probe::port(port), Duration::from_secs(2)).await;
        assert_eq!(outcome, ProbeOutcome::Ready { status: None });
    }
}
