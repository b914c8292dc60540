//! Windows: a named pipe whose access list grants this user alone, processes started
//! out of the host's console and job, a monitor ended by `TerminateProcess` when its
//! pipe cannot be reached. This is the crate's only Windows `unsafe` code; each block
//! says why it is sound.
#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::path::Path;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::windows::named_pipe::{
    ClientOptions, NamedPipeClient, NamedPipeServer, ServerOptions,
};
use windows_sys::Win32::Foundation::{
    ERROR_ACCESS_DENIED, ERROR_PIPE_BUSY, HANDLE, HLOCAL, LocalFree,
};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
};
use windows_sys::Win32::Security::{
    GetTokenInformation, PSECURITY_DESCRIPTOR, SECURITY_ATTRIBUTES, TOKEN_QUERY, TOKEN_USER,
    TokenUser,
};
use windows_sys::Win32::System::Threading::{
    CREATE_BREAKAWAY_FROM_JOB, CREATE_NEW_PROCESS_GROUP, DETACHED_PROCESS, GetCurrentProcess,
    OpenProcess, OpenProcessToken, PROCESS_TERMINATE, TerminateProcess,
};
use zidane_process::ProcessStamp;

/// Whether this platform runs a supervisor.
pub(crate) const SUPPORTED: bool = true;

/// How long a client tries a pipe whose every instance is busy.
const BUSY_WAIT: Duration = Duration::from_secs(5);

/// Creates (or truncates) `path`; the user's profile keeps it private.
pub(crate) fn create_private(path: &Path) -> io::Result<File> {
    File::create(path)
}

/// Nothing to do in the process itself: it was started out of the host's console,
/// process group and job ([`detach_std`], [`detach_tokio`]).
pub(crate) fn leave_host_session() -> io::Result<()> {
    Ok(())
}

/// The creation flags of a process that must outlive its starter: no console of the
/// starter's, a process group of its own, and out of the starter's job (an MCP host may
/// run its servers in a kill-on-close job).
const DETACHED: u32 = DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP | CREATE_BREAKAWAY_FROM_JOB;

/// Whether a start failed because the starter's job forbids leaving it: then it is
/// started again inside the job, which is all such a job allows.
fn breakaway_refused(error: &io::Error) -> bool {
    error.raw_os_error() == Some(ERROR_ACCESS_DENIED.cast_signed())
}

/// Spawns `command` out of this process's console, group and job (in the job, where
/// the job forbids leaving it).
pub(crate) fn spawn_detached_std(
    command: &mut std::process::Command,
) -> io::Result<std::process::Child> {
    use std::os::windows::process::CommandExt as _;
    match command.creation_flags(DETACHED).spawn() {
        Err(error) if breakaway_refused(&error) => command
            .creation_flags(DETACHED & !CREATE_BREAKAWAY_FROM_JOB)
            .spawn(),
        spawned => spawned,
    }
}

/// [`spawn_detached_std`] for tokio's `Command`.
pub(crate) fn spawn_detached_tokio(
    command: &mut tokio::process::Command,
) -> io::Result<tokio::process::Child> {
    match command.creation_flags(DETACHED).spawn() {
        Err(error) if breakaway_refused(&error) => command
            .creation_flags(DETACHED & !CREATE_BREAKAWAY_FROM_JOB)
            .spawn(),
        spawned => spawned,
    }
}

/// No systemd on Windows.
pub(crate) fn user_manager() -> Option<std::path::PathBuf> {
    None
}

/// The pipe a socket path stands for: `\\.\pipe\zidane-<its file stem>` (the stem
/// carries the hash of the supervisor's state directory, and a monitor's task number).
fn pipe_name(socket: &Path) -> String {
    let stem = socket
        .file_stem()
        .map_or_else(|| "supervisor".into(), |stem| stem.to_string_lossy());
    format!(r"\\.\pipe\zidane-{stem}")
}

