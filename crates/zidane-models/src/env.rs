//! `from_env`: a model picked from environment variables.

use std::sync::Arc;

use zidane_llm::Model;

#[cfg(any(feature = "openai", feature = "anthropic"))]
use crate::error::BuildError;
use crate::error::EnvError;

/// The environment variable that names the provider: `openai` or `anthropic`
/// (`ZIDANE_PROVIDER`, required).
pub const PROVIDER_ENV: &str = "ZIDANE_PROVIDER";
/// The environment variable that names the model, as the provider spells it
/// (`ZIDANE_MODEL`, required).
pub const MODEL_ENV: &str = "ZIDANE_MODEL";
/// The environment variable of the OpenAI-compatible base URL, up to `/v1`
/// (`OPENAI_BASE_URL`; OpenAI's own when unset).
pub const OPENAI_BASE_URL_ENV: &str = "OPENAI_BASE_URL";
/// The environment variable of the OpenAI key (`OPENAI_API_KEY`); not needed with an
/// [`OPENAI_BASE_URL_ENV`] (local servers want none).
pub const OPENAI_API_KEY_ENV: &str = "OPENAI_API_KEY";
/// The environment variable of the Anthropic key (`ANTHROPIC_API_KEY`, required for
/// `anthropic`).
pub const ANTHROPIC_API_KEY_ENV: &str = "ANTHROPIC_API_KEY";
/// The environment variable of the Anthropic base URL, without `/v1`
/// (`ANTHROPIC_BASE_URL`; Anthropic's own when unset).
pub const ANTHROPIC_BASE_URL_ENV: &str = "ANTHROPIC_BASE_URL";
/// Every environment variable [`from_env`] reads: a host that must not depend on the
/// machine's configuration (a test) removes these.
pub const PROVIDER_ENV_VARS: &[&str] = &[
    PROVIDER_ENV,
    MODEL_ENV,
    OPENAI_BASE_URL_ENV,
    OPENAI_API_KEY_ENV,
    ANTHROPIC_API_KEY_ENV,
    ANTHROPIC_BASE_URL_ENV,
];

/// A model picked from the environment.
///
/// | variable | |
/// |---|---|
/// | `ZIDANE_PROVIDER` | `openai` or `anthropic` (required) |
/// | `ZIDANE_MODEL` | the model name (required) |
/// | `OPENAI_API_KEY` | required for `openai` unless `OPENAI_BASE_URL` is set |
/// | `OPENAI_BASE_URL` | e.g. `http://127.0.0.1:8080/v1`; default OpenAI's |
/// | `ANTHROPIC_API_KEY` | required for `anthropic` |
/// | `ANTHROPIC_BASE_URL` | default Anthropic's |
///
/// An empty variable counts as unset. When it cannot build a model, the error lists
/// every variable that is missing, not just the first.
///
/// ```
/// match zidane_models::from_env() {
///     Ok(_model) => {} // hand it to `Agent::builder`
///     Err(error) => println!("no model: {error}"), // "cannot pick a model: set ZIDANE_PROVIDER (openai or anthropic), ZIDANE_MODEL"
/// }
/// ```
pub fn from_env() -> Result<Arc<dyn Model>, EnvError> {
    from_lookup(|name| std::env::var(name).ok())
}

