//! Results within the host's budget: hosts keep only so much of a result (Codex about
//! 10 KiB, start and end; Claude Code a file path and a preview past its own cap), so a
//! result is fitted before it is sent, keeping the end of a long answer (a failing build
//! prints its error last) and saying where the rest is.

use serde_json::{Map, Value};

/// The default budget of one result's text, blocks included.
pub const MCP_DEFAULT_RESULT_BUDGET: usize = 8 * 1024;

/// The least budget `zidane mcp` takes: room for a block and a note.
pub const MCP_MIN_RESULT_BUDGET: usize = 1024;

/// `text`, fitted into `room` bytes by keeping its end from a line start, behind a note
/// saying how much was cut and where the whole is. Unchanged when it fits.
pub(crate) fn keep_end(text: &str, room: usize, data: &Map<String, Value>) -> String {
    if text.len() <= room {
        return text.to_owned();
    }
    let note = |cut: usize, lines: usize| {
        let whole = match data
            .get("output_path")
            .or_else(|| data.get("path"))
            .and_then(Value::as_str)
        {
            Some(path) => format!("the whole of it is in {path}; read it with read_file"),
            None => "for all of a long output, run the command with run_in_background and read \
                     its log with read_file"
                .to_owned(),
        };
        format!(
            "[{cut} bytes ({lines} {}) cut from the start of this result to fit the host's \
             budget; {whole}]\n",
            if lines == 1 { "line" } else { "lines" }
        )
    };
    // The note's length depends on the numbers in it; size it for the largest.
    let reserve = note(text.len(), text.len()).len();
    let keep = room.saturating_sub(reserve);
    let mut start = text.len() - keep.min(text.len());
    while !text.is_char_boundary(start) {
        start += 1;
    }
    // From the start of a line, unless the last line alone is longer than the room.
    if let Some(newline) = text[start..].find('\n')
        && start > 0
        && text.as_bytes()[start - 1] != b'\n'
        && newline + 1 < text.len() - start
    {
        start += newline + 1;
    }
    let cut = &text[..start];
    format!("{}{}", note(cut.len(), cut.lines().count()), &text[start..])
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn no_data() -> Map<String, Value> {
        Map::new()
    }

    #[test]
    fn a_text_that_fits_is_left_alone() {
        assert_eq!(keep_end("a\nb", 3, &no_data()), "a\nb");
    }

    #[test]
    fn the_end_is_kept_from_a_line_start_and_the_log_named() {
        let text: String = (1..=1000).map(|i| format!("line {i}\n")).collect();
        let data = json!({ "output_path": "/t/bash_1.log" });
        let fitted = keep_end(&text, 400, data.as_object().unwrap());
        assert!(fitted.len() <= 400, "{}", fitted.len());
        assert!(fitted.ends_with("line 1000\n"), "{fitted}");
        let (note, kept) = fitted.split_once('\n').unwrap();
        assert!(kept.starts_with("line "), "{kept}");
        assert!(
            note.ends_with("the whole of it is in /t/bash_1.log; read it with read_file]"),
            "{note}"
        );
        let cut: usize = note[1..].split(' ').next().unwrap().parse().unwrap();
        assert_eq!(&text[cut..], kept);
    }

    proptest! {
        /// Whatever the text, the fitted one is within the room (when the room holds
        /// the note) and ends as the text ends.
        #[test]
        fn the_fitted_text_fits_and_ends_as_the_text(
            text in "(\\PC{0,40}\n){0,60}\\PC{0,40}",
            room in 300usize..2000,
        ) {
            let fitted = keep_end(&text, room, &no_data());
            prop_assert!(fitted.len() <= room, "{} > {room}", fitted.len());
            let kept = match fitted.strip_prefix('[') {
                Some(_) if text.len() > room => fitted.split_once("]\n").map(|(_, kept)| kept).unwrap(),
                _ => fitted.as_str(),
            };
            prop_assert!(text.ends_with(kept));
        }
    }
}
