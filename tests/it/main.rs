//! The one integration-test binary.

mod mcp;