/// A connection to or from the supervisor, or a monitor.
pub(crate) enum Stream {
    /// Accepted by a listener.
    Server(NamedPipeServer),
    /// Opened by a client.
    Client(NamedPipeClient),
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Server(pipe) => Pin::new(pipe).poll_read(cx, buf),
            Self::Client(pipe) => Pin::new(pipe).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Self::Server(pipe) => Pin::new(pipe).poll_write(cx, buf),
            Self::Client(pipe) => Pin::new(pipe).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Server(pipe) => Pin::new(pipe).poll_flush(cx),
            Self::Client(pipe) => Pin::new(pipe).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Server(pipe) => Pin::new(pipe).poll_shutdown(cx),
            Self::Client(pipe) => Pin::new(pipe).poll_shutdown(cx),
        }
    }
}

/// A security descriptor granting this process's user, and no one else, every right
/// (`D:P(A;;GA;;;<user SID>)`: protected, so nothing is inherited).
struct OwnerOnly {
    descriptor: PSECURITY_DESCRIPTOR,
}

// SAFETY: the descriptor is memory LocalAlloc'd for this value alone, read-only once
// made, and freed only on drop.
unsafe impl Send for OwnerOnly {}
// SAFETY: as above; nothing writes it after it is made.
unsafe impl Sync for OwnerOnly {}

impl OwnerOnly {
    fn new() -> io::Result<Self> {
        let sid = current_user_sid()?;
        let sddl: Vec<u16> = format!("D:P(A;;GA;;;{sid})")
            .encode_utf16()
            .chain(Some(0))
            .collect();
        let mut descriptor: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
        // SAFETY: `sddl` is a NUL-terminated UTF-16 string that outlives the call; the
        // call writes the new descriptor's address into the local `descriptor`, and the
        // size pointer may be null.
        let made = unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                sddl.as_ptr(),
                SDDL_REVISION_1,
                &raw mut descriptor,
                std::ptr::null_mut(),
            )
        };
        if made == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self { descriptor })
    }

    /// Attributes pointing at the descriptor, for as long as `self` lives.
    fn attributes(&self) -> SECURITY_ATTRIBUTES {
        SECURITY_ATTRIBUTES {
            nLength: u32::try_from(std::mem::size_of::<SECURITY_ATTRIBUTES>()).unwrap_or(0),
            lpSecurityDescriptor: self.descriptor,
            bInheritHandle: 0,
        }
    }
}

impl Drop for OwnerOnly {
    fn drop(&mut self) {
        // SAFETY: the descriptor was LocalAlloc'd by the conversion and is freed once.
        unsafe { LocalFree(self.descriptor as HLOCAL) };
    }
}

/// This process's user, as a string SID (`S-1-5-21-…`).
fn current_user_sid() -> io::Result<String> {
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: the pseudo handle of this process needs no closing; `token` is a local
    // the call writes.
    if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &raw mut token) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `token` was just opened and is owned here alone.
    let token = unsafe {
        <std::os::windows::io::OwnedHandle as std::os::windows::io::FromRawHandle>::from_raw_handle(
            token,
        )
    };
    let raw_token = std::os::windows::io::AsRawHandle::as_raw_handle(&token);
    let mut buffer = vec![0_u64; 64];
    let mut needed = 0_u32;
    let size = u32::try_from(buffer.len() * 8).unwrap_or(u32::MAX);
    // SAFETY: the buffer is a local of `size` bytes, aligned for TOKEN_USER (u64
    // elements); the call writes at most that many and the size it needed.
    let read = unsafe {
        GetTokenInformation(
            raw_token,
            TokenUser,
            buffer.as_mut_ptr().cast(),
            size,
            &raw mut needed,
        )
    };
    if read == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the call succeeded, so the buffer starts with a TOKEN_USER whose SID
    // pointer points into the same buffer, alive for this function.
    let user = unsafe { &*buffer.as_ptr().cast::<TOKEN_USER>() };
    let mut text: *mut u16 = std::ptr::null_mut();
    // SAFETY: the SID is valid (see above); the call allocates the string and writes
    // its address into the local `text`.
    if unsafe { ConvertSidToStringSidW(user.User.Sid, &raw mut text) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `text` is a NUL-terminated UTF-16 string the call allocated; it is read
    // up to its NUL, then freed once.
    let sid = unsafe {
        let len = (0..).take_while(|&at| *text.add(at) != 0).count();
        let sid = String::from_utf16_lossy(std::slice::from_raw_parts(text, len));
        LocalFree(text as HLOCAL);
        sid
    };
    Ok(sid)
}

