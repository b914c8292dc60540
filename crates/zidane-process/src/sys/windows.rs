//! Every call into Windows that Rust cannot check: the Job object that holds every
//! process of a task (and ends them all, even when the host dies), resuming a process
//! created suspended, the console's `CTRL_BREAK`, the process table through Toolhelp32,
//! a move of a file that never replaces another, and a process's start time. This is the crate's only Windows
//! `unsafe` code; each block says why it is sound.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::io;
use std::mem::offset_of;
use std::os::windows::io::{AsRawHandle, BorrowedHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::ptr;
use std::time::Duration;

use windows_sys::Win32::Foundation::{
    ERROR_MORE_DATA, ERROR_NO_MORE_FILES, FILETIME, INVALID_HANDLE_VALUE, STILL_ACTIVE,
};
use windows_sys::Win32::Storage::FileSystem::MoveFileExW;
use windows_sys::Win32::System::Console::{
    CTRL_BREAK_EVENT, GenerateConsoleCtrlEvent, GetConsoleProcessList,
};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CREATE_TOOLHELP_SNAPSHOT_FLAGS, CreateToolhelp32Snapshot, PROCESSENTRY32W, Process32FirstW,
    Process32NextW, TH32CS_SNAPPROCESS, TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First,
    Thread32Next,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, JOBOBJECT_BASIC_PROCESS_ID_LIST,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectBasicAccountingInformation,
    JobObjectBasicProcessIdList, JobObjectExtendedLimitInformation, QueryInformationJobObject,
    SetInformationJobObject, TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{
    CREATE_NEW_PROCESS_GROUP, CREATE_NO_WINDOW, CREATE_SUSPENDED, GetExitCodeProcess, GetProcessId,
    GetProcessTimes, OpenProcess, OpenThread, PROCESS_QUERY_LIMITED_INFORMATION, ResumeThread,
    THREAD_SUSPEND_RESUME,
};
use windows_sys::core::BOOL;

/// Job-object times count in units of 100 ns.
const TICKS_PER_SECOND: u64 = 10_000_000;
/// Nanoseconds in one job-object time unit.
const NANOS_PER_TICK: u64 = 100;
/// Room for this many pids on the first ask for a job's process list; a shell and its
/// few children fit, a larger job is asked again with the count it reported.
const INITIAL_PROCESS_ID_CAPACITY: usize = 32;

/// A Job object: every process of one task.
///
/// Kill-on-close (`JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`): when the last handle to the job
/// closes — this value dropped, or the host exits, crashes or is killed, when the kernel
/// closes the handle for it — every process in the job ends. Breakaway is not allowed
/// (neither `JOB_OBJECT_LIMIT_BREAKAWAY_OK` nor `JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK`),
/// so a descendant cannot leave the job, even with `CREATE_BREAKAWAY_FROM_JOB`. The
/// handle is not inheritable: a child holding it would keep the job open after the host
/// is gone.
#[derive(Debug)]
pub(crate) struct Job {
    handle: OwnedHandle,
}

impl Job {
    /// Creates an empty kill-on-close job.
    pub(crate) fn new() -> io::Result<Job> {
        // SAFETY: a null `SECURITY_ATTRIBUTES` (default security, handle not inherited)
        // and a null name (an anonymous job) are both allowed; the call reads nothing else.
        let raw = unsafe { CreateJobObjectW(ptr::null(), ptr::null()) };
        if raw.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a valid handle `CreateJobObjectW` just opened for us, and
        // nothing else owns it.
        let handle = unsafe { OwnedHandle::from_raw_handle(raw) };
        let mut limits = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: the class names `JOBOBJECT_EXTENDED_LIMIT_INFORMATION`, `limits` is one
        // (a local) and the length given is its size; the call only reads it.
        let set = unsafe {
            SetInformationJobObject(
                handle.as_raw_handle(),
                JobObjectExtendedLimitInformation,
                (&raw const limits).cast::<c_void>(),
                size_u32::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>(),
            )
        };
        check(set)?;
        Ok(Job { handle })
    }

    /// Assigns `process` to the job; create it suspended (see [`task_creation_flags`]) and
    /// resume it afterwards, so that it starts nothing before the job holds it.
    ///
    /// The handle needs `PROCESS_SET_QUOTA` and `PROCESS_TERMINATE` (std's child handles
    /// have every right).
    pub(crate) fn assign(&self, process: BorrowedHandle<'_>) -> io::Result<()> {
        // SAFETY: both handles are open for the length of the call: the job's is owned by
        // `self`, the process's is borrowed.
        let assigned = unsafe { AssignProcessToJobObject(self.raw(), process.as_raw_handle()) };
        check(assigned)
    }

    /// Ends every process in the job with `exit_code` (`TerminateJobObject`). Returns as
    /// soon as the kernel has been asked: the processes may take a moment to be gone, so
    /// wait on the leader's handle, or for [`Job::process_ids`] to come back empty.
    pub(crate) fn terminate(&self, exit_code: u32) -> io::Result<()> {
        // SAFETY: the job's handle is open (owned by `self`); the call takes no pointer.
        check(unsafe { TerminateJobObject(self.raw(), exit_code) })
    }

    /// User plus kernel CPU time of every process that ever ran in the job, those that
    /// have ended included (`JobObjectBasicAccountingInformation`).
    pub(crate) fn cpu_time(&self) -> io::Result<Duration> {
        let mut info = JOBOBJECT_BASIC_ACCOUNTING_INFORMATION::default();
        // SAFETY: the class names `JOBOBJECT_BASIC_ACCOUNTING_INFORMATION`, `info` is one
        // (a local) and the length given is its size; the call writes at most that much.
        let queried = unsafe {
            QueryInformationJobObject(
                self.raw(),
                JobObjectBasicAccountingInformation,
                (&raw mut info).cast::<c_void>(),
                size_u32::<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION>(),
                ptr::null_mut(),
            )
        };
        check(queried)?;
        let ticks = info.TotalUserTime.saturating_add(info.TotalKernelTime);
        Ok(ticks_to_duration(u64::try_from(ticks).unwrap_or(0)))
    }

    /// The pids of the processes in the job now (`JobObjectBasicProcessIdList`), asked
    /// again with a larger buffer while they do not fit.
    pub(crate) fn process_ids(&self) -> io::Result<Vec<u32>> {
        // The list's header (two counts) in pointer-sized words: the pids follow it.
        const HEADER_WORDS: usize =
            offset_of!(JOBOBJECT_BASIC_PROCESS_ID_LIST, ProcessIdList) / size_of::<usize>();
        let mut capacity = INITIAL_PROCESS_ID_CAPACITY;
        loop {
            // Words, not bytes, so that the buffer is aligned for the structure.
            let mut buffer: Vec<usize> = vec![0; HEADER_WORDS + capacity];
            let bytes = u32::try_from(buffer.len() * size_of::<usize>())
                .map_err(|_| io::Error::other("too many processes in the job"))?;
            // SAFETY: `buffer` is `bytes` long and aligned for
            // `JOBOBJECT_BASIC_PROCESS_ID_LIST`, the structure the class names; the call
            // writes at most `bytes` bytes.
            let queried = unsafe {
                QueryInformationJobObject(
                    self.raw(),
                    JobObjectBasicProcessIdList,
                    buffer.as_mut_ptr().cast::<c_void>(),
                    bytes,
                    ptr::null_mut(),
                )
            };
            let error = (queried == 0).then(io::Error::last_os_error);
            // SAFETY: `buffer` holds at least one structure (its header and one pid),
            // aligned, and every bit pattern is a valid structure of integers.
            let header = unsafe {
                buffer
                    .as_ptr()
                    .cast::<JOBOBJECT_BASIC_PROCESS_ID_LIST>()
                    .read()
            };
            let assigned = usize::try_from(header.NumberOfAssignedProcesses).unwrap_or(usize::MAX);
            let listed = usize::try_from(header.NumberOfProcessIdsInList).unwrap_or(usize::MAX);
            let fits = match error {
                None => listed >= assigned,
                Some(error) if error.raw_os_error() == Some(win32_code(ERROR_MORE_DATA)) => false,
                Some(error) => return Err(error),
            };
            if fits {
                let ids = buffer.iter().skip(HEADER_WORDS).take(listed.min(capacity));
                return Ok(ids.filter_map(|&id| u32::try_from(id).ok()).collect());
            }
            // Processes may start between two asks: leave room for a few more.
            capacity = assigned.max(capacity).saturating_mul(2);
        }
    }

    fn raw(&self) -> RawHandle {
        self.handle.as_raw_handle()
    }
}

/// The creation flags of a task's shell:
///
/// - `CREATE_SUSPENDED`, so that it runs nothing before [`Job::assign`] holds it (then
///   [`resume_threads`]);
/// - `CREATE_NEW_PROCESS_GROUP`, so that a `CTRL_BREAK` ([`send_ctrl_break`]) reaches the
///   task's processes alone, not the host nor other tasks; it also has the task ignore
///   `CTRL_C`, so that a Ctrl+C typed at the host's console stops the host, not its
///   background tasks (as a terminal's `SIGINT` reaches its foreground group alone);
/// - `CREATE_NO_WINDOW` only when this process has no console ([`has_console`]).
///   With a console the task shares it, which is what lets a `CTRL_BREAK` reach it;
///   without one, a console program would get a new console with a visible window, so it
///   gets a console without a window instead (not `DETACHED_PROCESS`, under which every
///   console program the shell starts would open a window of its own). Such a task
///   cannot get a `CTRL_BREAK` from us: stopping it is [`Job::terminate`] alone.
pub(crate) fn task_creation_flags() -> u32 {
    let flags = CREATE_SUSPENDED | CREATE_NEW_PROCESS_GROUP;
    if has_console() {
        flags
    } else {
        flags | CREATE_NO_WINDOW
    }
}

/// Resumes every thread of the suspended process `pid`, found in a Toolhelp32 thread
/// snapshot (std keeps the main thread's handle to itself). Hold a handle to the process
/// (its std `Child`) meanwhile, so that its pid cannot name another process.
///
/// Fails with `NotFound` when no thread of `pid` is found, so that a process left
/// suspended does not go unnoticed.
pub(crate) fn resume_threads(pid: u32) -> io::Result<()> {
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
            resume_thread(entry.th32ThreadID)?;
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

/// Resumes the thread `thread_id` once: enough for the main thread of a process created
/// suspended, which was suspended once.
fn resume_thread(thread_id: u32) -> io::Result<()> {
    // SAFETY: the call takes no pointer; a null result is checked below.
    let raw = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, thread_id) };
    if raw.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a valid handle `OpenThread` just opened for us, and nothing else
    // owns it.
    let thread = unsafe { OwnedHandle::from_raw_handle(raw) };
    // SAFETY: the thread's handle is open and has `THREAD_SUSPEND_RESUME`.
    if unsafe { ResumeThread(thread.as_raw_handle()) } == u32::MAX {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sends `CTRL_BREAK` to the process group that `leader` leads — the polite stop: a
/// console program's default handler exits, one that handles it may clean up first.
///
/// `leader` must have been created with [`task_creation_flags`], which make it lead a
/// group of its own: the console sends the event for the pid of a process that leads no
/// group to every process on the console, this one included. Taking the leader's handle,
/// rather than its pid, keeps that pid from naming another process meanwhile.
///
/// Fails when the event cannot be sent, e.g. when this process has no console to share
/// with the task ([`has_console`]); success means the console took the event, not that
/// the task ended: escalate to [`Job::terminate`] after a grace period.
pub(crate) fn send_ctrl_break(leader: BorrowedHandle<'_>) -> io::Result<()> {
    // SAFETY: the handle is open for the length of the call (borrowed); the call takes
    // no pointer.
    let group = unsafe { GetProcessId(leader.as_raw_handle()) };
    if group == 0 {
        // Group 0 would be every process on our console.
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the call takes only integers.
    check(unsafe { GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, group) })
}

/// Whether this process is attached to a console, so that a task it starts can share it
/// and be sent a `CTRL_BREAK`. Asks the console for its process list, which fails without
/// one (a console without a window, which `GetConsoleWindow` does not see, counts).
pub(crate) fn has_console() -> bool {
    let mut pids = [0_u32; 1];
    // SAFETY: `pids` is a local array of the one entry the call is told of; the call
    // writes at most that one and returns the number of attached processes, 0 on failure.
    let attached = unsafe { GetConsoleProcessList(pids.as_mut_ptr(), 1) };
    attached != 0
}

/// One process as the process table describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProcessEntry {
    /// Its pid.
    pub(crate) pid: u32,
    /// The pid of the process that started it (which may have ended, its pid reused).
    pub(crate) parent_pid: u32,
    /// The file name of its executable, e.g. `ping.exe`.
    pub(crate) exe: String,
}

/// Every process a Toolhelp32 process snapshot finds.
pub(crate) fn processes() -> io::Result<Vec<ProcessEntry>> {
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
            parent_pid: entry.th32ParentProcessID,
            exe: String::from_utf16_lossy(&name[..len]),
        });
        // SAFETY: as for `Process32FirstW`.
        more = unsafe { Process32NextW(snapshot.as_raw_handle(), &raw mut entry) };
    }
    end_of_snapshot()?;
    Ok(found)
}

