//! Fitting a transcript line to the screen's width, by display width: a CJK character
//! or an emoji takes two columns. Lines wrap between words, so a word or a path moves
//! whole to the next row; only a word wider than a row is broken where the row ends.

use unicode_width::UnicodeWidthChar as _;

/// The columns `c` takes on screen; control characters take none (they are not drawn).
pub fn char_columns(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// The columns `text` takes on screen.
pub fn columns(text: &str) -> usize {
    text.chars().map(char_columns).sum()
}

/// `line` as rows of at most `width` columns (a width under 1 counts as 1), at least
/// one row. A row breaks before a word that would not fit, and the whitespace at the
/// break is dropped; a word wider than a row is broken by width.
pub fn wrap(line: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut rows = Vec::new();
    let mut row = Row::default();
    for (space, word) in words(line) {
        let (space_columns, word_columns) = (columns(space), columns(word));
        if row.columns + space_columns + word_columns <= width {
            row.push_str(space, space_columns);
            row.push_str(word, word_columns);
            continue;
        }
        if word.is_empty() {
            // Whitespace that ends the line and does not fit: nothing to show.
            continue;
        }
        if word_columns <= width {
            // On a row of its own; an indentation it does not fit beside is dropped.
            if !row.text.is_empty() {
                rows.push(std::mem::take(&mut row).text);
            }
            row.push_str(word, word_columns);
            continue;
        }
        // Wider than any row: it goes on where the row has room, and fills rows to
        // their width.
        let first = word.chars().next().map_or(0, char_columns);
        if row.columns + space_columns + first <= width {
            row.push_str(space, space_columns);
        } else {
            rows.push(std::mem::take(&mut row).text);
        }
        for c in word.chars() {
            let c_columns = char_columns(c);
            if row.columns + c_columns > width && !row.text.is_empty() {
                rows.push(std::mem::take(&mut row).text);
            }
            row.text.push(c);
            row.columns += c_columns;
        }
    }
    rows.push(row.text);
    rows
}

/// `line` cut to `width` columns, ending in `…` when it was cut.
pub fn truncate(line: &str, width: usize) -> String {
    if columns(line) <= width {
        return line.to_owned();
    }
    let mut text = String::new();
    let mut used = 0;
    for c in line.chars() {
        let c_columns = char_columns(c);
        if used + c_columns + 1 > width {
            break;
        }
        text.push(c);
        used += c_columns;
    }
    text.push('…');
    text
}

/// A row being filled, and the columns it takes.
#[derive(Default)]
struct Row {
    text: String,
    columns: usize,
}

impl Row {
    fn push_str(&mut self, text: &str, columns: usize) {
        self.text.push_str(text);
        self.columns += columns;
    }
}

/// The line's words, each with the whitespace before it; a line ending in whitespace
/// ends with that whitespace and an empty word.
fn words(line: &str) -> impl Iterator<Item = (&str, &str)> {
    let mut rest = line;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let word_start = rest
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(rest.len());
        let word_end = rest[word_start..]
            .find(char::is_whitespace)
            .map_or(rest.len(), |end| word_start + end);
        let (space, word) = (&rest[..word_start], &rest[word_start..word_end]);
        rest = &rest[word_end..];
        Some((space, word))
    })
}

#[cfg(test)]
#[path = "wrap_tests.rs"]
mod tests;
