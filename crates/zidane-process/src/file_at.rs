//! Reads at an offset, the one file operation whose call differs between platforms:
//! `pread` on Unix, a read at an explicit offset on Windows. Neither depends on, nor
//! (on Unix) moves, the file's cursor; on Windows the cursor moves, which no caller
//! relies on: logs are written by appending and read through handles of their own.

use std::fs::File;
use std::io;

/// Reads up to `buf.len()` bytes at `offset`; `Ok(0)` at end of file.
pub(crate) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        std::os::windows::fs::FileExt::seek_read(file, buf, offset)
    }
}

/// Fills `buf` from `offset`, or fails with `UnexpectedEof`.
pub(crate) fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match read_at(file, buf, offset) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}
