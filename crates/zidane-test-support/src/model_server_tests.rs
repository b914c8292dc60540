#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;

fn shell(command: &str) -> ToolCall {
    ToolCall {
        name: "mcp__x__shell".to_owned(),
        namespace: None,
        arguments: json!({ "command": command }),
    }
}

/// One HTTP/1.1 request on its own connection; the response body.
async fn post_raw(addr: std::net::SocketAddr, path: &str, body: &Value) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let body = body.to_string();
    let request = format!(
        "POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let (_, body) = response.split_once("\r\n\r\n").unwrap();
    body.to_owned()
}

async fn post(model: &ScriptedModel, path: &str, body: &Value) -> String {
    post_raw(model.addr, path, body).await
}

#[test]
fn a_stream_carries_the_call_and_stops_for_its_result() {
    let turn = Turn::Calls(vec![shell("true")]);
    let stream = anthropic_stream(&turn, "m", 3);
    assert!(stream.contains("\"partial_json\":\"{\\\"command\\\":\\\"true\\\"}\""));
    assert!(stream.contains("\"stop_reason\":\"tool_use\""));
    let stream = responses_stream(&turn, 3);
    assert!(stream.contains("\"call_id\":\"call_3_0\""));
    assert!(stream.ends_with("\n\n"));
}

#[test]
fn tool_results_are_read_from_either_api() {
    let messages = json!({ "messages": [
        { "role": "user", "content": [{ "type": "tool_result", "content": "a" }] },
        { "role": "user", "content": [{ "type": "tool_result", "content": [{ "type": "text", "text": "b" }] }] },
    ] });
    assert_eq!(tool_results(&messages), ["a", "b"]);
    let responses = json!({ "input": [
        { "type": "function_call_output", "output": [{ "type": "input_text", "text": "c" }, { "type": "input_text", "text": "d" }] },
    ] });
    assert_eq!(tool_results(&responses), ["c\nd"]);
}

#[test]
fn tool_results_are_read_from_chat_completions_tool_messages() {
    let chat = json!({ "messages": [
        { "role": "system", "content": "s" },
        { "role": "assistant", "content": null, "tool_calls": [{ "id": "call_1", "type": "function" }] },
        { "role": "tool", "tool_call_id": "call_1", "content": "e" },
        { "role": "tool", "tool_call_id": "call_2", "content": [{ "type": "text", "text": "f" }, { "type": "text", "text": "g" }] },
        { "role": "user", "content": "h" },
    ] });
    assert_eq!(tool_results(&chat), ["e", "f\ng"]);
}

