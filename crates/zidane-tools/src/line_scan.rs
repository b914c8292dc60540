//! One pass over a chunk of a task's log that counts its newlines and says whether it
//! may hold a terminal control. The task event follower runs it over every byte a task
//! writes, so it is written in fixed-size blocks with small counters, a shape the
//! compiler turns into vector instructions; a plain byte-at-a-time loop leaves the
//! follower reading behind a fast writer.

/// Bytes scanned per block: few enough that a block's newline count fits in a `u8`.
const BLOCK: usize = 128;

/// How many `\n` `bytes` holds, and whether it holds a `\r` or another byte
/// [`strip_terminal_controls`](crate::terminal_text::strip_terminal_controls) might
/// drop (a caller that gets `true` looks closer).
pub(crate) fn scan(bytes: &[u8]) -> (u64, bool) {
    let mut blocks = bytes.chunks_exact(BLOCK);
    let mut newlines = 0u64;
    let mut suspect = 0u8;
    for block in &mut blocks {
        let (n, s) = scan_block(block);
        newlines += u64::from(n);
        suspect |= s;
    }
    let (n, s) = scan_block(blocks.remainder());
    (newlines + u64::from(n), (suspect | s) != 0)
}

/// The newlines of at most [`BLOCK`] bytes, and a non-zero mark when one may be a
/// control. Bitwise operators rather than `&&`/`||`, so no byte takes a branch.
#[inline(always)]
fn scan_block(block: &[u8]) -> (u8, u8) {
    debug_assert!(block.len() <= BLOCK);
    let mut newlines = 0u8;
    let mut suspect = 0u8;
    for &b in block {
        newlines += u8::from(b == b'\n');
        suspect |= u8::from(((b < 0x20) & (b != b'\n') & (b != b'\t')) | (b == 0x7f) | (b == 0xc2));
    }
    (newlines, suspect)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The plain form of [`scan`]: one byte at a time.
    fn scan_plain(bytes: &[u8]) -> (u64, bool) {
        bytes.iter().fold((0, false), |(newlines, suspect), b| {
            (
                newlines + u64::from(*b == b'\n'),
                suspect || (*b < 0x20 && *b != b'\n' && *b != b'\t') || *b == 0x7f || *b == 0xc2,
            )
        })
    }

    #[test]
    fn every_byte_value_is_judged_as_the_plain_scan_does() {
        for b in 0..=u8::MAX {
            for len in [1, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK + 7] {
                let mut bytes = vec![b'a'; len];
                bytes[len / 2] = b;
                assert_eq!(
                    scan(&bytes),
                    scan_plain(&bytes),
                    "byte {b:#04x}, length {len}"
                );
            }
        }
    }

    #[test]
    fn a_block_of_newlines_is_counted_whole() {
        let bytes = vec![b'\n'; 10 * BLOCK + 5];
        assert_eq!(scan(&bytes), (10 * BLOCK as u64 + 5, false));
    }

    proptest! {
        #[test]
        fn agrees_with_the_plain_scan(
            bytes in proptest::collection::vec(
                prop_oneof![Just(b'\n'), Just(b'a'), Just(b'\r'), Just(0x1b_u8), any::<u8>()],
                0..2000,
            ),
        ) {
            prop_assert_eq!(scan(&bytes), scan_plain(&bytes));
        }
    }
}
