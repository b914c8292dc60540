//! `tracing` tells the story of a background task: spans for the run (session id), each
//! model call (step), each tool call (tool, call id) and the task (task id, pid), and
//! info events for its start, kill, exit and the wake-up — seen through the filter the
//! docs give, `RUST_LOG=zidane=debug` (a target prefix: it matches `zidane_agent`,
//! `zidane_process`, …).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::{EnvFilter, Layer};
use zidane::prelude::*;

use super::support::WAIT;

/// A span or an event as the capturing layer saw it.
#[derive(Debug, Clone)]
struct Record {
    /// `span` or `event`.
    kind: &'static str,
    /// The span's name, or the event's message.
    name: String,
    target: String,
    fields: BTreeMap<String, String>,
    /// The names of the spans an event happened in, outermost first.
    scope: Vec<String>,
}

#[derive(Default)]
struct Fields(BTreeMap<String, String>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

/// Records every span it sees created and every event, with the event's span scope.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Record>>>);

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, _: &Id, _: Context<'_, S>) {
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        self.0.lock().unwrap().push(Record {
            kind: "span",
            name: attrs.metadata().name().to_owned(),
            target: attrs.metadata().target().to_owned(),
            fields: fields.0,
            scope: Vec::new(),
        });
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let name = fields.0.remove("message").unwrap_or_default();
        let scope = ctx
            .event_scope(event)
            .map(|scope| {
                scope
                    .from_root()
                    .map(|span| span.name().to_owned())
                    .collect()
            })
            .unwrap_or_default();
        self.0.lock().unwrap().push(Record {
            kind: "event",
            name,
            target: event.metadata().target().to_owned(),
            fields: fields.0,
            scope,
        });
    }
}

#[test]
fn spans_and_events_tell_a_background_tasks_life() {
    let capture = Capture::default();
    let dispatch = tracing::Dispatch::new(
        tracing_subscriber::registry()
            .with(EnvFilter::new("zidane=debug"))
            .with(capture.clone()),
    );
    // Every thread of this runtime (workers and blocking pool) reports to this test's
    // subscriber, and no other test's thread does.
    let for_threads = dispatch.clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .on_thread_start(move || {
            std::mem::forget(tracing::dispatcher::set_default(&for_threads));
        })
        .build()
        .unwrap();
    let _guard = tracing::dispatcher::set_default(&dispatch);

    let dir = tempfile::tempdir().unwrap();
    let pids = runtime.block_on(async {
        let model = ScriptedModel::new()
            .tool_call(
                "shell",
                json!({ "command": "echo built", "run_in_background": true }),
            )
            .text("building")
            .text("told")
            .tool_call(
                "shell",
                json!({ "command": "sleep 1000", "run_in_background": true }),
            )
            .tool_call("shell_kill", json!({ "task_id": "bash_2" }))
            .text("stopped");
        let agent = zidane::local_agent(Arc::new(model), dir.path())
            .session_id("traced")
            // No orphan sweep: it would end what the orphan sweep tests look at.
            .sweep_orphans(false)
            .build()
            .unwrap();
        let pids = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&pids);
        agent.hooks().subscribe(move |event| {
            if let HookEvent::BackgroundStart(start) = event {
                seen.lock().unwrap().push(start.pid);
            }
        });
        let wake = WakeLoop::spawn(agent.clone());
        wake.prompt("build").await.unwrap();
        tokio::time::timeout(WAIT, wake.next_wake())
            .await
            .expect("the wake-up in time")
            .unwrap();
        wake.prompt("serve, then stop").await.unwrap();
        drop(wake);
        agent.destroy().await.unwrap();
        pids.lock().unwrap().clone()
    });
    drop(runtime);

    let records = capture.0.lock().unwrap().clone();
    let find = |kind: &str, name: &str, field: (&str, &str)| {
        records
            .iter()
            .find(|r| {
                r.kind == kind
                    && r.name == name
                    && r.fields.get(field.0).map(String::as_str) == Some(field.1)
            })
            .unwrap_or_else(|| panic!("no {kind} {name:?} with {field:?} in\n{records:#?}"))
    };

    // Every record passed the documented filter: all targets start with `zidane`.
    assert!(records.iter().all(|r| r.target.starts_with("zidane")));

    // Spans: the runs, the model calls, the tool calls, the tasks.
    find("span", "run", ("session", "traced"));
    find("span", "run", ("drain_only", "true"));
    find("span", "model_call", ("step", "1"));
    let tool_call = find("span", "tool_call", ("tool", "shell"));
    assert!(tool_call.fields.contains_key("call_id"), "{tool_call:?}");
    let task = find("span", "task", ("task_id", "bash_1"));
    assert_eq!(task.fields["pid"], pids[0].to_string());
    find("span", "task", ("task_id", "bash_2"));

    // Events of the first task's life, in its span, in order.
    let started = find("event", "task started", ("task_id", "bash_1"));
    assert_eq!(started.scope, ["task"]);
    assert_eq!(started.fields["command"], "echo built");
    let exited = find("event", "task exited", ("task_id", "bash_1"));
    assert_eq!(exited.scope, ["task"]);
    assert_eq!(exited.fields["status"], "exited");
    assert_eq!(exited.fields["exit_code"], "0");
    let wake = find("event", "wake", ("session", "traced"));
    let delivered = find(
        "event",
        "delivering task notifications",
        ("task_ids", "bash_1"),
    );
    assert_eq!(delivered.scope, ["run"]);
    let position = |record: &Record| {
        records
            .iter()
            .position(|r| std::ptr::eq(r, record))
            .unwrap()
    };
    assert!(position(started) < position(exited));
    assert!(position(exited) < position(wake));
    assert!(position(wake) < position(delivered));

    // The second task: started, killed by the model, exited as killed.
    find("event", "task kill", ("task_id", "bash_2"));
    find("event", "task exited", ("status", "killed"));
    // The tool result is reported inside its tool call.
    let result = find("event", "tool result", ("is_error", "false"));
    assert_eq!(result.scope, ["run", "tool_call"]);
}