#[test]
fn tool_results_are_read_from_gemini_function_responses() {
    let gemini = json!({ "contents": [
        { "role": "user", "parts": [{ "text": "go" }] },
        { "role": "model", "parts": [{ "functionCall": { "name": "mcp_x_shell", "args": {} } }] },
        { "role": "user", "parts": [
            { "functionResponse": { "id": "c1", "name": "mcp_x_shell", "response": { "output": "a\n<b>" } } },
            { "text": "beside" },
        ] },
    ] });
    assert_eq!(tool_results(&gemini), [r#"{"output":"a\n<b>"}"#]);
}

#[tokio::test(flavor = "multi_thread")]
async fn gemini_streams_a_call_then_answers_a_text() {
    let mut call = shell("true");
    call.arguments["wait_for_previous"] = json!(true);
    let model = ScriptedModel::start("zidane", vec![Step::call(call), Step::text("end")])
        .await
        .unwrap();
    let main = json!({ "contents": [], "tools": [
        { "functionDeclarations": [{ "name": "read_file" }] },
        { "functionDeclarations": [{ "name": "mcp_zidane_shell" }] },
    ] });
    let side = json!({ "contents": [], "generationConfig": {} });

    let routed = post(&model, "/v1beta/models/flash-lite:generateContent", &side).await;
    let routed: Value = serde_json::from_str(&routed).unwrap();
    assert_eq!(
        routed["candidates"][0]["content"]["parts"][0]["text"],
        OFF_SCRIPT_TEXT
    );
    let counted = post(&model, "/v1beta/models/pro:countTokens", &main).await;
    assert_eq!(
        serde_json::from_str::<Value>(&counted).unwrap()["totalTokens"],
        100
    );
    assert_eq!(model.remaining(), 2);

    let first = post(
        &model,
        "/v1beta/models/pro:streamGenerateContent?alt=sse",
        &main,
    )
    .await;
    let data = sse_data(&first);
    assert_eq!(data.len(), 1, "{first}");
    let chunk: Value = serde_json::from_str(&data[0]).unwrap();
    let candidate = &chunk["candidates"][0];
    assert_eq!(candidate["content"]["role"], "model");
    assert_eq!(candidate["finishReason"], "STOP");
    assert_eq!(chunk["modelVersion"], "pro");
    let call = &candidate["content"]["parts"][0]["functionCall"];
    assert_eq!(call["name"], "mcp__x__shell");
    assert_eq!(
        call["args"],
        json!({ "command": "true", "wait_for_previous": true })
    );

    let second = post(&model, "/v1beta/models/pro:generateContent", &main).await;
    let second: Value = serde_json::from_str(&second).unwrap();
    assert_eq!(
        second["candidates"][0]["content"]["parts"][0]["text"],
        "end"
    );
    let steps: Vec<Option<usize>> = model.exchanges().iter().map(|e| e.step).collect();
    assert_eq!(steps, [None, None, Some(0), Some(1)]);
}

/// The `data:` payloads of an SSE body, `[DONE]` included.
fn sse_data(body: &str) -> Vec<String> {
    body.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_completions_stream_a_call_then_answer_a_text() {
    let model = ScriptedModel::start("zidane", vec![Step::call(shell("true")), Step::text("end")])
        .await
        .unwrap();
    let main = json!({ "model": "m", "stream": true, "messages": [],
        "tools": [{ "type": "function", "function": { "name": "mcp__zidane__shell" } }] });
    let side = json!({ "model": "m", "stream": true, "messages": [] });

    let title = post(&model, "/v1/chat/completions", &side).await;
    assert!(title.contains(OFF_SCRIPT_TEXT), "{title}");
    assert_eq!(model.remaining(), 2);

    let first = post(&model, "/v1/chat/completions", &main).await;
    let data = sse_data(&first);
    assert_eq!(data.last().map(String::as_str), Some("[DONE]"), "{first}");
    let chunks: Vec<Value> = data[..data.len() - 1]
        .iter()
        .map(|chunk| serde_json::from_str(chunk).unwrap())
        .collect();
    assert!(
        chunks
            .iter()
            .all(|c| c["object"] == "chat.completion.chunk")
    );
    let call = &chunks[0]["choices"][0]["delta"]["tool_calls"][0];
    assert_eq!(call["index"], 0);
    assert_eq!(call["id"], "call_1_0");
    assert_eq!(call["function"]["name"], "mcp__x__shell");
    let arguments: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({ "command": "true" }));
    assert_eq!(
        chunks.last().unwrap()["choices"][0]["finish_reason"],
        "tool_calls"
    );

    let second = json!({ "model": "m", "messages": [],
        "tools": [{ "type": "function", "function": { "name": "mcp__zidane__shell" } }] });
    let second: Value =
        serde_json::from_str(&post(&model, "/chat/completions", &second).await).unwrap();
    assert_eq!(second["object"], "chat.completion");
    assert_eq!(second["choices"][0]["message"]["content"], "end");
    assert_eq!(second["choices"][0]["finish_reason"], "stop");
    assert_eq!(model.remaining(), 0);
    let steps: Vec<Option<usize>> = model.exchanges().iter().map(|e| e.step).collect();
    assert_eq!(steps, [None, Some(0), Some(1)]);
}

#[tokio::test(flavor = "multi_thread")]
async fn only_the_main_conversation_advances_the_script() {
    let model = ScriptedModel::start("mcp__x", vec![Step::call(shell("true")), Step::text("end")])
        .await
        .unwrap();
    let main = json!({ "model": "m", "stream": true, "tools": [{ "name": "mcp__x__shell" }] });
    let side = json!({ "model": "haiku", "messages": [] });

    let counted = post(&model, "/v1/messages/count_tokens", &main).await;
    assert_eq!(
        serde_json::from_str::<Value>(&counted).unwrap()["input_tokens"],
        100
    );
    let title = post(&model, "/v1/messages", &side).await;
    let title: Value = serde_json::from_str(&title).unwrap();
    assert_eq!(title["content"][0]["text"], OFF_SCRIPT_TEXT);
    assert_eq!(model.remaining(), 2);

    let first = post(&model, "/v1/messages?beta=true", &main).await;
    assert!(first.contains("event: content_block_start"), "{first}");
    assert!(first.contains("\"name\":\"mcp__x__shell\""), "{first}");
    let second = post(&model, "/v1/responses", &main).await;
    assert!(second.contains("event: response.completed"), "{second}");
    assert!(second.contains("\"text\":\"end\""), "{second}");
    assert_eq!(model.remaining(), 0);
    let past = post(&model, "/v1/messages", &main).await;
    assert!(past.contains(OFF_SCRIPT_TEXT), "{past}");

    let exchanges = model.exchanges();
    let steps: Vec<Option<usize>> = exchanges.iter().map(|e| e.step).collect();
    assert_eq!(steps, [None, None, Some(0), Some(1), None]);
    assert_eq!(model.main_requests().len(), 3);
    assert!(exchanges.iter().all(|e| e.answered >= e.received));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_gated_step_waits_for_its_gate() {
    let open = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let gate = Arc::clone(&open);
    let model = ScriptedModel::start(
        "mcp__x",
        vec![Step::text("after").gated(move || gate.load(std::sync::atomic::Ordering::SeqCst))],
    )
    .await
    .unwrap();
    let main = json!({ "model": "m", "tools": [{ "name": "mcp__x__shell" }] });
    let url = model.addr;
    let mut asked = tokio::spawn(async move { post_raw(url, "/v1/messages", &main).await });
    // Held while the gate is shut (a reply would come within this window otherwise).
    assert!(
        tokio::time::timeout(Duration::from_millis(300), &mut asked)
            .await
            .is_err()
    );
    assert!(model.exchanges().is_empty());
    open.store(true, std::sync::atomic::Ordering::SeqCst);
    let response = tokio::time::timeout(GATE_WAIT, asked)
        .await
        .unwrap()
        .unwrap();
    assert!(response.contains("after"), "{response}");
}
