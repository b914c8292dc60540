//! The shell and the sandbox: the line of its description that tells the model the
//! rules, and `outside_sandbox`, the one way out — one command at a time, once a person
//! approved it through the host's [`Approver`](crate::Approver).
//!
//! `outside_sandbox` and `justification` are offered where the context has a sandbox
//! policy; elsewhere they are withheld, so a forged one is refused with the reason and
//! nothing runs.

use serde_json::{Map, Value};
use zidane_context::{SandboxReport, SandboxScope, SandboxStatus};

use crate::approval::{Approval, ApprovalRequest};
use crate::context::ToolContext;

/// The arguments that ask for a command outside the sandbox.
pub(crate) const OUTSIDE_FIELDS: [&str; 2] = ["outside_sandbox", "justification"];

/// What the description adds to the sandbox's line where a command may step outside.
const OUTSIDE_DESCRIPTION: &str = "\
A command that needs what the sandbox forbids can run outside it: set `outside_sandbox: \
true` with a `justification`, and a person is asked to approve that one command; nothing \
runs unless they do. Ask only when the task needs it, not to retry any failure.";

/// What the user changes so that commands need no approval to reach further, named in
/// every refusal that could not ask anyone.
const SETTINGS_HINT: &str = "\
The user can widen the sandbox instead: `--sandbox off`, `--writable DIR` for a directory \
commands must write, or the `[sandbox]` table of zidane's config file.";

/// Whether a context whose sandbox is `report` offers `outside_sandbox`: its policy
/// asks for a sandbox (in force, or asked for and unavailable here).
pub(crate) fn offers_outside(report: &SandboxReport) -> bool {
    report.policy.is_on() && report.status != SandboxStatus::Off
}

/// The description's sandbox paragraph: the report's line, and how to step outside
/// where that is offered. `None` where there is no sandbox by choice.
pub(crate) fn paragraph(report: &SandboxReport) -> Option<String> {
    let line = report.line()?;
    if offers_outside(report) {
        Some(format!("{line} {OUTSIDE_DESCRIPTION}"))
    } else {
        Some(line)
    }
}

/// Drops the outside arguments from an input schema's `properties` where `report`
/// does not offer them.
pub(crate) fn fit_schema(properties: &mut Map<String, Value>, report: &SandboxReport) {
    if !offers_outside(report) {
        for field in OUTSIDE_FIELDS {
            properties.remove(field);
        }
    }
}

/// Why `argument` is refused where the sandbox is off, or `None` when it is not one of
/// [`OUTSIDE_FIELDS`].
pub(crate) fn withheld(argument: &str) -> Option<String> {
    OUTSIDE_FIELDS.contains(&argument).then(|| {
        "`outside_sandbox` and its `justification` are not available: commands here run \
         without a sandbox, so there is none to step outside; nothing was run. Drop them."
            .to_owned()
    })
}

/// The sandbox `command` runs in: the context's, or none once a person approved it.
/// An error is the refusal the model reads after the tool's name, and nothing may run:
/// a refused or malformed request, a declined or unanswered one, or nobody to ask.
pub(crate) async fn scope(
    context: &ToolContext,
    command: &str,
    outside: Option<bool>,
    justification: Option<&str>,
) -> Result<SandboxScope, String> {
    let refuse = Err;
    if outside != Some(true) {
        if justification.is_some() {
            return refuse(
                "`justification` goes with `outside_sandbox: true`; drop it to run the command \
                 in the sandbox"
                    .to_owned(),
            );
        }
        return Ok(SandboxScope::Context);
    }
    if !offers_outside(&context.execution().sandbox()) {
        return refuse(withheld("outside_sandbox").unwrap_or_default());
    }
    let Some(justification) = justification.map(str::trim).filter(|j| !j.is_empty()) else {
        return refuse(
            "`outside_sandbox` needs a `justification`: one sentence on why this command must \
             run outside the sandbox, for the person asked to approve it; nothing was run"
                .to_owned(),
        );
    };
    let Some(approver) = context.approver() else {
        return refuse(unavailable("this host has no way to ask a person"));
    };
    let request = ApprovalRequest::new(command, justification);
    let answer = tokio::select! {
        answer = approver.ask(&request) => answer,
        () = context.cancel().cancelled() => {
            return refuse("cancelled while waiting for approval; nothing was run".to_owned());
        }
    };
    match answer {
        Approval::Approved => Ok(SandboxScope::Outside),
        Approval::Declined => refuse(
            "the user declined running this command outside the sandbox; nothing was run. Do \
             not ask again for it: run what you can inside the sandbox, or ask the user how to \
             go on"
                .to_owned(),
        ),
        Approval::TimedOut => refuse(
            "nobody answered the request to run this command outside the sandbox in time; \
             nothing was run. Run what you can inside the sandbox, or tell the user what needs \
             their approval"
                .to_owned(),
        ),
        Approval::Unavailable(reason) => refuse(unavailable(&reason)),
    }
}

/// The refusal of a command outside the sandbox when nobody can be asked, for
/// `reason`: what the user can change instead.
fn unavailable(reason: &str) -> String {
    format!(
        "running a command outside the sandbox needs a person's approval, and nobody can be \
         asked: {reason}. Nothing was run. {SETTINGS_HINT}"
    )
}
