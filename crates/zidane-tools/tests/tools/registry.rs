//! The registry: aliases dispatch, names and aliases are claimed once, unknown names.

use std::sync::Arc;

use async_trait::async_trait;
use insta::assert_snapshot;
use serde_json::{Value, json};
use zidane_tools::{Tool, ToolContext, ToolError, ToolOutput, ToolRegistry, ToolSpec};

use super::common::{Harness, show};

struct Named {
    name: &'static str,
    aliases: &'static [&'static str],
}

#[async_trait]
impl Tool for Named {
    fn spec(&self, _view: &zidane_tools::SpecView) -> ToolSpec {
        ToolSpec {
            name: self.name.into(),
            description: format!("The {} tool.", self.name),
            input_schema: json!({ "type": "object" }),
            aliases: self.aliases.iter().map(|a| (*a).to_owned()).collect(),
            ..Default::default()
        }
    }

    async fn call(&self, _context: &ToolContext, input: Value) -> ToolOutput {
        ToolOutput::ok(format!("{} got {input}", self.name), input)
    }
}

fn named(name: &'static str, aliases: &'static [&'static str]) -> Arc<dyn Tool> {
    Arc::new(Named { name, aliases })
}

#[tokio::test]
async fn aliases_dispatch_to_the_tool() {
    let harness = Harness::new().await;
    let mut registry = ToolRegistry::with_default_tools().unwrap();
    registry
        .register(named("task_output", &["bash_output", "shell_output"]))
        .unwrap();
    for name in ["task_output", "bash_output", "shell_output"] {
        let output = registry
            .dispatch(&harness.context, name, json!({ "n": 1 }))
            .await;
        assert_eq!(output.text, r#"task_output got {"n":1}"#);
        assert!(registry.resolve(name).is_some());
    }
    assert_eq!(
        registry.names(),
        [
            "shell",
            "shell_kill",
            "wait_task",
            "read_file",
            "shell_input",
            "shell_screen",
            "shell_notify",
            "task_output"
        ]
    );
}

#[test]
fn a_name_or_alias_is_claimed_once() {
    let mut registry = ToolRegistry::with_default_tools().unwrap();
    registry
        .register(named("task_output", &["bash_output"]))
        .unwrap();
    let cases = [
        named("shell", &[]),
        named("runner", &["shell"]),
        named("bash_output", &[]),
        named("other", &["bash_output"]),
        named("twice", &["twice"]),
        named("dup", &["a", "a"]),
        named("", &[]),
        named("blank_alias", &[" "]),
    ];
    let mut errors = Vec::new();
    for tool in cases {
        let error: ToolError = registry.register(tool).unwrap_err();
        errors.push(error.to_string());
    }
    assert_eq!(registry.len(), 8, "refusals leave the registry unchanged");
    assert!(registry.resolve("runner").is_none());
    assert!(registry.resolve("a").is_none());
    assert_snapshot!("registry_refusals", errors.join("\n"));
}

#[tokio::test]
async fn unknown_tool_lists_known_ones() {
    let harness = Harness::new().await;
    let output = harness
        .call("bash_output", json!({ "task_id": "bash_1" }))
        .await;
    assert!(output.is_error);
    assert_snapshot!("registry_unknown_tool", show(&output));

    let empty = ToolRegistry::new();
    assert!(empty.is_empty());
    let output = empty.dispatch(&harness.context, "shell", json!({})).await;
    assert!(output.is_error);
    assert_snapshot!("registry_unknown_tool_empty", output.text);
}
