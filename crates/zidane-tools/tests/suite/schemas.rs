//! Every spec the model can see, pinned: schemas derived from the input types, and the
//! descriptions (they are prompts).

use insta::{assert_json_snapshot, assert_snapshot};
use zidane_tools::{BackgroundGate, GateReason, ToolRegistry};

#[test]
fn input_schemas() {
    let registry = ToolRegistry::with_default_tools().unwrap();
    for spec in registry.specs(&BackgroundGate::open()) {
        assert_json_snapshot!(format!("schema_{}", spec.name), spec.input_schema);
    }
}

#[test]
fn shell_schema_without_background() {
    let registry = ToolRegistry::with_default_tools().unwrap();
    let specs = registry.specs(&BackgroundGate::closed(GateReason::NoTasksDir));
    assert_json_snapshot!("schema_shell_gated", specs[0].input_schema);
}

#[test]
fn descriptions() {
    let registry = ToolRegistry::with_default_tools().unwrap();
    for spec in registry.specs(&BackgroundGate::open()) {
        assert_snapshot!(format!("description_{}", spec.name), spec.description);
    }
    let gated = registry.specs(&BackgroundGate::closed(GateReason::Disabled));
    assert_snapshot!("description_shell_gated", gated[0].description);
}

#[test]
fn builtin_tools_have_no_aliases() {
    let registry = ToolRegistry::with_default_tools().unwrap();
    for spec in registry.specs(&BackgroundGate::open()) {
        assert!(spec.aliases.is_empty(), "{}", spec.name);
    }
}
