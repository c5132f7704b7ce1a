//! Zip containers (DOCX, PPTX, XLSX and the OpenDocument formats), opened within limits.
//!
//! Before anything reads an entry, [`Archive::open`] checks the whole archive: at most
//! [`MAX_ENTRIES`] entries, at most [`MAX_UNCOMPRESSED`] bytes declared uncompressed in all, no
//! entry over 1 MiB declaring more than [`MAX_RATIO`] times its compressed size, and every entry
//! decompressed (into nothing) to check it holds no more than it declares. A zip bomb, honest or
//! lying about its sizes, so fails its file after at most [`MAX_UNCOMPRESSED`] bytes inflated,
//! and whatever reads the archive afterwards (this module, or calamine for a workbook) reads
//! bounded entries.

use std::io::{Cursor, Read};

use zip::ZipArchive;

use super::Malformed;

/// Most entries an archive may hold.
pub const MAX_ENTRIES: usize = 10_000;
/// Most bytes all entries of an archive may hold uncompressed.
pub const MAX_UNCOMPRESSED: u64 = 256 << 20;
/// Largest compression ratio accepted for an entry of more than 1 MiB uncompressed.
pub const MAX_RATIO: u64 = 200;

/// An archive that passed the limits.
pub(crate) struct Archive<'a> {
    zip: ZipArchive<Cursor<&'a [u8]>>,
    format: &'static str,
}

impl<'a> Archive<'a> {
    /// Opens the archive in `bytes` as a document of `format`, checking every limit.
    pub(crate) fn open(bytes: &'a [u8], format: &'static str) -> Result<Self, Malformed> {
        let mut zip = ZipArchive::new(Cursor::new(bytes))
            .map_err(|err| malformed(format, format!("not a zip archive: {err}")))?;
        if zip.len() > MAX_ENTRIES {
            return Err(malformed(
                format,
                format!("holds more than {MAX_ENTRIES} archive entries"),
            ));
        }
        let mut declared = 0u64;
        for i in 0..zip.len() {
            let entry = zip
                .by_index(i)
                .map_err(|err| malformed(format, format!("unreadable archive entry: {err}")))?;
            let (size, packed) = (entry.size(), entry.compressed_size());
            declared = declared.saturating_add(size);
            if declared > MAX_UNCOMPRESSED {
                return Err(too_big(format));
            }
            if size > 1 << 20 && size / packed.max(1) > MAX_RATIO {
                return Err(malformed(
                    format,
                    format!("an archive entry expands more than {MAX_RATIO} times (a zip bomb?)"),
                ));
            }
        }
        for i in 0..zip.len() {
            let entry = zip
                .by_index(i)
                .map_err(|err| malformed(format, format!("unreadable archive entry: {err}")))?;
            let size = entry.size();
            let inflated = std::io::copy(&mut entry.take(size + 1), &mut std::io::sink())
                .map_err(|err| malformed(format, format!("unreadable archive entry: {err}")))?;
            if inflated > size {
                return Err(malformed(
                    format,
                    "an archive entry holds more than it declares (a zip bomb?)".into(),
                ));
            }
        }
        Ok(Self { zip, format })
    }

    /// The names of the entries, in archive order.
    pub(crate) fn names(&self) -> Vec<String> {
        self.zip
            .file_names()
            .filter_map(Result::ok)
            .map(|name| name.into_owned())
            .collect()
    }

    /// The bytes of entry `name`, `None` when the archive has no such entry.
    pub(crate) fn entry(&mut self, name: &str) -> Result<Option<Vec<u8>>, Malformed> {
        let format = self.format;
        let mut entry = match self.zip.by_name(name) {
            Ok(entry) => entry,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(err) => {
                return Err(malformed(
                    format,
                    format!("unreadable archive entry: {err}"),
                ));
            }
        };
        let size = entry.size();
        let mut bytes = Vec::with_capacity(size.min(MAX_UNCOMPRESSED) as usize);
        (&mut entry)
            .take(size)
            .read_to_end(&mut bytes)
            .map_err(|err| malformed(format, format!("unreadable archive entry: {err}")))?;
        Ok(Some(bytes))
    }

    /// The bytes of entry `name`, which the format requires.
    pub(crate) fn required(&mut self, name: &str) -> Result<Vec<u8>, Malformed> {
        let format = self.format;
        self.entry(name)?
            .ok_or_else(|| malformed(format, format!("the archive has no {name}")))
    }
}

/// A malformed-document error of `format`.
pub(crate) fn malformed(format: &'static str, reason: String) -> Malformed {
    Malformed { format, reason }
}

fn too_big(format: &'static str) -> Malformed {
    malformed(
        format,
        format!(
            "the archive declares more than {} MiB uncompressed (a zip bomb?)",
            MAX_UNCOMPRESSED >> 20
        ),
    )
}
