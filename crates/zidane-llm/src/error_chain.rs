//! One error as one line: its message and the causes its message does not say.

/// The error's message, then each `source()` in its chain that the text before it does
/// not already say, joined by `: `. This workspace's errors say their cause in their
/// message; foreign ones (io, HTTP clients) may keep theirs only as a `source()`.
///
/// ```
/// let error = std::io::Error::other("connection refused");
/// assert_eq!(zidane_llm::error_chain(&error), "connection refused");
/// ```
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut next = error.source();
    while let Some(cause) = next {
        let message = cause.to_string();
        if !message.is_empty() && !text.contains(&message) {
            text.push_str(": ");
            text.push_str(&message);
        }
        next = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::error_chain as chain;

    /// An error with a message and, maybe, a `source()`.
    #[derive(Debug)]
    struct Link {
        message: String,
        source: Option<Box<Link>>,
    }

    impl std::fmt::Display for Link {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(&self.message)
        }
    }

    impl std::error::Error for Link {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.source
                .as_deref()
                .map(|link| link as &(dyn std::error::Error + 'static))
        }
    }

    fn link(message: &str, source: Option<Link>) -> Link {
        Link {
            message: message.to_owned(),
            source: source.map(Box::new),
        }
    }

    #[test]
    fn each_cause_of_a_chain_is_said_once() {
        let error = link(
            "cannot start",
            Some(link(
                "connect failed",
                Some(link("connection refused", None)),
            )),
        );
        assert_eq!(
            chain(&error),
            "cannot start: connect failed: connection refused"
        );
    }

    #[test]
    fn a_cause_the_message_already_says_is_not_repeated() {
        // The middle error says its cause itself, as this workspace's errors do.
        let error = link(
            "mcp: cannot listen on 127.0.0.1:1: permission denied",
            Some(link(
                "cannot listen on 127.0.0.1:1: permission denied",
                Some(link("permission denied", None)),
            )),
        );
        assert_eq!(
            chain(&error),
            "mcp: cannot listen on 127.0.0.1:1: permission denied"
        );
        let lone = link("no provider", None);
        assert_eq!(chain(&lone), "no provider");
    }
}
