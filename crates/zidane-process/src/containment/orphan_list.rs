//! Listing the orphans, for a person: what the sweep would end, ended by nothing.

use crate::containment::swept::SweptProcess;

/// Every process of this user whose owning host is gone — what
/// [`ProcessContext::sweep_orphans`](crate::ProcessContext::sweep_orphans) would end now
/// — ending none: for a person's check of the machine (`zidane doctor`). Never this
/// process or one of its ancestors, never another user's process, never one whose owner
/// may still live. `None` where the process table cannot be listed; always empty on
/// Windows, where a host's tasks end with it. Blocking: it reads `/proc`.
///
/// ```
/// let orphans = zidane_process::find_orphans().unwrap_or_default();
/// // Listed, not ended: each runs on until a sweep, or a person, ends it.
/// assert!(orphans.iter().all(|orphan| orphan.pid != std::process::id()));
/// ```
pub fn find_orphans() -> Option<Vec<SweptProcess>> {
    crate::containment::find_orphans()
}
