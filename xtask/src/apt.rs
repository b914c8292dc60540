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

/// Makes sure `program` runs (`program PROBE` succeeds); installs Debian's `package`
/// with apt-get (as CI runs, root) otherwise.
pub fn ensure(program: &str, probe: &str, package: &str) -> Result<(), String> {
    let runs = || {
        Command::new(program)
            .arg(probe)
            .output()
            .is_ok_and(|out| out.status.success())
    };
    if runs() {
        return Ok(());
    }
    println!("==> {program} is missing: apt-get install {package}");
    install(package, &[package])?;
    if runs() {
        Ok(())
    } else {
        Err(format!(
            "{package}: installed, but `{program} {probe}` still fails"
        ))
    }
}
