//! The systemd unit `dist/systemd/zidane-worker.service`, checked by what this machine
//! has: `systemd-analyze verify` on a copy whose `ExecStart` names the `zidane-worker`
//! just built (the unit's own path is where an installation puts it). Any word
//! `systemd-analyze` says fails the check: it exits 0 on a directive it ignores.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// The unit, in the workspace.
const UNIT: &str = "dist/systemd/zidane-worker.service";

/// Where the unit expects the binary.
const INSTALLED: &str = "/usr/local/bin/zidane-worker";

/// Whether `systemd-analyze` runs here.
fn present() -> bool {
    Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success())
}

/// `systemd-analyze verify` of the unit `text` with its `ExecStart` pointed at `binary`
/// (the copy written in `scratch`): what it said, when it said anything or failed.
fn verify(text: &str, binary: &Path, scratch: &Path) -> Result<(), String> {
    if !text.contains(&format!("ExecStart={INSTALLED}\n")) {
        return Err(format!("it does not start {INSTALLED}"));
    }
    std::fs::create_dir_all(scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let copy = scratch.join("zidane-worker.service");
    let rewritten = text.replace(
        &format!("ExecStart={INSTALLED}"),
        &format!("ExecStart={}", binary.display()),
    );
    std::fs::write(&copy, rewritten).map_err(|e| format!("{}: {e}", copy.display()))?;
    let output = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&copy)
        .output()
        .map_err(|e| format!("cannot run systemd-analyze: {e}"))?;
    let said = String::from_utf8_lossy(&output.stderr);
    if output.status.success() && said.trim().is_empty() {
        Ok(())
    } else {
        Err(format!(
            "systemd-analyze verify ({}): {}",
            output.status,
            said.trim()
        ))
    }
}

/// Checks the unit; `Ok` with a note where `systemd-analyze` is missing.
pub fn check(workspace: &Path) -> Result<(), String> {
    let started = Instant::now();
    println!("==> systemd unit: systemd-analyze verify {UNIT}");
    if !present() {
        println!("<== systemd unit: skipped: systemd-analyze is not installed here");
        return Ok(());
    }
    let binary = crate::deploy::built_worker(workspace)?;
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace.join("target"), Into::into);
    let text = std::fs::read_to_string(workspace.join(UNIT))
        .map_err(|e| format!("systemd unit: cannot read {UNIT}: {e}"))?;
    verify(&text, &binary, &target.join("systemd-unit"))
        .map_err(|said| format!("systemd unit: {UNIT}: {said}"))?;
    println!("<== systemd unit: ok in {:.1?}", started.elapsed());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unit_passes_and_a_planted_mistake_does_not() {
        if !present() {
            return;
        }
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let text = std::fs::read_to_string(workspace.join(UNIT)).unwrap();
        let binary = Path::new("/bin/true");
        let scratch = tempfile::tempdir().unwrap();
        let scratch = scratch.path();
        assert_eq!(verify(&text, binary, scratch), Ok(()));
        let planted = text.replace("KillMode=mixed", "KillMode=gently");
        let said = verify(&planted, binary, scratch).unwrap_err();
        assert!(said.contains("kill mode"), "{said}");
        let elsewhere = text.replace(INSTALLED, "/opt/zidane-worker");
        assert!(
            verify(&elsewhere, binary, scratch)
                .unwrap_err()
                .contains(INSTALLED)
        );
    }
}
