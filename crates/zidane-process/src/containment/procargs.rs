//! Reading macOS's `KERN_PROCARGS2` block: `argc` (a native-endian `int`), the
//! executable's path, NUL padding, `argc` arguments, then the environment, each entry
//! NUL-terminated, up to an empty entry. Pure parsing, so it is tested on every Unix.
#![cfg_attr(not(target_os = "macos"), allow(dead_code))]

/// The arguments and the environment (NUL-separated, as `/proc/<pid>/environ` has it)
/// of a `KERN_PROCARGS2` block; `None` when it is malformed.
pub(crate) fn split_procargs(block: &[u8]) -> Option<(Vec<&[u8]>, &[u8])> {
    let argc_bytes: [u8; 4] = block.get(..4)?.try_into().ok()?;
    let argc = usize::try_from(i32::from_ne_bytes(argc_bytes)).ok()?;
    let rest = block.get(4..)?;
    // The executable's path, then the NULs that pad it.
    let path_end = rest.iter().position(|&b| b == 0)?;
    let mut at = path_end;
    while rest.get(at) == Some(&0) {
        at += 1;
    }
    let mut args = Vec::with_capacity(argc);
    for _ in 0..argc {
        let tail = rest.get(at..)?;
        let len = tail.iter().position(|&b| b == 0)?;
        args.push(&tail[..len]);
        at += len + 1;
    }
    let env = rest.get(at..).unwrap_or_default();
    // The environment ends at the first empty entry (the rest is padding and the
    // strings the kernel appends for the loader).
    let end = env
        .windows(2)
        .position(|pair| pair == [0, 0])
        .map_or(env.len(), |at| at + 1);
    let env = if env.first() == Some(&0) {
        &env[..0]
    } else {
        &env[..end]
    };
    Some((args, env))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(argc: i32, body: &[u8]) -> Vec<u8> {
        let mut bytes = argc.to_ne_bytes().to_vec();
        bytes.extend_from_slice(body);
        bytes
    }

    #[test]
    fn arguments_and_environment_come_apart() {
        let raw = block(
            3,
            b"/bin/sh\0\0\0\0sh\0-c\0sleep 1\0A=1\0ZIDANE_TASK_OWNER=x\0\0\0ptr_munge=\0",
        );
        let (args, env) = split_procargs(&raw).unwrap();
        assert_eq!(args, [&b"sh"[..], b"-c", b"sleep 1"]);
        assert_eq!(env, b"A=1\0ZIDANE_TASK_OWNER=x\0");
    }

    #[test]
    fn an_empty_environment_and_a_malformed_block() {
        let raw = block(1, b"/bin/true\0true\0\0\0");
        let (args, env) = split_procargs(&raw).unwrap();
        assert_eq!((args, env), (vec![&b"true"[..]], &b""[..]));
        assert_eq!(split_procargs(&block(2, b"/bin/x\0only-one")), None);
        assert_eq!(split_procargs(b"\x01"), None);
    }
}