/// The listener: a named pipe only this user may open, refusing remote clients; one
/// instance waits for the next client while the last one is answered.
pub(crate) struct Listener {
    name: String,
    security: OwnerOnly,
    next: tokio::sync::Mutex<NamedPipeServer>,
}

impl Listener {
    /// Creates the pipe `socket` stands for; `AddrInUse` when another process has it.
    pub(crate) async fn bind(socket: &Path) -> io::Result<Self> {
        let name = pipe_name(socket);
        let security = OwnerOnly::new()?;
        let first = create(&name, &security, true).map_err(|error| {
            if error.raw_os_error() == Some(ERROR_ACCESS_DENIED.cast_signed()) {
                io::Error::new(
                    io::ErrorKind::AddrInUse,
                    format!("another process listens on {name}"),
                )
            } else {
                error
            }
        })?;
        Ok(Self {
            name,
            security,
            next: tokio::sync::Mutex::new(first),
        })
    }

    /// The next connection (the pipe's access list admits this user alone).
    pub(crate) async fn accept(&self) -> io::Result<Stream> {
        let mut next = self.next.lock().await;
        next.connect().await?;
        let fresh = create(&self.name, &self.security, false)?;
        Ok(Stream::Server(std::mem::replace(&mut *next, fresh)))
    }
}

/// One instance of the pipe `name`, with `security`'s access list.
fn create(name: &str, security: &OwnerOnly, first: bool) -> io::Result<NamedPipeServer> {
    let mut attributes = security.attributes();
    let mut options = ServerOptions::new();
    options
        .first_pipe_instance(first)
        .reject_remote_clients(true);
    // SAFETY: `attributes` is a valid SECURITY_ATTRIBUTES whose descriptor `security`
    // keeps alive past the call, which only reads it.
    unsafe { options.create_with_security_attributes_raw(name, (&raw mut attributes).cast()) }
}

/// Connects to the pipe `socket` stands for, waiting while every instance is busy.
pub(crate) async fn connect(socket: &Path) -> io::Result<Stream> {
    let name = pipe_name(socket);
    let deadline = tokio::time::Instant::now() + BUSY_WAIT;
    loop {
        match ClientOptions::new().open(&name) {
            Ok(client) => return Ok(Stream::Client(client)),
            Err(error)
                if error.raw_os_error() == Some(ERROR_PIPE_BUSY.cast_signed())
                    && tokio::time::Instant::now() < deadline =>
            {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            Err(error) => return Err(error),
        }
    }
}

/// Ends a monitor whose pipe cannot be reached (`TerminateProcess`), only if it is
/// still the process stamped; its task's job, kill-on-close, ends with it. False when
/// it no longer runs.
pub(crate) fn terminate(monitor: &ProcessStamp) -> bool {
    if !monitor.runs() {
        return false;
    }
    // SAFETY: OpenProcess takes no pointers; a null return is a failure.
    let process = unsafe { OpenProcess(PROCESS_TERMINATE, 0, monitor.pid) };
    if process.is_null() {
        return false;
    }
    // SAFETY: `process` was just opened with terminate rights and is owned here alone.
    let process = unsafe {
        <std::os::windows::io::OwnedHandle as std::os::windows::io::FromRawHandle>::from_raw_handle(
            process,
        )
    };
    // SAFETY: the handle is open with terminate rights.
    unsafe {
        TerminateProcess(
            std::os::windows::io::AsRawHandle::as_raw_handle(&process),
            1,
        ) != 0
    }
}

/// Windows sends a monitor no signal: its kills come through its pipe.
pub(crate) struct TerminateSignal;

impl TerminateSignal {
    /// Listens for nothing.
    pub(crate) fn new() -> io::Result<Self> {
        Ok(Self)
    }

    /// Never.
    pub(crate) async fn recv(&mut self) {
        std::future::pending::<()>().await;
    }
}

/// Ending a running host's task from outside is not offered on Windows: its processes
/// are in its host's job, which only the host holds.
pub(crate) async fn end_group(_leader: &ProcessStamp, _grace: Duration) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "a running host's task is ended by its host on Windows (its job is the host's)",
    ))
}
