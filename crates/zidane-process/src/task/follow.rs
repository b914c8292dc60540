//! `follow_output`: the bytes of a task's log past an offset. When there are none yet,
//! it waits for the supervisor's word that output moved or the task ended — never a
//! poll of the file.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use zidane_context::{ContextError, OutputChunk, Result};

use crate::file_at;
use crate::task::Task;

/// Follows `task`'s log from `offset` (see `ExecutionContext::follow_output`).
pub(crate) async fn follow(task: Arc<Task>, offset: u64, max: usize) -> Result<OutputChunk> {
    let mut moved = task.output_moved.subscribe();
    let mut done = task.subscribe();
    let path = task.output_path();
    drop(task);
    loop {
        // Marked seen before the read: output that lands after it wakes the wait below.
        moved.borrow_and_update();
        let ended = done.borrow_and_update().is_some();
        let chunk = read_from(path.clone(), offset, max).await?;
        if !chunk.bytes.is_empty() || chunk.offset != offset || ended {
            return Ok(OutputChunk { ended, ..chunk });
        }
        let open = tokio::select! {
            changed = moved.changed() => changed.is_ok(),
            changed = done.changed() => changed.is_ok(),
        };
        if !open {
            // The task left the context (its handle was destroyed): nothing more comes.
            let chunk = read_from(path, offset, max).await?;
            return Ok(OutputChunk {
                ended: true,
                ..chunk
            });
        }
    }
}

async fn read_from(path: PathBuf, offset: u64, max: usize) -> Result<OutputChunk> {
    let read = {
        let path = path.clone();
        tokio::task::spawn_blocking(move || read_at(&path, offset, max))
    };
    match read.await {
        Ok(result) => result.map_err(|source| ContextError::io(path, source)),
        Err(join) => Err(ContextError::io(path, io::Error::other(join))),
    }
}

/// Up to `max` bytes from `offset`; an offset past the end is clamped to the end.
fn read_at(path: &Path, offset: u64, max: usize) -> io::Result<OutputChunk> {
    let file = File::open(path)?;
    let len = file.metadata()?.len();
    if offset >= len {
        return Ok(OutputChunk {
            offset: offset.min(len),
            ..OutputChunk::default()
        });
    }
    let want = usize::try_from(len - offset).unwrap_or(usize::MAX).min(max);
    let mut bytes = vec![0; want];
    let mut filled = 0;
    while filled < want {
        match file_at::read_at(&file, &mut bytes[filled..], offset + filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    bytes.truncate(filled);
    Ok(OutputChunk {
        offset,
        bytes,
        ended: false,
    })
}
