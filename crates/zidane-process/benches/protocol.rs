//! What every driver op returns: the protocol's fields, or a failed check with the
//! fields measured so far (`shared/bench-protocol.md`).

use std::path::PathBuf;

use serde_json::{Map, Value, json};

/// An op's JSON fields, besides `op` and `ok`.
pub type Fields = Map<String, Value>;

/// A failed check: the fields measured so far and what went wrong.
pub struct Failure {
    /// What was measured before the check failed.
    pub fields: Fields,
    /// What went wrong.
    pub error: String,
}

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(error: E) -> Self {
        Self {
            fields: Fields::new(),
            error: error.to_string(),
        }
    }
}

/// A failure with the fields measured so far.
pub fn fail(fields: Fields, error: impl Into<String>) -> Failure {
    Failure {
        fields,
        error: error.into(),
    }
}

/// `x` rounded to three decimal places.
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Checks that `log` holds every line of the `interleave` op's loop (`out<i>`, then
/// `err<i>`, for each `i` below `lines`), stdout's and stderr's in the order written (a line's trailing spaces and `\r` aside); the protocol's fields
/// and the error, if any.
pub fn check_interleave(log: &[u8], lines: u64, seconds: f64) -> (Fields, Option<String>) {
    let log = String::from_utf8_lossy(log);
    let expected = 2 * lines;
    let (mut seen, mut displaced, mut runs) = (0_u64, 0_u64, 0_u64);
    let mut first_bad = None;
    let mut previous = None;
    for line in log.lines() {
        let line = line.trim_end();
        let stream = line.chars().next();
        if stream != previous {
            runs += 1;
        }
        previous = stream;
        let want = (seen < expected).then(|| {
            let kind = if seen % 2 == 0 { "out" } else { "err" };
            format!("{kind}{}", seen / 2)
        });
        if want.as_deref() != Some(line) {
            displaced += 1;
            first_bad.get_or_insert(seen + 1);
        }
        seen += 1;
    }
    if seen < expected {
        displaced += expected - seen;
        first_bad.get_or_insert(seen + 1);
    }
    let mut fields = Fields::new();
    fields.insert("lines".into(), json!(lines));
    fields.insert("seconds".into(), json!(round3(seconds)));
    fields.insert("complete".into(), json!(seen == expected && displaced == 0));
    fields.insert("order_held".into(), json!(displaced == 0));
    fields.insert("displaced".into(), json!(displaced));
    fields.insert("runs".into(), json!(runs));
    let error = first_bad.map(|first| {
        format!("{displaced} of {expected} lines missing or out of place (first at line {first})")
    });
    (fields, error)
}

/// `$BENCH_DIR` (created if missing) or a fresh temporary directory named `prefix…`,
/// kept alive by the second value.
pub fn bench_dir(prefix: &str) -> Result<(PathBuf, Option<tempfile::TempDir>), Failure> {
    match std::env::var_os("BENCH_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            std::fs::create_dir_all(&dir)?;
            Ok((dir, None))
        }
        None => {
            let temp = tempfile::Builder::new().prefix(prefix).tempdir()?;
            Ok((temp.path().to_owned(), Some(temp)))
        }
    }
}
