//! Every call into Windows the two Windows bench programs make that Rust cannot check:
//! the process table (Toolhelp32), ending one process, this process's handle count and
//! peak working set, whether it has a console, and — for the floor — a kill-on-close Job
//! object and resuming a process created suspended. The only `unsafe` code of either program; each block says
//! why it is sound.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::io;
use std::os::windows::io::{AsRawHandle, BorrowedHandle, FromRawHandle, OwnedHandle};
use std::ptr;

use windows_sys::Win32::Foundation::{ERROR_NO_MORE_FILES, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Console::GetConsoleProcessList;
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CREATE_TOOLHELP_SNAPSHOT_FLAGS, CreateToolhelp32Snapshot, PROCESSENTRY32W, Process32FirstW,
    Process32NextW, TH32CS_SNAPPROCESS, TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First,
    Thread32Next,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation,
    SetInformationJobObject, TerminateJobObject,
};
use windows_sys::Win32::System::ProcessStatus::{K32GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, GetProcessHandleCount, OpenProcess, OpenThread, PROCESS_TERMINATE,
    ResumeThread, THREAD_SUSPEND_RESUME, TerminateProcess,
};
use windows_sys::core::BOOL;

/// One process as the process table describes it.
#[derive(Debug, Clone)]
pub struct ProcessEntry {
    /// Its pid.
    pub pid: u32,
    /// The file name of its executable, e.g. `ping.exe`.
    pub exe: String,
}

/// Every process a Toolhelp32 snapshot finds.
pub fn processes() -> io::Result<Vec<ProcessEntry>> {
    let snapshot = snapshot(TH32CS_SNAPPROCESS)?;
    let mut entry = PROCESSENTRY32W {
        dwSize: size_u32::<PROCESSENTRY32W>(),
        ..PROCESSENTRY32W::default()
    };
    let mut found = Vec::new();
    // SAFETY: the snapshot's handle is open, and `entry` is a local with `dwSize` set to
    // its size, as the call requires; the call writes only `entry`.
    let mut more = unsafe { Process32FirstW(snapshot.as_raw_handle(), &raw mut entry) };
    while more != 0 {
        let name = &entry.szExeFile;
        let len = name
            .iter()
            .position(|&unit| unit == 0)
            .unwrap_or(name.len());
        found.push(ProcessEntry {
            pid: entry.th32ProcessID,
            exe: String::from_utf16_lossy(&name[..len]),
        });
        // SAFETY: as for `Process32FirstW`.
        more = unsafe { Process32NextW(snapshot.as_raw_handle(), &raw mut entry) };
    }
    end_of_snapshot()?;
    Ok(found)
}

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

/// Whether this process is attached to a console (the console's process list is empty
/// without one), which decides the creation flags of a child and how zidane stops one.
pub fn has_console() -> bool {
    let mut pids = [0_u32; 1];
    // SAFETY: `pids` is a local array of the one entry the call is told of; the call
    // writes at most that one and returns the number of attached processes, 0 on failure.
    unsafe { GetConsoleProcessList(pids.as_mut_ptr(), 1) != 0 }
}

/// A kill-on-close Job object.
#[derive(Debug)]
pub struct Job {
    handle: OwnedHandle,
}

impl Job {
    /// Creates an empty job whose processes end when its last handle closes.
    pub fn new() -> io::Result<Job> {
        // SAFETY: a null `SECURITY_ATTRIBUTES` (default security, handle not inherited)
        // and a null name (an anonymous job) are both allowed.
        let raw = unsafe { CreateJobObjectW(ptr::null(), ptr::null()) };
        if raw.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a valid handle the call just opened for us, and nothing else
        // owns it.
        let handle = unsafe { OwnedHandle::from_raw_handle(raw) };
        let mut limits = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: the class names `JOBOBJECT_EXTENDED_LIMIT_INFORMATION`, `limits` is one
        // (a local) and the length given is its size; the call only reads it.
        check(unsafe {
            SetInformationJobObject(
                handle.as_raw_handle(),
                JobObjectExtendedLimitInformation,
                (&raw const limits).cast::<c_void>(),
                size_u32::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>(),
            )
        })?;
        Ok(Job { handle })
    }

    /// Puts `process` in the job, and with it whatever it starts from then on.
    pub fn assign(&self, process: BorrowedHandle<'_>) -> io::Result<()> {
        // SAFETY: both handles are open for the length of the call; it takes no pointer.
        check(unsafe {
            AssignProcessToJobObject(self.handle.as_raw_handle(), process.as_raw_handle())
        })
    }

    /// Ends every process in the job with `exit_code`.
    pub fn terminate(&self, exit_code: u32) -> io::Result<()> {
        // SAFETY: the job's handle is open; the call takes no pointer.
        check(unsafe { TerminateJobObject(self.handle.as_raw_handle(), exit_code) })
    }
}

/// Resumes every thread of the suspended process `pid`, found in a Toolhelp32 thread
/// snapshot (std keeps the main thread's handle to itself); fails when it has none.
pub fn resume_threads(pid: u32) -> io::Result<()> {
    let snapshot = snapshot(TH32CS_SNAPTHREAD)?;
    let mut entry = THREADENTRY32 {
        dwSize: size_u32::<THREADENTRY32>(),
        ..THREADENTRY32::default()
    };
    let mut resumed = 0_usize;
    // SAFETY: the snapshot's handle is open, and `entry` is a local with `dwSize` set to
    // its size, as the call requires; the call writes only `entry`.
    let mut more = unsafe { Thread32First(snapshot.as_raw_handle(), &raw mut entry) };
    while more != 0 {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: the call takes no pointer; a null result is checked below.
            let raw = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) };
            if raw.is_null() {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `raw` is a valid handle the call just opened for us, and nothing
            // else owns it.
            let thread = unsafe { OwnedHandle::from_raw_handle(raw) };
            // SAFETY: the thread's handle is open and has `THREAD_SUSPEND_RESUME`.
            if unsafe { ResumeThread(thread.as_raw_handle()) } == u32::MAX {
                return Err(io::Error::last_os_error());
            }
            resumed += 1;
        }
        // SAFETY: as for `Thread32First`.
        more = unsafe { Thread32Next(snapshot.as_raw_handle(), &raw mut entry) };
    }
    end_of_snapshot()?;
    if resumed == 0 {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no thread of process {pid} to resume"),
        ));
    }
    Ok(())
}

/// A Toolhelp32 snapshot of every process, or every thread, on the machine.
fn snapshot(what: CREATE_TOOLHELP_SNAPSHOT_FLAGS) -> io::Result<OwnedHandle> {
    // SAFETY: the call takes no pointer; the process id is ignored for these two kinds.
    let raw = unsafe { CreateToolhelp32Snapshot(what, 0) };
    if raw == INVALID_HANDLE_VALUE || raw.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a valid handle the call just opened for us, and nothing else owns
    // it.
    Ok(unsafe { OwnedHandle::from_raw_handle(raw) })
}

/// Whether a walk of a snapshot stopped at its end (`ERROR_NO_MORE_FILES`), rather than
/// on an error; call right after the walk's last call failed.
fn end_of_snapshot() -> io::Result<()> {
    let error = io::Error::last_os_error();
    if error.raw_os_error() == i32::try_from(ERROR_NO_MORE_FILES).ok() {
        Ok(())
    } else {
        Err(error)
    }
}

/// `Ok` when a Win32 call returned nonzero, else the error it left.
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
