//! The declared field a misspelt argument most likely meant: shared by the refusal of
//! undeclared arguments and the translation of input errors.

use serde_json::{Map, Value};

/// The declared argument `name` looks like a misspelling of, if any: the same once case
/// and separators are set aside, or within a couple of edits (one for short names).
pub(crate) fn near_miss<'a>(name: &str, declared: &'a Map<String, Value>) -> Option<&'a str> {
    let folded = fold(name);
    declared
        .keys()
        .map(|candidate| {
            let distance = strsim::levenshtein(&folded, &fold(candidate));
            (candidate, distance)
        })
        .filter(|(candidate, distance)| *distance <= allowed_edits(candidate))
        .min_by_key(|(_, distance)| *distance)
        .map(|(candidate, _)| candidate.as_str())
}

fn fold(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

fn allowed_edits(declared: &str) -> usize {
    if declared.chars().count() <= 4 { 1 } else { 2 }
}