/// [`from_env`] over any lookup, so it can be tested without touching the process
/// environment.
pub(crate) fn from_lookup(
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<Arc<dyn Model>, EnvError> {
    let get = |name: &str| lookup(name).filter(|value| !value.trim().is_empty());
    let provider = get(PROVIDER_ENV);
    let model = get(MODEL_ENV);
    let mut missing = Vec::new();
    let Some(provider) = provider else {
        missing.push("ZIDANE_PROVIDER (openai or anthropic)");
        if model.is_none() {
            missing.push(MODEL_ENV);
        }
        return Err(EnvError::Missing { missing });
    };
    match provider.trim().to_ascii_lowercase().as_str() {
        "openai" => {
            let base_url = get(OPENAI_BASE_URL_ENV);
            let key = get(OPENAI_API_KEY_ENV);
            if model.is_none() {
                missing.push(MODEL_ENV);
            }
            if key.is_none() && base_url.is_none() {
                missing.push("OPENAI_API_KEY (or OPENAI_BASE_URL for a server that needs no key)");
            }
            let Some(model) = model.filter(|_| missing.is_empty()) else {
                return Err(EnvError::Missing { missing });
            };
            openai(model, base_url, key)
        }
        "anthropic" => {
            let key = get(ANTHROPIC_API_KEY_ENV);
            if model.is_none() {
                missing.push(MODEL_ENV);
            }
            if key.is_none() {
                missing.push(ANTHROPIC_API_KEY_ENV);
            }
            match (model, key) {
                (Some(model), Some(key)) => anthropic(model, get(ANTHROPIC_BASE_URL_ENV), key),
                _ => Err(EnvError::Missing { missing }),
            }
        }
        _ => Err(EnvError::UnknownProvider(provider)),
    }
}

#[cfg(feature = "openai")]
fn openai(
    model: String,
    base_url: Option<String>,
    key: Option<String>,
) -> Result<Arc<dyn Model>, EnvError> {
    let mut builder = crate::OpenAi::builder(model);
    if let Some(base_url) = base_url {
        builder = builder.base_url(base_url);
    }
    if let Some(key) = key {
        builder = builder.api_key(key);
    }
    built("openai", builder.build())
}

#[cfg(not(feature = "openai"))]
fn openai(_: String, _: Option<String>, _: Option<String>) -> Result<Arc<dyn Model>, EnvError> {
    Err(EnvError::NotCompiled { provider: "openai" })
}

#[cfg(feature = "anthropic")]
fn anthropic(
    model: String,
    base_url: Option<String>,
    key: String,
) -> Result<Arc<dyn Model>, EnvError> {
    let mut builder = crate::Anthropic::builder(model).api_key(key);
    if let Some(base_url) = base_url {
        builder = builder.base_url(base_url);
    }
    built("anthropic", builder.build())
}

#[cfg(not(feature = "anthropic"))]
fn anthropic(_: String, _: Option<String>, _: String) -> Result<Arc<dyn Model>, EnvError> {
    Err(EnvError::NotCompiled {
        provider: "anthropic",
    })
}

/// The model a builder built, or why `provider` could not be built.
#[cfg(any(feature = "openai", feature = "anthropic"))]
fn built(
    provider: &'static str,
    model: Result<impl Model + 'static, BuildError>,
) -> Result<Arc<dyn Model>, EnvError> {
    match model {
        Ok(model) => Ok(Arc::new(model)),
        Err(cause) => Err(EnvError::Build { provider, cause }),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn pick(vars: &[(&str, &str)]) -> Result<Arc<dyn Model>, EnvError> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        from_lookup(|name| vars.get(name).cloned())
    }

    fn missing(vars: &[(&str, &str)]) -> Vec<&'static str> {
        match pick(vars) {
            Err(EnvError::Missing { missing }) => missing,
            Err(other) => panic!("not a missing error: {other}"),
            Ok(_) => panic!("a model was built"),
        }
    }

    #[test]
    fn nothing_set_names_the_provider_and_the_model() {
        assert_eq!(
            missing(&[]),
            ["ZIDANE_PROVIDER (openai or anthropic)", "ZIDANE_MODEL"]
        );
        let error = pick(&[("ZIDANE_MODEL", "m")]).err().unwrap();
        assert_eq!(
            error.to_string(),
            "cannot pick a model: set ZIDANE_PROVIDER (openai or anthropic)"
        );
    }

    #[test]
    fn empty_values_count_as_missing() {
        assert_eq!(
            missing(&[
                ("ZIDANE_PROVIDER", "anthropic"),
                ("ZIDANE_MODEL", " "),
                ("ANTHROPIC_API_KEY", "")
            ]),
            ["ZIDANE_MODEL", "ANTHROPIC_API_KEY"]
        );
    }

    #[test]
    fn openai_needs_a_key_or_a_base_url() {
        assert_eq!(
            missing(&[("ZIDANE_PROVIDER", "openai"), ("ZIDANE_MODEL", "gpt-4.1")]),
            ["OPENAI_API_KEY (or OPENAI_BASE_URL for a server that needs no key)"]
        );
        assert!(
            pick(&[
                ("ZIDANE_PROVIDER", "openai"),
                ("ZIDANE_MODEL", "m"),
                ("OPENAI_API_KEY", "sk")
            ])
            .is_ok()
        );
        assert!(
            pick(&[
                ("ZIDANE_PROVIDER", "OpenAI"),
                ("ZIDANE_MODEL", "smollm2"),
                ("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1"),
            ])
            .is_ok()
        );
    }

    #[test]
    fn anthropic_needs_its_key() {
        assert_eq!(
            missing(&[("ZIDANE_PROVIDER", "anthropic"), ("OPENAI_API_KEY", "sk")]),
            ["ZIDANE_MODEL", "ANTHROPIC_API_KEY"]
        );
        assert!(
            pick(&[
                ("ZIDANE_PROVIDER", "anthropic"),
                ("ZIDANE_MODEL", "claude"),
                ("ANTHROPIC_API_KEY", "k")
            ])
            .is_ok()
        );
    }

    #[test]
    fn an_unknown_provider_or_a_bad_url_is_named() {
        let error = pick(&[("ZIDANE_PROVIDER", "gemini"), ("ZIDANE_MODEL", "m")])
            .err()
            .unwrap();
        assert!(
            matches!(&error, EnvError::UnknownProvider(p) if p == "gemini"),
            "{error}"
        );
        let error = pick(&[
            ("ZIDANE_PROVIDER", "openai"),
            ("ZIDANE_MODEL", "m"),
            ("OPENAI_BASE_URL", "localhost:8080"),
        ])
        .err()
        .unwrap();
        assert!(
            matches!(
                error,
                EnvError::Build {
                    provider: "openai",
                    ..
                }
            ),
            "{error}"
        );
    }

    #[test]
    fn the_key_never_shows_in_an_error() {
        let error = pick(&[
            ("ZIDANE_PROVIDER", "anthropic"),
            ("ZIDANE_MODEL", "claude"),
            ("ANTHROPIC_API_KEY", "sk-secret\nline"),
        ])
        .err()
        .unwrap();
        let shown = format!("{error} {error:?}");
        assert!(!shown.contains("sk-secret"), "{shown}");
        assert!(matches!(
            error,
            EnvError::Build {
                cause: crate::BuildError::InvalidApiKey,
                ..
            }
        ));
    }
}
