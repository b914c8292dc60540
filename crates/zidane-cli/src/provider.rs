//! Where the model comes from: one function, [`model_from_env`].
//!
//! The real providers (OpenAI-compatible, Anthropic) and their configuration live in the
//! `zidane-models` crate; this module is the one seam the host calls, so that crate's
//! `from_env` replaces the body of [`model_from_env`] and nothing else changes. Until
//! then it reads the same variables and says exactly which are missing.

use std::sync::Arc;

use zidane::agent::Model;

/// Chooses the provider: `openai` (any OpenAI-compatible endpoint) or `anthropic`.
pub const PROVIDER_VAR: &str = "ZIDANE_PROVIDER";
/// The model name the provider is asked for.
pub const MODEL_VAR: &str = "ZIDANE_MODEL";
/// The OpenAI-compatible endpoint's base URL.
pub const OPENAI_BASE_URL_VAR: &str = "OPENAI_BASE_URL";
/// The OpenAI-compatible endpoint's key.
pub const OPENAI_API_KEY_VAR: &str = "OPENAI_API_KEY";
/// Anthropic's key.
pub const ANTHROPIC_API_KEY_VAR: &str = "ANTHROPIC_API_KEY";

/// No usable provider: what to set, and the way to try zidane without one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "no model provider configured: {reason}\n\
     set {vars}\n\
     e.g.  ZIDANE_PROVIDER=openai ZIDANE_MODEL=gpt-4o-mini OPENAI_BASE_URL=https://api.openai.com/v1 OPENAI_API_KEY=…\n\
     or    ZIDANE_PROVIDER=anthropic ZIDANE_MODEL=claude-sonnet-4-5 ANTHROPIC_API_KEY=…\n\
     or try it without a provider: zidane --demo",
    vars = missing.join(", ")
)]
pub struct Missing {
    /// Why the configuration is not enough.
    pub reason: String,
    /// The variables to set.
    pub missing: Vec<&'static str>,
}

/// The model of the configured provider, with its name for the footer.
///
/// This build carries no provider client yet: with every variable set it still refuses,
/// naming the provider it cannot reach — never a silent fallback to the demo.
pub fn model_from_env() -> Result<(Arc<dyn Model>, String), Missing> {
    let var = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
    let Some(provider) = var(PROVIDER_VAR) else {
        return Err(Missing {
            reason: format!("{PROVIDER_VAR} is not set"),
            missing: vec![
                PROVIDER_VAR,
                MODEL_VAR,
                OPENAI_BASE_URL_VAR,
                OPENAI_API_KEY_VAR,
            ],
        });
    };
    let needed: &[&'static str] = match provider.as_str() {
        "openai" => &[MODEL_VAR, OPENAI_BASE_URL_VAR, OPENAI_API_KEY_VAR],
        "anthropic" => &[MODEL_VAR, ANTHROPIC_API_KEY_VAR],
        other => {
            return Err(Missing {
                reason: format!("{PROVIDER_VAR}={other} is not a provider (openai, anthropic)"),
                missing: vec![PROVIDER_VAR],
            });
        }
    };
    let missing: Vec<&'static str> = needed
        .iter()
        .copied()
        .filter(|name| var(name).is_none())
        .collect();
    if !missing.is_empty() {
        return Err(Missing {
            reason: format!("{PROVIDER_VAR}={provider} needs more"),
            missing,
        });
    }
    Err(Missing {
        reason: format!("this build of zidane has no {provider} client (zidane-models)"),
        missing: vec![],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_every_variable_and_the_demo() {
        let missing = Missing {
            reason: format!("{PROVIDER_VAR} is not set"),
            missing: vec![
                PROVIDER_VAR,
                MODEL_VAR,
                OPENAI_BASE_URL_VAR,
                OPENAI_API_KEY_VAR,
            ],
        };
        let text = missing.to_string();
        for var in [
            PROVIDER_VAR,
            MODEL_VAR,
            OPENAI_BASE_URL_VAR,
            OPENAI_API_KEY_VAR,
            ANTHROPIC_API_KEY_VAR,
        ] {
            assert!(text.contains(var), "{var} missing from {text}");
        }
        assert!(text.contains("zidane --demo"));
    }
}
