//! The providers over real HTTP, against the scripted server on 127.0.0.1.

mod agent;
mod cancel;
mod errors;
mod real_server;
mod split;
mod stream;
mod support;
