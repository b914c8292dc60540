//! Every spec the model can see, pinned: schemas derived from the input types, and the
//! descriptions (they are prompts).

use std::time::Duration;

use insta::{assert_json_snapshot, assert_snapshot};
use zidane_test_support::assert_standard_schema;
use zidane_tools::{BackgroundGate, ExitChannel, GateReason, ToolRegistry};

#[test]
fn input_schemas() {
    let registry = ToolRegistry::with_default_tools().unwrap();
    for spec in registry.specs(&zidane_tools::SpecView::new(BackgroundGate::open())) {
        assert_json_snapshot!(format!("schema_{}", spec.name), spec.input_schema);
    }
}

#[test]
fn shell_schema_without_background() {
    let registry = ToolRegistry::with_default_tools().unwrap();
    let specs = registry.specs(&zidane_tools::SpecView::new(BackgroundGate::closed(
        GateReason::NoTasksDir,
    )));
    assert_json_snapshot!("schema_shell_gated", specs[0].input_schema);
}

#[test]
fn descriptions() {
    let registry = ToolRegistry::with_default_tools().unwrap();
    for spec in registry.specs(&zidane_tools::SpecView::new(BackgroundGate::open())) {
        assert_snapshot!(format!("description_{}", spec.name), spec.description);
    }
    let gated = registry.specs(&zidane_tools::SpecView::new(BackgroundGate::closed(
        GateReason::Disabled,
    )));
    assert_snapshot!("description_shell_gated", gated[0].description);
}

/// Input, terminal and task event tools, fields and paragraphs are shown only to a
/// session whose tasks can take input, have a terminal, and have logs that can be
/// followed.
#[test]
fn input_and_terminals_only_where_the_gate_allows_them() {
    let registry = ToolRegistry::with_default_tools().unwrap();
    let names = |gate: &BackgroundGate| {
        registry
            .specs(&zidane_tools::SpecView::new(*gate))
            .into_iter()
            .map(|spec| spec.name)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(&BackgroundGate::open()),
        [
            "shell",
            "shell_kill",
            "wait_task",
            "read_file",
            "shell_input",
            "shell_screen",
            "shell_notify"
        ]
    );
    let plain = ["shell", "shell_kill", "wait_task", "read_file"];
    assert_eq!(names(&BackgroundGate::open_without_input()), plain);
    assert_eq!(names(&BackgroundGate::closed(GateReason::Disabled)), plain);
    let shell = &registry.specs(&zidane_tools::SpecView::new(
        BackgroundGate::open_without_input(),
    ))[0];
    let properties = shell.input_schema["properties"].as_object().unwrap();
    for field in ["stdin", "tty", "rows", "cols", "notify_on"] {
        assert!(!properties.contains_key(field), "{field}");
    }
    assert!(properties.contains_key("run_in_background"));
    assert!(!shell.description.contains("shell_input"));
    let gated = &registry.specs(&zidane_tools::SpecView::new(BackgroundGate::closed(
        GateReason::Disabled,
    )))[0];
    assert!(
        !gated.input_schema["properties"]
            .as_object()
            .unwrap()
            .contains_key("tty")
    );
}

/// Every view a session can list the tools under, from the widest (an open gate with
/// input, terminals, task events and moved foreground commands, under each exit
/// channel) to the narrowest (a closed gate, for each reason).
fn every_view() -> Vec<zidane_tools::SpecView> {
    let mut gates = Vec::new();
    for channel in [
        ExitChannel::NextTurn,
        ExitChannel::NextToolResult,
        ExitChannel::HostWakes,
    ] {
        for budget in [None, Some(Duration::from_secs(50))] {
            for gate in [BackgroundGate::open(), BackgroundGate::open_without_input()] {
                gates.push(
                    gate.with_exit_channel(channel)
                        .with_foreground_budget(budget),
                );
            }
        }
    }
    for reason in [
        GateReason::NoTasksDir,
        GateReason::Disabled,
        GateReason::Unsupported,
        GateReason::NotDurable,
    ] {
        gates.push(BackgroundGate::closed(reason));
    }
    gates.into_iter().map(zidane_tools::SpecView::new).collect()
}

/// Hosts validate input and structured results with general-purpose validators, which
/// warn about what the standard does not define (schemars' `uint64` format, say): every
/// schema a tool publishes, input and output, in every view, is plain JSON Schema
/// 2020-12.
#[test]
fn every_schema_is_standard_json_schema() {
    let registry = ToolRegistry::with_default_tools().unwrap();
    for view in every_view() {
        let specs = registry.specs(&view);
        // The tools every session is offered (shell, shell_kill, wait_task, read_file),
        // at least: no view checks nothing.
        assert!(specs.len() >= 4, "{view:?}");
        for spec in specs {
            let name = &spec.name;
            let gate = &view.gate;
            assert_standard_schema(
                &format!("{name} input schema under {gate:?}"),
                &spec.input_schema,
            );
            if let Some(output) = &spec.output_schema {
                assert_standard_schema(&format!("{name} output schema under {gate:?}"), output);
            }
        }
    }
}

#[test]
fn builtin_tools_have_no_aliases() {
    let registry = ToolRegistry::with_default_tools().unwrap();
    for spec in registry.specs(&zidane_tools::SpecView::new(BackgroundGate::open())) {
        assert!(spec.aliases.is_empty(), "{}", spec.name);
    }
}

/// The model is told the shell its commands actually run under.
#[cfg(unix)]
#[test]
fn the_shell_description_names_the_contexts_shell() {
    use zidane_context::MockContext;
    use zidane_process::{ProcessContext, Shell};

    let registry = ToolRegistry::with_default_tools().unwrap();
    let bash = ProcessContext::builder()
        .shell(Shell::new("/bin/bash"))
        .build();
    let specs = registry.specs(&zidane_tools::SpecView::in_context(
        BackgroundGate::open(),
        &bash,
    ));
    assert!(
        specs[0]
            .description
            .starts_with("Runs a bash command (`/bin/bash`) to completion"),
        "{}",
        specs[0].description
    );
    let sh = ProcessContext::builder()
        .shell(Shell::new("/bin/sh"))
        .build();
    let gated = registry.specs(&zidane_tools::SpecView::in_context(
        BackgroundGate::closed(GateReason::Disabled),
        &sh,
    ));
    assert!(
        gated[0]
            .description
            .starts_with("Runs a sh command (`/bin/sh`) to completion"),
        "{}",
        gated[0].description
    );
    // A context that does not say: no dialect is claimed.
    let specs = registry.specs(&zidane_tools::SpecView::in_context(
        BackgroundGate::open(),
        &MockContext::new(),
    ));
    assert!(
        specs[0]
            .description
            .starts_with("Runs a shell command to completion")
    );
}
