//! Installing what CI needs from Debian's archive.

use std::process::Command;

/// Whether this machine has apt-get (Debian and its kin).
pub fn available() -> bool {
    Command::new("apt-get").arg("--version").output().is_ok()
}

/// `apt-get update` and `apt-get install -y PACKAGES` (as CI runs, root); errors name
/// `what` they were for.
pub fn install(what: &str, packages: &[&str]) -> Result<(), String> {
    let install: Vec<&str> = ["install", "-y", "-q"]
        .into_iter()
        .chain(packages.iter().copied())
        .collect();
    for args in [&["update", "-q"][..], &install[..]] {
        let status = Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .map_err(|e| format!("{what}: cannot run apt-get: {e}"))?;
        if !status.success() {
            return Err(format!(
                "{what}: apt-get {} failed ({status})",
                args.join(" ")
            ));
        }
    }
    Ok(())
}
