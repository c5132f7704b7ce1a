//! The settings of an embedder's or a reranker's configuration, as errors name them. The caller
//! says what its operator calls each one (a command line's flags, a configuration file's keys)
//! through [`Names`], so this crate knows none of those names.

/// A setting an error can be about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// The endpoint's URL.
    Url,
    /// The model name sent to an endpoint.
    Model,
    /// The API key for an endpoint.
    ApiKey,
    /// The opt-in that lets an endpoint be on a loopback or private address.
    AllowPrivate,
    /// Texts per request to an endpoint.
    BatchSize,
    /// The limit for one request to an endpoint.
    Timeout,
    /// A model named on the Hugging Face Hub.
    HubModel,
    /// A model's directory.
    ModelDir,
}

impl Setting {
    /// Every setting.
    pub const ALL: [Setting; 8] = [
        Setting::Url,
        Setting::Model,
        Setting::ApiKey,
        Setting::AllowPrivate,
        Setting::BatchSize,
        Setting::Timeout,
        Setting::HubModel,
        Setting::ModelDir,
    ];

    /// The setting's name in this crate's own types: the field of the configuration struct
    /// that holds it, or the argument of the function that takes it. The default [`Names`].
    pub const fn field(self) -> &'static str {
        match self {
            Setting::Url => "url",
            Setting::Model => "model",
            Setting::ApiKey => "api_key",
            Setting::AllowPrivate => "allow_private",
            Setting::BatchSize => "batch_size",
            Setting::Timeout => "timeout",
            Setting::HubModel => "hub_model",
            Setting::ModelDir => "model_dir",
        }
    }
}

/// What the caller's operator calls each setting. An error names its setting this way (the
/// `field` of a validation error), and so does an error that points at another setting (the
/// opt-in that would allow a refused address, the directory a gated model must be given by).
pub type Names = fn(Setting) -> &'static str;
