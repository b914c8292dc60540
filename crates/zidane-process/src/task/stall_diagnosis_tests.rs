//! Unit tests of the stall diagnosis: parsing `/proc` text and naming what a process does.

use super::*;

fn none(_: i64) -> DescriptorKind {
    DescriptorKind::Unknown
}

#[test]
fn stat_gives_name_state_and_group_even_with_odd_names() {
    assert_eq!(
        parse_stat("4242 (my (odd) name) S 1 4200 4200 0 -1 4194304"),
        Some(("my (odd) name".to_owned(), 'S', 4200))
    );
    assert_eq!(parse_stat("garbage"), None);
}

#[test]
fn syscall_gives_the_number_and_first_argument() {
    assert_eq!(
        parse_syscall("0 0x3 0x7ffd 0x1 0x0 0x0 0x0 0x7ffd 0x7f"),
        Some((0, 3))
    );
    assert_eq!(parse_syscall("running"), None);
    assert_eq!(parse_syscall("-1 0x7ffd 0x7f"), Some((-1, 0x7ffd)));
}

#[test]
fn states_win_over_calls() {
    assert_eq!(classify('T', Some((0, 0)), None, none), Activity::Stopped);
    assert_eq!(classify('R', None, None, none), Activity::Running);
    assert_eq!(classify('Z', None, None, none), Activity::Zombie);
    assert_eq!(classify('D', None, None, none), Activity::KernelIo);
}

#[cfg(target_arch = "x86_64")]
#[test]
fn blocked_calls_name_what_they_wait_for() {
    let tty = |_| DescriptorKind::Terminal("/dev/pts/3".to_owned());
    assert_eq!(
        describe(&classify('S', Some((0, 0)), None, tty)),
        "waiting for input from a terminal: reading its stdin, a terminal (/dev/pts/3)"
    );
    let pipe = |_| DescriptorKind::Pipe;
    assert_eq!(
        describe(&classify('S', Some((1, 1)), None, pipe)),
        "waiting to write to descriptor 1, a pipe (nobody is reading it)"
    );
    assert_eq!(
        classify('S', Some((61, -1)), None, none),
        Activity::WaitingForChild
    );
    assert_eq!(
        classify('S', Some((230, 0)), None, none),
        Activity::Sleeping
    );
    assert_eq!(classify('S', Some((232, 4)), None, none), Activity::Polling);
    assert_eq!(
        classify('S', Some((43, 3)), None, none),
        Activity::Accepting
    );
    assert_eq!(classify('S', Some((202, 0)), None, none), Activity::Locked);
}

#[test]
fn the_kernel_function_speaks_when_the_call_does_not() {
    assert_eq!(
        classify('S', None, Some("wait_for_partner"), none),
        Activity::OpeningFifo
    );
    assert_eq!(
        classify('S', None, Some("do_wait"), none),
        Activity::WaitingForChild
    );
    assert_eq!(classify('S', None, Some("0"), none), Activity::Asleep(None));
    assert_eq!(
        classify('S', None, Some("some_fn"), none),
        Activity::Asleep(Some("some_fn".to_owned()))
    );
}

#[test]
fn descriptors_are_named_from_their_links() {
    assert_eq!(
        DescriptorKind::from_link("pipe:[1234]"),
        DescriptorKind::Pipe
    );
    assert_eq!(
        DescriptorKind::from_link("socket:[99]"),
        DescriptorKind::Socket
    );
    assert_eq!(DescriptorKind::from_link("/dev/null"), DescriptorKind::Null);
    assert_eq!(
        DescriptorKind::from_link("/dev/pts/0"),
        DescriptorKind::Terminal("/dev/pts/0".to_owned())
    );
    assert_eq!(
        DescriptorKind::from_link("/tmp/x"),
        DescriptorKind::File("/tmp/x".to_owned())
    );
    assert_eq!(
        DescriptorKind::from_link("anon_inode:[eventfd]"),
        DescriptorKind::Unknown
    );
}

#[test]
fn prompts_are_recognised_and_plain_lines_are_not() {
    for line in [
        "Password:",
        "Continue? [Y/n] ",
        "Overwrite (y/n)",
        "Enter name:",
        "> ",
    ] {
        assert!(looks_like_prompt(line), "{line}");
    }
    for line in ["", "Compiling foo v0.1.0", "done."] {
        assert!(!looks_like_prompt(line), "{line}");
    }
}
