//! End-to-end tests of zidane live in `tests/`; this library is empty on purpose.
