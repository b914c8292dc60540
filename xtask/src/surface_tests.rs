//! The surface count on a small rustdoc JSON fixture whose every item says whether it
//! counts, and the baseline's parsing and comparison.

use std::collections::BTreeMap;

use serde_json::json;

use super::{Counts, Verdict, compare, count, parse_baseline};

/// A crate in rustdoc's JSON shape: a root module with a public function, a public module
/// holding a constant, a re-export of a struct from a private module, and a re-export of
/// a foreign item; the struct has a public and a crate-visible field, an inherent impl
/// with one public method and a trait impl whose method is not surface; a public enum
/// with a unit and a struct variant; a public trait with one method; and a foreign item.
fn fixture() -> serde_json::Value {
    json!({
        "root": 0,
        "format_version": 57,
        "index": {
            "0": { "crate_id": 0, "name": "demo", "visibility": "public",
                   "inner": { "module": { "is_crate": true, "items": [1, 2, 4, 5, 9, 13, 16] } } },
            // named, all
            "1": { "crate_id": 0, "name": "run", "visibility": "public",
                   "inner": { "function": {} } },
            // named, all
            "2": { "crate_id": 0, "name": "limits", "visibility": "public",
                   "inner": { "module": { "is_crate": false, "items": [3] } } },
            // named, all
            "3": { "crate_id": 0, "name": "MAX", "visibility": "public",
                   "inner": { "constant": {} } },
            // named; not in all: its target (6) is counted
            "4": { "crate_id": 0, "name": "Task", "visibility": "public",
                   "inner": { "use": { "source": "task::Task", "name": "Task", "id": 6, "is_glob": false } } },
            // named, all: the target is foreign
            "5": { "crate_id": 0, "name": "Value", "visibility": "public",
                   "inner": { "use": { "source": "other::Value", "name": "Value", "id": 20, "is_glob": false } } },
            // all (its private module is not in the index, so it is named only through 4)
            "6": { "crate_id": 0, "name": "Task", "visibility": "public",
                   "inner": { "struct": { "kind": { "plain": { "fields": [7, 8], "has_stripped_fields": true } },
                                          "impls": [10, 11] } } },
            // all
            "7": { "crate_id": 0, "name": "id", "visibility": "public",
                   "inner": { "struct_field": {} } },
            // neither: visible to the crate only
            "8": { "crate_id": 0, "name": "secret", "visibility": "crate",
                   "inner": { "struct_field": {} } },
            // named, all
            "9": { "crate_id": 0, "name": "State", "visibility": "public",
                   "inner": { "enum": { "variants": [14, 15], "impls": [] } } },
            // neither: an inherent impl block
            "10": { "crate_id": 0, "name": null, "visibility": "default",
                    "inner": { "impl": { "trait": null, "items": [12] } } },
            // neither: a trait impl block
            "11": { "crate_id": 0, "name": null, "visibility": "default",
                    "inner": { "impl": { "trait": { "path": "Clone", "id": 21 }, "items": [19] } } },
            // all: an inherent public method
            "12": { "crate_id": 0, "name": "new", "visibility": "public",
                    "inner": { "function": {} } },
            // named, all
            "13": { "crate_id": 0, "name": "Probe", "visibility": "public",
                    "inner": { "trait": { "items": [17], "implementations": [] } } },
            // all: variants of a public enum
            "14": { "crate_id": 0, "name": "Running", "visibility": "default",
                    "inner": { "variant": { "kind": "plain", "discriminant": null } } },
            "15": { "crate_id": 0, "name": "Ended", "visibility": "default",
                    "inner": { "variant": { "kind": { "struct": { "fields": [18], "has_stripped_fields": false } },
                                            "discriminant": null } } },
            // named, all: a public macro
            "16": { "crate_id": 0, "name": "task", "visibility": "public",
                    "inner": { "macro": "macro_rules! task {}" } },
            // all: a trait's method
            "17": { "crate_id": 0, "name": "probe", "visibility": "default",
                    "inner": { "function": {} } },
            // all: a struct variant's field
            "18": { "crate_id": 0, "name": "code", "visibility": "default",
                    "inner": { "struct_field": {} } },
            // neither: a trait impl's method
            "19": { "crate_id": 0, "name": "clone", "visibility": "default",
                    "inner": { "function": {} } },
            // neither: foreign
            "20": { "crate_id": 1, "name": "Value", "visibility": "public",
                    "inner": { "enum": { "variants": [], "impls": [] } } },
            "21": { "crate_id": 2, "name": "Clone", "visibility": "public",
                    "inner": { "trait": { "items": [], "implementations": [] } } }
        }
    })
}

