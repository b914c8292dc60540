//! What an MCP client sees, pinned: the tool list (schemas, output schemas, hints) and a
//! result that carries a notification block.

use serde_json::json;

use crate::support::{start, start_task, until_ended};

#[tokio::test(flavor = "multi_thread")]
async fn tools_list() {
    let harness = start().await;
    let tools = harness.client.list_all_tools().await.unwrap();
    insta::assert_json_snapshot!("tools_list", tools);
    harness.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_result_with_a_piggybacked_notification() {
    let harness = start().await;
    let (id, _, _) = start_task(&harness, "echo built; exit 1").await;
    until_ended(&harness, &id).await;
    let result = harness.call("list_tasks", json!({})).await;
    // The commands run in the test's working directory: this crate's, wherever it is.
    let mut filters = vec![(
        regex_escape(env!("CARGO_MANIFEST_DIR")),
        "[CRATE]".to_owned(),
    )];
    filters.extend(zidane_wire::testing::filters());
    // list_tasks' runtime column, and the session id in the log directory.
    filters.push((
        r"  \d+(?:ms|\.\d+s)  ".to_owned(),
        "  [DURATION]  ".to_owned(),
    ));
    filters.push((r"pid \d+".to_owned(), "pid [PID]".to_owned()));
    let mut settings = insta::Settings::clone_current();
    for (pattern, replacement) in &filters {
        settings.add_filter(pattern, replacement.as_str());
    }
    settings.bind(|| {
        insta::assert_json_snapshot!("piggybacked_result", result);
    });
    harness.close().await;
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let escape = "\\.+*?()|[]{}^$#&-~".contains(c);
            escape.then_some('\\').into_iter().chain(std::iter::once(c))
        })
        .collect()
}
