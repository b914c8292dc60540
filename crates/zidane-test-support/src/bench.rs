//! What the bench drivers print: one JSON line per run, with latency percentiles.

use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Map, Value, json};

/// `n`, `p50_us`, `p99_us`, `max_us`: nearest-rank percentiles of the samples (sorted
/// in place), in microseconds rounded to a tenth; `0.0` for each when there are none.
pub fn percentiles(samples: &mut [Duration]) -> Map<String, Value> {
    samples.sort_unstable();
    let n = samples.len();
    let at = |p: f64| {
        let rank = ((p * n as f64).ceil() as usize).clamp(1, n.max(1));
        samples
            .get(rank - 1)
            .map_or(0.0, |d| round1(d.as_secs_f64() * 1e6))
    };
    let mut fields = Map::new();
    fields.insert("n".into(), json!(n));
    fields.insert("p50_us".into(), json!(at(0.50)));
    fields.insert("p99_us".into(), json!(at(0.99)));
    fields.insert("max_us".into(), json!(at(1.0)));
    fields
}

/// Prints a driver's whole answer, one JSON object on one line of stdout: the op's
/// `fields`, `op`, `ok` (whether there is no `error`) and the `error` if any; returns
/// the exit code that goes with it.
// A driver's whole interface is that line.
#[allow(clippy::print_stdout)]
pub fn print_driver_line(op: &str, fields: Map<String, Value>, error: Option<String>) -> ExitCode {
    let ok = error.is_none();
    let mut line = fields;
    line.insert("op".into(), json!(op));
    line.insert("ok".into(), json!(ok));
    if let Some(error) = error {
        line.insert("error".into(), json!(error));
    }
    println!("{}", Value::Object(line));
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `x` rounded to one decimal place.
pub fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_picks_a_sample_and_none_gives_zeros() {
        let mut samples: Vec<_> = (1..=100).rev().map(Duration::from_micros).collect();
        let fields = percentiles(&mut samples);
        assert_eq!(fields["n"], json!(100));
        assert_eq!(fields["p50_us"], json!(50.0));
        assert_eq!(fields["p99_us"], json!(99.0));
        assert_eq!(fields["max_us"], json!(100.0));
        let empty = percentiles(&mut []);
        assert_eq!(empty["n"], json!(0));
        assert_eq!(empty["max_us"], json!(0.0));
    }
}
