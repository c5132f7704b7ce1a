//! The retrieval engine: collections, ingest, lexical search, citations.
