//! macOS's process table through `libproc` and `sysctl`: the pids, one process's BSD
//! info, and the arguments and environment it was exec'd with (`KERN_PROCARGS2`).

use std::ffi::{c_int, c_void};
use std::io;

/// Every pid on the machine (`proc_listallpids`).
pub(crate) fn list_all_pids() -> io::Result<Vec<libc::pid_t>> {
    // Asked twice at most: processes may start between sizing and listing, so the
    // buffer has room to spare.
    let mut capacity = 1024_usize;
    loop {
        let mut pids: Vec<libc::pid_t> = vec![0; capacity];
        let bytes = c_int::try_from(capacity * size_of::<libc::pid_t>())
            .map_err(|_| io::Error::other("too many processes"))?;
        // SAFETY: `proc_listallpids` writes at most `bytes` bytes into `pids`, which
        // holds that many.
        let count = unsafe { libc::proc_listallpids(pids.as_mut_ptr().cast::<c_void>(), bytes) };
        let Ok(count) = usize::try_from(count) else {
            return Err(io::Error::last_os_error());
        };
        if count < capacity {
            pids.truncate(count);
            return Ok(pids);
        }
        capacity *= 4;
    }
}

/// What the kernel says of `pid` (`proc_pidinfo(PROC_PIDTBSDINFO)`): parent, group,
/// owner, state, start time.
pub(crate) fn bsd_info(pid: libc::pid_t) -> io::Result<libc::proc_bsdinfo> {
    // SAFETY: a zeroed `proc_bsdinfo` (plain integers and byte arrays) is valid.
    let mut info: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
    let size = c_int::try_from(size_of::<libc::proc_bsdinfo>()).unwrap_or(c_int::MAX);
    // SAFETY: `proc_pidinfo` writes at most `size` bytes into `info`, its own size.
    let written = unsafe {
        libc::proc_pidinfo(
            pid,
            libc::PROC_PIDTBSDINFO,
            0,
            (&raw mut info).cast::<c_void>(),
            size,
        )
    };
    if written == size {
        Ok(info)
    } else if written <= 0 {
        Err(io::Error::last_os_error())
    } else {
        Err(io::Error::other("short proc_pidinfo answer"))
    }
}

/// The raw `KERN_PROCARGS2` block of `pid`: `argc`, the executable's path, then the
/// arguments and the environment, NUL-separated. Another user's process is refused.
pub(crate) fn proc_args(pid: libc::pid_t) -> io::Result<Vec<u8>> {
    let mut len = arg_max()?;
    let mut buffer = vec![0_u8; len];
    let mut mib = [libc::CTL_KERN, libc::KERN_PROCARGS2, pid];
    // SAFETY: `sysctl` writes at most `len` bytes into `buffer`, which holds that many,
    // and sets `len` to what it wrote.
    let status = unsafe {
        libc::sysctl(
            mib.as_mut_ptr(),
            3,
            buffer.as_mut_ptr().cast::<c_void>(),
            &raw mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if status != 0 {
        return Err(io::Error::last_os_error());
    }
    buffer.truncate(len);
    Ok(buffer)
}

/// The most bytes of arguments and environment a process can have (`KERN_ARGMAX`).
fn arg_max() -> io::Result<usize> {
    let mut value: c_int = 0;
    let mut len = size_of::<c_int>();
    let mut mib = [libc::CTL_KERN, libc::KERN_ARGMAX];
    // SAFETY: `sysctl` writes one `c_int` into `value` and its size into `len`.
    let status = unsafe {
        libc::sysctl(
            mib.as_mut_ptr(),
            2,
            (&raw mut value).cast::<c_void>(),
            &raw mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if status != 0 {
        return Err(io::Error::last_os_error());
    }
    usize::try_from(value).map_err(|_| io::Error::other("negative KERN_ARGMAX"))
}

/// The CPU time `pid` used, user and system, and that of its children it reaped, in
/// nanoseconds (`proc_pid_rusage(RUSAGE_INFO_V2)`, converted from Mach time).
pub(crate) fn cpu_nanos(pid: libc::pid_t) -> io::Result<u64> {
    // SAFETY: a zeroed `rusage_info_v2` (plain integers) is valid.
    let mut info: libc::rusage_info_v2 = unsafe { std::mem::zeroed() };
    // SAFETY: with `RUSAGE_INFO_V2` the kernel writes one `rusage_info_v2` into `info`.
    let status = unsafe {
        libc::proc_pid_rusage(
            pid,
            libc::RUSAGE_INFO_V2,
            (&raw mut info).cast::<libc::rusage_info_t>(),
        )
    };
    if status != 0 {
        return Err(io::Error::last_os_error());
    }
    let ticks = info
        .ri_user_time
        .saturating_add(info.ri_system_time)
        .saturating_add(info.ri_child_user_time)
        .saturating_add(info.ri_child_system_time);
    Ok(mach_to_nanos(ticks))
}

/// Mach absolute time to nanoseconds (`mach_timebase_info`).
#[allow(deprecated)]
fn mach_to_nanos(ticks: u64) -> u64 {
    let mut timebase = libc::mach_timebase_info { numer: 0, denom: 0 };
    // SAFETY: `mach_timebase_info` writes only `timebase`.
    let status = unsafe { libc::mach_timebase_info(&raw mut timebase) };
    if status != 0 || timebase.denom == 0 {
        return ticks;
    }
    let nanos = u128::from(ticks) * u128::from(timebase.numer) / u128::from(timebase.denom);
    u64::try_from(nanos).unwrap_or(u64::MAX)
}
