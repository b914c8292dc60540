//! Reading a task's log as it grows: from a point on, its last lines, where it ended.
//! `zidane logs` prints it, `zidane attach` copies a terminal task's output from it,
//! `zidane top` follows the selected task's.

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::Path;

/// Prints the log at `path` (its last `lines`, or all of it); the open log and where
/// the printing stopped, to follow it from there.
pub(crate) fn print_log(
    path: &Path,
    lines: Option<usize>,
    out: &mut impl std::io::Write,
) -> std::io::Result<(std::fs::File, u64)> {
    let mut file = std::fs::File::open(path)?;
    let start = match lines {
        Some(n) => tail_offset(&mut file, n)?,
        None => 0,
    };
    let offset = copy_from(&mut file, start, out)?;
    Ok((file, offset))
}

/// Copies what the log holds past `offset`; the new offset.
pub(crate) fn copy_from(
    file: &mut std::fs::File,
    offset: u64,
    out: &mut impl std::io::Write,
) -> std::io::Result<u64> {
    file.seek(SeekFrom::Start(offset))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    out.write_all(&bytes)?;
    out.flush()?;
    Ok(offset + bytes.len() as u64)
}

/// Where the last `n` lines of the file start.
pub(crate) fn tail_offset(file: &mut std::fs::File, n: usize) -> std::io::Result<u64> {
    file.seek(SeekFrom::Start(0))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
    let start = body
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, byte)| **byte == b'\n')
        .nth(n.saturating_sub(1))
        .map_or(0, |(at, _)| at + 1);
    Ok(if n == 0 { bytes.len() } else { start } as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_starts_at_the_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, "a\nb\nc\n").unwrap();
        let mut file = std::fs::File::open(&path).unwrap();
        assert_eq!(tail_offset(&mut file, 2).unwrap(), 2);
        assert_eq!(tail_offset(&mut file, 5).unwrap(), 0);
        assert_eq!(tail_offset(&mut file, 0).unwrap(), 6);
    }
}
