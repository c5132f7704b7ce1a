//! Example tool sets.
