use proptest::prelude::*;
use unicode_width::UnicodeWidthStr as _;

use super::*;

fn without_spaces(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

#[test]
fn words_move_whole_to_the_next_row() {
    assert_eq!(
        wrap("the build finished in 4.2s", 12),
        ["the build", "finished in", "4.2s"]
    );
    assert_eq!(wrap("", 10), [""]);
    assert_eq!(wrap("fits exactly", 12), ["fits exactly"]);
    assert_eq!(wrap("trailing   ", 8), ["trailing"]);
}

#[test]
fn a_path_is_not_cut_when_it_fits_a_row() {
    assert_eq!(
        wrap(
            "⌁ bash_1 exited (0) 4.2s /u/sessions/s1/tasks/bash_1.log",
            40
        ),
        [
            "⌁ bash_1 exited (0) 4.2s",
            "/u/sessions/s1/tasks/bash_1.log"
        ]
    );
}

#[test]
fn a_word_wider_than_a_row_is_broken_by_width() {
    assert_eq!(
        wrap("log /home/someone/.local/share/zidane/x.log", 16),
        ["log /home/someon", "e/.local/share/z", "idane/x.log"]
    );
}

#[test]
fn cjk_takes_two_columns_a_character() {
    let rows = wrap("日本語のテキストを折り返す", 10);
    assert_eq!(rows, ["日本語のテ", "キストを折", "り返す"]);
    // Odd widths leave a column free rather than splitting a character.
    assert_eq!(wrap("日本語", 5), ["日本", "語"]);
    assert_eq!(
        wrap("ビルド 完了しました", 8),
        ["ビルド", "完了しま", "した"]
    );
}

#[test]
fn emoji_take_two_columns() {
    assert_eq!(wrap("done 🎉🎉🎉 ok", 6), ["done", "🎉🎉🎉", "ok"]);
    assert_eq!(wrap("🎉🎉🎉🎉", 5), ["🎉🎉", "🎉🎉"]);
}

#[test]
fn indentation_stays_on_the_first_row() {
    assert_eq!(
        wrap("         … (2 more lines)", 14),
        ["         … (2", "more lines)"]
    );
}

#[test]
fn truncation_is_by_width() {
    assert_eq!(truncate("shell {\"command\":\"ls\"}", 10), "shell {\"c…");
    assert_eq!(truncate("日本語のテキスト", 7), "日本語…");
    assert_eq!(truncate("short", 10), "short");
}

/// Text of words a transcript holds: ASCII, paths, CJK, emoji, runs of spaces.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z]{1,12}",
        "(/[a-z_.]{1,8}){1,6}",
        "[日本語漢字テキスト]{1,8}",
        "[🎉🚀✅]{1,4}",
        " {1,3}",
    ];
    prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
}

proptest! {
    #[test]
    fn rows_fit_and_keep_every_word(line in text(), width in 2usize..40) {
        let rows = wrap(&line, width);
        prop_assert!(!rows.is_empty());
        for row in &rows {
            prop_assert!(row.width() <= width, "{row:?} is wider than {width}");
        }
        prop_assert_eq!(without_spaces(&rows.concat()), without_spaces(&line));
        // A word that fits a row is on one row.
        for word in line.split_whitespace().filter(|word| word.width() <= width) {
            prop_assert!(
                rows.iter().any(|row| row.split_whitespace().any(|w| w == word)),
                "{word:?} was cut: {rows:?}"
            );
        }
    }
}
