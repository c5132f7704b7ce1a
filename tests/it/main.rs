//! The one integration-test binary.

mod retrieval;
