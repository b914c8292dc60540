//! A bearer token for a server nobody gave one: drawn from the operating system's CSPRNG
//! and left in a file only its user can read, the way Jupyter hands out its token.

use std::fmt::Write as _;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use crate::error::McpServeError;

/// The directory, under the user dir, that holds the token file of each running server.
pub(crate) const TOKEN_DIR: &str = "mcp-http";

/// Bytes of randomness in a generated token: 256 bits, beyond guessing.
const TOKEN_BYTES: usize = 32;

/// A fresh token: 32 bytes from the operating system's CSPRNG, in hex, so it
/// goes in a header and a shell word as it is.
pub fn generate_token() -> Result<String, McpServeError> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes).map_err(|error| McpServeError::Randomness(error.to_string()))?;
    Ok(bytes.iter().fold(String::new(), |mut hex, byte| {
        // Writing to a String cannot fail.
        let _ = write!(hex, "{byte:02x}");
        hex
    }))
}

/// The file a server's token is kept in while it runs, removed when this is dropped.
///
/// It lives in `<user dir>/mcp-http/` (mode 0700) and is named after the address
/// served, one per server (`127.0.0.1-8931.token`); the file is mode 0600. On Windows
/// the user dir is under the user's profile, whose access list already keeps other
/// users out, and the files inherit it. A server that
/// dies without stopping leaves its file behind, holding a token nothing accepts; the
/// next server on the same address replaces it.
#[derive(Debug)]
pub struct TokenFile {
    path: PathBuf,
}

impl TokenFile {
    /// Writes `token` to the file for a server listening on `addr`.
    pub fn write(user_dir: &Path, addr: SocketAddr, token: &str) -> Result<Self, McpServeError> {
        let dir = user_dir.join(TOKEN_DIR);
        let failed = |path: &Path| {
            let path = path.to_path_buf();
            move |cause| McpServeError::TokenFile { path, cause }
        };
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&dir).map_err(failed(&dir))?;
        // A directory made earlier, or by hand, may be open to others; chmod also
        // fails on one this user does not own.
        #[cfg(unix)]
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .map_err(failed(&dir))?;
        let path = dir.join(format!("{}-{}.token", addr.ip(), addr.port()));
        match std::fs::remove_file(&path) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                return Err(failed(&path)(error));
            }
            _ => {}
        }
        // create_new: never through a link or into a file someone else made meanwhile.
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&path).map_err(failed(&path))?;
        let written = file
            .write_all(format!("{token}\n").as_bytes())
            .and_then(|()| file.sync_all());
        let token_file = Self { path };
        written.map_err(failed(&token_file.path))?;
        Ok(token_file)
    }

    /// Where the token is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TokenFile {
    fn drop(&mut self) {
        // Nothing to do about a failure here: the server is stopping, and a token left
        // behind opens nothing once it has stopped.
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_hex_and_differ() {
        let first = generate_token().unwrap();
        let second = generate_token().unwrap();
        assert_eq!(first.len(), TOKEN_BYTES * 2);
        assert!(first.chars().all(|c| c.is_ascii_hexdigit()), "{first}");
        assert_ne!(first, second);
    }

    #[test]
    #[cfg(unix)]
    fn the_file_is_private_and_goes_with_its_server() {
        use std::os::unix::fs::PermissionsExt;
        let user_dir = tempfile::tempdir().unwrap();
        // A directory left open to others is closed again.
        std::fs::create_dir(user_dir.path().join(TOKEN_DIR)).unwrap();
        std::fs::set_permissions(
            user_dir.path().join(TOKEN_DIR),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        let addr: SocketAddr = "127.0.0.1:8931".parse().unwrap();
        let file = TokenFile::write(user_dir.path(), addr, "abc").unwrap();
        assert_eq!(
            file.path(),
            user_dir.path().join("mcp-http/127.0.0.1-8931.token")
        );
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(file.path()), 0o600);
        assert_eq!(mode(&user_dir.path().join(TOKEN_DIR)), 0o700);
        assert_eq!(std::fs::read_to_string(file.path()).unwrap(), "abc\n");
        // A stale file of a server that died is replaced.
        let path = file.path().to_path_buf();
        std::mem::forget(file);
        let again = TokenFile::write(user_dir.path(), addr, "def").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "def\n");
        drop(again);
        assert!(!path.exists());
    }
}
