//! Everything a task wrote is in its log by the time `on_exit` fires.

use proptest::prelude::*;
use zidane_context::ExecutionContext;

use crate::support::*;

/// Deterministic pseudo-random bytes (all 256 values occur).
fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_kilobytes_then_exit_is_whole_when_on_exit_fires() {
    let f = Fixture::new().await;
    let source = noise(10 * 1024, 7);
    std::fs::write(f.path("source"), &source).unwrap();
    let exits = Exits::snapshotting_logs();
    f.start("cat source; exit 3", &exits).await;
    exits.wait_for(1).await;
    let (exit, log) = exits.with_logs().remove(0);
    assert_eq!(exit.exit_code, 3);
    assert_eq!(
        log.unwrap(),
        source,
        "the log was incomplete inside on_exit"
    );
}

/// Writes `chunks` of `source` in order, each by its own process, to stdout or stderr.
fn chunked_command(chunks: &[(usize, bool)], code: i32) -> String {
    let mut offset = 0;
    let mut parts = Vec::new();
    for (size, to_stderr) in chunks {
        let redirect = if *to_stderr { " >&2" } else { "" };
        parts.push(format!(
            "tail -c +{} source | head -c {size}{redirect}",
            offset + 1
        ));
        offset += size;
    }
    parts.push(format!("exit {code}"));
    parts.join("; ")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn output_is_whole_at_on_exit_whatever_the_sizes_and_chunking(
        chunks in prop::collection::vec((0usize..40_000, any::<bool>()), 1..6),
        code in 0i32..4,
        seed in any::<u64>(),
    ) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let f = Fixture::new().await;
            let total: usize = chunks.iter().map(|(size, _)| size).sum();
            let source = noise(total, seed);
            std::fs::write(f.path("source"), &source).unwrap();
            let exits = Exits::snapshotting_logs();
            let started = f.start(&chunked_command(&chunks, code), &exits).await;
            exits.wait_for(1).await;
            let (exit, log) = exits.with_logs().remove(0);
            prop_assert_eq!(exit.exit_code, code);
            prop_assert!(log.unwrap() == source, "log differs inside on_exit");
            let entry = &f.context.list_background(f.handle).await.unwrap()[0];
            prop_assert_eq!(entry.task_id, started.task_id);
            prop_assert_eq!(entry.bytes_written, total as u64);
            Ok(())
        })?;
    }
}
