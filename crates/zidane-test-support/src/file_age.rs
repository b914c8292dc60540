//! Files made old: what an age-based cleanup is tested against.

use std::path::Path;
use std::time::{Duration, SystemTime};

/// Sets the modification time of every file under `dir` (walked whole, links not
/// followed) to `age` ago.
///
/// # Panics
///
/// When `dir` or a file under it cannot be read or touched: a test's own files.
pub fn age_files(dir: &Path, age: Duration) {
    let when = SystemTime::now() - age;
    let mut pending = vec![dir.to_owned()];
    while let Some(current) = pending.pop() {
        let entries = std::fs::read_dir(&current)
            .unwrap_or_else(|error| panic!("cannot read {}: {error}", current.display()));
        for entry in entries {
            let entry =
                entry.unwrap_or_else(|error| panic!("cannot read {}: {error}", current.display()));
            let path = entry.path();
            let file_type = entry
                .file_type()
                .unwrap_or_else(|error| panic!("cannot stat {}: {error}", path.display()));
            if file_type.is_dir() {
                pending.push(path);
            } else if file_type.is_file() {
                std::fs::File::options()
                    .write(true)
                    .open(&path)
                    .and_then(|file| file.set_modified(when))
                    .unwrap_or_else(|error| panic!("cannot age {}: {error}", path.display()));
            }
        }
    }
}
