//! Every call into Windows the two Windows bench programs make that Rust cannot check.
//! The process table, the console, a kill-on-close Job object and resuming a process
//! created suspended are the crate's own (`src/sys/windows.rs`, included here as it is);
//! here only what a bench alone needs: ending one process, this process's handle count
//! and peak working set. The only `unsafe` code of either program; each block says why
//! it is sound.
#![allow(unsafe_code)]

use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};

use windows_sys::Win32::System::ProcessStatus::{K32GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, GetProcessHandleCount, OpenProcess, PROCESS_TERMINATE, TerminateProcess,
};
use windows_sys::core::BOOL;

/// The crate's Windows calls; a bench uses some of them.
#[allow(dead_code)]
#[path = "../../src/sys/windows.rs"]
mod process;

// The floor starts its trees in a job; the driver only reads the table.
#[allow(unused_imports)]
pub(crate) use process::{Job, ProcessEntry, has_console, processes, resume_threads};

/// Ends the process `pid` (a survivor the check found), if it is still there.
pub fn terminate(pid: u32, exit_code: u32) -> io::Result<()> {
    // SAFETY: the call takes no pointer; a null result is checked below.
    let raw = unsafe { OpenProcess(PROCESS_TERMINATE, 0, pid) };
    if raw.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a valid handle `OpenProcess` just opened for us, and nothing else
    // owns it.
    let process = unsafe { OwnedHandle::from_raw_handle(raw) };
    // SAFETY: the handle is open and has `PROCESS_TERMINATE`.
    check(unsafe { TerminateProcess(process.as_raw_handle(), exit_code) })
}

/// The number of handles this process has open; `None` if Windows does not say (a
/// count of 0 included: a running process holds some, and Wine answers 0).
pub fn handle_count() -> Option<u32> {
    let mut count = 0_u32;
    // SAFETY: the pseudo-handle of the current process needs no closing, and `count` is
    // a local the call writes.
    let ok = unsafe { GetProcessHandleCount(GetCurrentProcess(), &raw mut count) };
    (ok != 0 && count > 0).then_some(count)
}

/// This process's peak working set, in KiB (the Windows counterpart of `VmHWM`); `None`
/// if Windows does not say.
pub fn peak_working_set_kib() -> Option<u64> {
    let mut counters = PROCESS_MEMORY_COUNTERS {
        cb: size_u32::<PROCESS_MEMORY_COUNTERS>(),
        ..PROCESS_MEMORY_COUNTERS::default()
    };
    // SAFETY: `counters` is a local whose size is given in `cb` and as the length; the
    // call writes only it.
    let ok = unsafe {
        K32GetProcessMemoryInfo(
            GetCurrentProcess(),
            &raw mut counters,
            size_u32::<PROCESS_MEMORY_COUNTERS>(),
        )
    };
    (ok != 0).then(|| u64::try_from(counters.PeakWorkingSetSize / 1024).unwrap_or(u64::MAX))
}

fn check(result: BOOL) -> io::Result<()> {
    if result == 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The size of `T` as the `u32` a Win32 call takes (checked when compiled).
#[allow(clippy::cast_possible_truncation)]
const fn size_u32<T>() -> u32 {
    const { assert!(size_of::<T>() <= u32::MAX as usize) };
    size_of::<T>() as u32
}