#[test]
fn the_fixture_counts_each_item_as_its_comment_says() {
    // named: 1, 2, 3, 4, 5, 9, 13, 16.
    // all: 1, 2, 3, 5, 6, 7, 9, 12, 13, 14, 15, 16, 17, 18.
    assert_eq!(count(&fixture()), Ok(Counts { named: 8, all: 14 }));
}

#[test]
fn an_item_added_to_the_fixture_raises_the_counts_it_belongs_to() {
    let mut doc = fixture();
    doc["index"]["22"] = json!({ "crate_id": 0, "name": "extra", "visibility": "public",
                                 "inner": { "function": {} } });
    let Some(items) = doc["index"]["0"]["inner"]["module"]["items"].as_array_mut() else {
        panic!("the fixture's root lists its items");
    };
    items.push(json!(22));
    assert_eq!(count(&doc), Ok(Counts { named: 9, all: 15 }));
}

#[test]
fn a_document_without_an_index_is_refused() {
    assert!(count(&json!({ "root": 0 })).is_err());
}

fn counts(entries: &[(&str, usize, usize)]) -> BTreeMap<String, Counts> {
    entries
        .iter()
        .map(|(name, named, all)| {
            (
                (*name).to_owned(),
                Counts {
                    named: *named,
                    all: *all,
                },
            )
        })
        .collect()
}

#[test]
fn the_baseline_parses_and_skips_comments() {
    let text = "# header\n\nzidane-wire 10 200\nzidane 3 40\n";
    assert_eq!(
        parse_baseline(text),
        Ok(counts(&[("zidane-wire", 10, 200), ("zidane", 3, 40)]))
    );
}

#[test]
fn a_malformed_baseline_line_is_named() {
    let Err(message) = parse_baseline("# header\nzidane-wire ten 200\n") else {
        panic!("a count that is not a number parsed");
    };
    assert!(message.contains(":2:"), "{message}");
    assert!(message.contains("zidane-wire ten 200"), "{message}");
}

#[test]
fn growth_fails_and_names_what_grew() {
    let verdict = compare(&counts(&[("a", 5, 50)]), &counts(&[("a", 5, 51)]));
    assert_eq!(
        verdict,
        Verdict {
            failures: vec!["a: all 50 -> 51".to_owned()],
            notes: vec![],
        }
    );
}

#[test]
fn a_shrink_passes_and_says_so() {
    let verdict = compare(&counts(&[("a", 5, 50)]), &counts(&[("a", 4, 48)]));
    assert!(verdict.failures.is_empty(), "{verdict:?}");
    assert_eq!(verdict.notes.len(), 1);
    assert!(verdict.notes[0].contains("a shrank (named 5 -> 4, all 50 -> 48)"));
    assert!(verdict.notes[0].contains("--bless"));
}

#[test]
fn equal_counts_pass_silently() {
    let same = counts(&[("a", 5, 50), ("b", 1, 2)]);
    assert_eq!(compare(&same, &same), Verdict::default());
}

#[test]
fn a_crate_without_a_baseline_fails_and_a_vanished_one_is_noted() {
    let verdict = compare(&counts(&[("old", 1, 1)]), &counts(&[("new", 2, 3)]));
    assert_eq!(verdict.failures, vec!["new: no baseline (named 2, all 3)"]);
    assert_eq!(
        verdict.notes,
        vec!["old is in the baseline but is no longer a library crate"]
    );
}
