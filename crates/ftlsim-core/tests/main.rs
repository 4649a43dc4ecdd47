//! The integration tests, one module per file, built as one test binary (as
//! crates/ftlsim-ftl/tests/main.rs, which says why).

mod no_panic;
