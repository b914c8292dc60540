//! What a host substitutes in a server's command before it starts it — never `~`, and
//! `$HOME` only where the host expands variables — and what a person meant by it.

use std::path::{Path, PathBuf};

use super::here::Here;

/// What a host substitutes in a command before it starts it; never `~`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expansion {
    /// Nothing: the command is run as written.
    Nothing,
    /// `${VAR}` and `${VAR:-default}` from the environment (Claude Code).
    Braced,
    /// `$VAR` and `${VAR}` from the environment (Gemini CLI, qwen-code).
    Dollar,
    /// `${userHome}`, `${workspaceFolder}` and `${env:VAR}` (VS Code, Cursor).
    Editor,
}

/// `text` with what a host of `expansion` substitutes substituted; what it leaves (an
/// unset variable) stays as written.
pub(crate) fn expand(
    expansion: Expansion,
    text: &str,
    here: &Here,
    project: Option<&Path>,
) -> String {
    let lookup = |name: &str| -> Option<String> {
        match expansion {
            Expansion::Nothing => None,
            Expansion::Braced => {
                let (name, default) = match name.split_once(":-") {
                    Some((name, default)) => (name, Some(default)),
                    None => (name, None),
                };
                std::env::var(name)
                    .ok()
                    .or_else(|| default.map(str::to_owned))
            }
            Expansion::Dollar => std::env::var(name).ok(),
            Expansion::Editor => match name {
                "userHome" => here.home.as_ref().map(|home| home.display().to_string()),
                "workspaceFolder" => project.map(|dir| dir.display().to_string()),
                "/" | "pathSeparator" => Some(std::path::MAIN_SEPARATOR.to_string()),
                _ => std::env::var(name.strip_prefix("env:")?).ok(),
            },
        }
    };
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, len) = if let Some(braced) = after.strip_prefix('{') {
            match braced.find('}') {
                Some(end) => (&braced[..end], end + 2),
                None => ("", 0),
            }
        } else if expansion == Expansion::Dollar {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], end)
        } else {
            ("", 0)
        };
        match (len, lookup(name)) {
            (1.., Some(value)) => {
                out.push_str(&value);
                rest = &after[len..];
            }
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `text` as a shell would read its `~` and `$HOME`: what the person meant.
pub(crate) fn shell_expanded(text: &str, here: &Here) -> Option<PathBuf> {
    let home = here.home.as_ref()?.display().to_string();
    let rest = text
        .strip_prefix("~/")
        .or_else(|| text.strip_prefix("$HOME/"))
        .or_else(|| text.strip_prefix("${HOME}/"))?;
    Some(Path::new(&home).join(rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_substitute_only_what_they_substitute() {
        let here = Here {
            home: Some(PathBuf::from("/home/ada")),
            ..Here::default()
        };
        let project = Some(Path::new("/work/app"));
        let editor = |text| expand(Expansion::Editor, text, &here, project);
        assert_eq!(editor("${userHome}/bin/zidane"), "/home/ada/bin/zidane");
        assert_eq!(editor("${workspaceFolder}/zidane"), "/work/app/zidane");
        assert_eq!(editor("$HOME/zidane"), "$HOME/zidane");
        let braced = |text| expand(Expansion::Braced, text, &here, None);
        assert_eq!(
            braced("${NO_SUCH_VARIABLE_HERE:-/opt}/zidane"),
            "/opt/zidane"
        );
        assert_eq!(
            braced("${NO_SUCH_VARIABLE_HERE}/zidane"),
            "${NO_SUCH_VARIABLE_HERE}/zidane"
        );
        assert_eq!(
            expand(Expansion::Nothing, "${HOME}/z", &here, None),
            "${HOME}/z"
        );
    }

    #[test]
    fn a_tilde_or_home_is_what_the_person_meant() {
        let here = Here {
            home: Some(PathBuf::from("/home/ada")),
            ..Here::default()
        };
        for text in ["~/bin/zidane", "$HOME/bin/zidane", "${HOME}/bin/zidane"] {
            assert_eq!(
                shell_expanded(text, &here),
                Some(PathBuf::from("/home/ada/bin/zidane")),
                "{text}"
            );
        }
        assert_eq!(shell_expanded("/opt/zidane", &here), None);
    }
}
