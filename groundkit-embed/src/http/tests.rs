//! Unit tests of the endpoint embedder's configuration handling; the calls themselves are tested
//! against a real server in the workspace's integration tests (`tests/it/embed/http.rs`).

use super::*;

#[test]
fn base_urls_become_the_embeddings_url() {
    for (base, url) in [
        (
            "http://127.0.0.1:11434",
            "http://127.0.0.1:11434/v1/embeddings",
        ),
        (
            "http://127.0.0.1:11434/",
            "http://127.0.0.1:11434/v1/embeddings",
        ),
        (
            "https://api.example.com/v1",
            "https://api.example.com/v1/embeddings",
        ),
        (
            "https://api.example.com/v1/",
            "https://api.example.com/v1/embeddings",
        ),
        (
            "HTTPS://api.example.com/v1/embeddings",
            "https://api.example.com/v1/embeddings",
        ),
        (
            "https://gw.example.com/openai",
            "https://gw.example.com/openai/v1/embeddings",
        ),
        ("http://[::1]:8080", "http://[::1]:8080/v1/embeddings"),
    ] {
        assert_eq!(endpoint_url(base, "url").expect(base), url, "{base}");
    }
}

#[test]
fn bad_urls_are_refused_without_echoing_them() {
    for base in [
        "ftp://files.example.com/secret-path",
        "file:///etc/secret-path",
        "https://user:secret-pass@api.example.com/secret-path",
        "https://api.example.com/secret-path?key=secret-query",
        "/secret-path",
        "not a url secret-path",
        "",
    ] {
        let err = endpoint_url(base, "embedder.url").expect_err(base);
        assert_eq!(err.kind(), "validation_error", "{base}");
        assert_eq!(err.field(), Some("embedder.url"));
        let message = err.to_string();
        assert!(!message.contains("secret"), "{base}: {message}");
    }
}

#[test]
fn the_fingerprint_covers_model_and_dimension() {
    let a = fingerprint("text-embedding-3-small", 1536);
    assert_eq!(a.len(), 16);
    assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(a, fingerprint("text-embedding-3-small", 1536));
    assert_ne!(a, fingerprint("text-embedding-3-small", 512));
    assert_ne!(a, fingerprint("text-embedding-3-large", 1536));
}

#[test]
fn the_configuration_never_shows_the_key() {
    let mut config = HttpEmbedderConfig::new("https://api.example.com/secret-path", "m");
    config.api_key = Some("sk-secret-key".to_owned());
    let shown = format!("{config:?}");
    assert!(!shown.contains("sk-secret-key"), "{shown}");
    assert!(!shown.contains("secret-path"), "{shown}");
}

#[test]
fn bad_settings_and_unsendable_keys_are_validation_errors_that_hide_the_key() {
    let base = HttpEmbedderConfig::new("http://127.0.0.1:9", "m");
    let mut zero_batch = base.clone();
    zero_batch.batch_size = 0;
    let mut bad_key = base.clone();
    bad_key.api_key = Some("sk-secret\nkey".to_owned());
    let mut no_model = base;
    no_model.model = " ".to_owned();
    for config in [zero_batch, bad_key, no_model] {
        let err = HttpEmbedder::connect(config).expect_err("refused before any call");
        assert_eq!(err.kind(), "validation_error");
        assert!(!err.to_string().contains("secret"), "{err}");
    }
}

#[test]
fn byte_level_request_logging_is_compiled_out() {
    // ureq-proto logs the raw request, Authorization header included, at `trace` through the
    // `log` crate; this crate's `log/max_level_debug` feature removes those calls.
    assert!(log::STATIC_MAX_LEVEL <= log::LevelFilter::Debug);
}
