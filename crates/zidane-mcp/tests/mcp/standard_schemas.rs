//! Every schema a `tools/list` publishes is standard JSON Schema 2020-12: hosts validate
//! input and structured results with general-purpose validators (the Inspector's warns
//! about each format it does not know), so a custom format or keyword is noise at
//! best and a refused tool at worst.

use zidane_mcp::MoveAfter;
use zidane_test_support::assert_standard_schema;

use crate::support::{Harness, start, start_as, start_with, start_with_tasks};

/// Each client's listing, input and output schemas of every tool, checked strictly.
async fn check_listing(client: &str, harness: Harness) {
    let tools = harness.client.list_all_tools().await.unwrap();
    // The builtin tools and `list_tasks`: a listing that lost tools would check less.
    assert!(tools.len() >= 8, "{client}: {tools:?}");
    for tool in &tools {
        let name = &tool.name;
        let input = serde_json::Value::Object((*tool.input_schema).clone());
        assert_standard_schema(&format!("{client}: {name} input schema"), &input);
        let output = tool
            .output_schema
            .as_ref()
            .map(|schema| serde_json::Value::Object((**schema).clone()));
        if let Some(output) = output {
            assert_standard_schema(&format!("{client}: {name} output schema"), &output);
        }
    }
    harness.close().await;
}

/// Every shape a listing takes: the whole structured content (a client not known), the
/// data alone (a client that shows the text), exits through MCP tasks (Claude Code),
/// and foreground commands that never move.
#[tokio::test(flavor = "multi_thread")]
async fn every_listed_schema_is_standard_json_schema() {
    check_listing("a client not known", start().await).await;
    check_listing("Gemini CLI", start_as("gemini-cli-mcp-client").await).await;
    check_listing("Claude Code with tasks", start_with_tasks().await).await;
    check_listing(
        "commands that never move",
        start_with(|options| options.move_after(MoveAfter::Never)).await,
    )
    .await;
}
