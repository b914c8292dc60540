//! Where systemd runs a user manager, the supervisor starts in a transient scope of its
//! own (`systemd-run --user --scope`): out of the starter's cgroup, so what ends a host's
//! unit (a terminal's, an IDE's, a `KillMode=control-group` service's) does not end the
//! supervisor or the monitors it starts, and `systemctl --user` shows them by name.

use std::ffi::OsString;
use std::path::Path;

/// The unit name prefix; `systemctl --user list-units 'zidane-supervisor-*'` lists them.
pub const SCOPE_PREFIX: &str = "zidane-supervisor-";

/// The arguments of `systemd-run` that run `program args…` in a new scope named for
/// `label` (the supervisor's socket's stem) and `nonce` (unique per start: a scope whose
/// monitors outlive its supervisor still holds the last one's name).
pub(crate) fn scoped_args(
    label: &str,
    nonce: &str,
    program: &Path,
    args: &[OsString],
) -> Vec<OsString> {
    let mut scoped: Vec<OsString> = [
        "--user",
        "--scope",
        "--quiet",
        "--collect",
        "--description=zidane's supervisor of detached tasks",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    let label = label.strip_prefix("supervisor-").unwrap_or(label);
    scoped.push(format!("--unit={SCOPE_PREFIX}{label}-{nonce}").into());
    scoped.push("--".into());
    scoped.push(program.as_os_str().to_owned());
    scoped.extend(args.iter().cloned());
    scoped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scope_runs_the_supervisor_as_it_is_after_a_double_dash() {
        let args = scoped_args(
            "supervisor-0a1b2c3d",
            "4242-17",
            Path::new("/usr/bin/zidane"),
            &["supervisor".into(), "serve".into()],
        );
        let args: Vec<String> = args
            .into_iter()
            .map(|arg| arg.into_string().unwrap())
            .collect();
        assert_eq!(
            args,
            [
                "--user",
                "--scope",
                "--quiet",
                "--collect",
                "--description=zidane's supervisor of detached tasks",
                "--unit=zidane-supervisor-0a1b2c3d-4242-17",
                "--",
                "/usr/bin/zidane",
                "supervisor",
                "serve",
            ]
        );
    }
}
