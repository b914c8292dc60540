//! Integration tests of the providers against the scripted server.
