//! Banners in each tone, plain and ANSI.

use insta::assert_snapshot;
use zidane_context::Signal;
use zidane_wire::{Banner, Tone};

use crate::support::notification;

/// The plain line, and the ANSI line with its escapes spelled out.
fn show(banner: &Banner) -> String {
    format!(
        "tone:  {:?}\nplain: {}\nansi:  {}",
        banner.tone,
        banner.text,
        banner.ansi().escape_debug()
    )
}

#[test]
fn dim_for_a_clean_exit() {
    let banner = Banner::for_notification(&notification(1, "npm run build", 4200, 0, None));
    assert_eq!(banner.tone, Tone::Dim);
    assert_snapshot!("banner_dim", show(&banner));
}

#[test]
fn warn_for_a_non_zero_exit() {
    let banner = Banner::for_notification(&notification(2, "cargo test", 83_456, 101, None));
    assert_eq!(banner.tone, Tone::Warn);
    assert_snapshot!("banner_warn", show(&banner));
}

#[test]
fn error_for_a_signal_kill() {
    let banner =
        Banner::for_notification(&notification(3, "npm run dev", 1200, 0, Some(Signal::TERM)));
    assert_eq!(banner.tone, Tone::Error);
    assert_snapshot!("banner_error", show(&banner));
}

#[test]
fn path_needing_percent_encoding() {
    let mut n = notification(4, "make", 850, 0, None);
    n.output_file = "/home/a b/日本/50%/bash_4.log".into();
    let banner = Banner::for_notification(&n);
    assert_eq!(
        banner.to_string(),
        "⌁ bash_4 exited (0) 850ms /home/a b/日本/50%/bash_4.log"
    );
    assert!(
        banner
            .ansi()
            .contains("file:///home/a%20b/%E6%97%A5%E6%9C%AC/50%25/bash_4.log"),
        "{}",
        banner.ansi()
    );
}

#[test]
fn relative_path_is_not_linked() {
    let mut n = notification(5, "make", 850, 2, None);
    n.output_file = "tasks/bash_5.log".into();
    let ansi = Banner::for_notification(&n).ansi();
    assert!(!ansi.contains("\x1b]8;"), "{ansi:?}");
    assert_eq!(
        ansi,
        "\x1b[33m⌁ bash_5 exited (2) 850ms tasks/bash_5.log\x1b[0m"
    );
}