/// The processes among `pids` that a process snapshot finds, in the order of `pids`
/// (those that have ended are left out), for a stall diagnosis.
pub(crate) fn describe_processes(pids: &[u32]) -> io::Result<Vec<ProcessEntry>> {
    let mut found: Vec<ProcessEntry> = processes()?
        .into_iter()
        .filter(|process| pids.contains(&process.pid))
        .collect();
    found.sort_by_key(|process| pids.iter().position(|&pid| pid == process.pid));
    Ok(found)
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
    if error.raw_os_error() == Some(win32_code(ERROR_NO_MORE_FILES)) {
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

/// A Win32 error code as `io::Error::raw_os_error` shows it.
fn win32_code(code: u32) -> i32 {
    i32::try_from(code).unwrap_or(i32::MAX)
}

/// The size of `T` as the `u32` a Win32 call takes (checked when compiled: a size
/// rounded down would let the call write past the structure).
#[allow(clippy::cast_possible_truncation)]
const fn size_u32<T>() -> u32 {
    const { assert!(size_of::<T>() <= u32::MAX as usize) };
    size_of::<T>() as u32
}

/// A job-object time (100 ns units) as a `Duration`.
fn ticks_to_duration(ticks: u64) -> Duration {
    Duration::from_secs(ticks / TICKS_PER_SECOND)
        + Duration::from_nanos((ticks % TICKS_PER_SECOND) * NANOS_PER_TICK)
}

/// Moves `from` to `to` unless a file is there (`AlreadyExists` then): `MoveFileExW`
/// without `MOVEFILE_REPLACE_EXISTING`. An open file moves too when it was opened to
/// allow it (std opens with `FILE_SHARE_DELETE`), and its handles keep writing into it.
pub(crate) fn move_file_no_replace(from: &std::path::Path, to: &std::path::Path) -> io::Result<()> {
    use std::os::windows::ffi::OsStrExt;
    let wide = |path: &std::path::Path| -> Vec<u16> {
        path.as_os_str()
            .encode_wide()
            .chain(std::iter::once(0))
            .collect()
    };
    let (from, to) = (wide(from), wide(to));
    // SAFETY: both are NUL-terminated UTF-16 strings that live across the call, and
    // flags 0 asks for a plain move on one volume.
    let moved = unsafe { MoveFileExW(from.as_ptr(), to.as_ptr(), 0) };
    if moved == 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// When process `pid` started (its creation time, in 100 ns units since 1601), while it
/// runs; `None` once it has exited or cannot be opened.
pub(crate) fn process_start_time(pid: u32) -> Option<u64> {
    // SAFETY: OpenProcess takes no pointers; a null return is a failure, and a handle it
    // returns is owned here and closed on drop.
    let raw = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if raw.is_null() {
        return None;
    }
    // SAFETY: `raw` is a process handle just opened and owned by nothing else.
    let process = unsafe { OwnedHandle::from_raw_handle(raw) };
    let mut code = 0_u32;
    // SAFETY: the handle is open with query rights; `code` is a local the call writes.
    let read = unsafe { GetExitCodeProcess(process.as_raw_handle(), &raw mut code) };
    // STILL_ACTIVE: an exited process keeps its handle (and its pid) while one is open.
    if read == 0 || code != STILL_ACTIVE.cast_unsigned() {
        return None;
    }
    let mut times = [FILETIME::default(); 4];
    let [created, exited, kernel, user] = &mut times;
    // SAFETY: the handle is open with query rights; the four FILETIMEs are locals the
    // call writes.
    let read = unsafe {
        GetProcessTimes(
            process.as_raw_handle(),
            &raw mut *created,
            &raw mut *exited,
            &raw mut *kernel,
            &raw mut *user,
        )
    };
    (read != 0)
        .then(|| (u64::from(created.dwHighDateTime) << 32) | u64::from(created.dwLowDateTime))
}
