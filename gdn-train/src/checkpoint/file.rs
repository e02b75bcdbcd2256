//! One safetensors file, opened for reading a few named tensors: the header is parsed (by the
//! `safetensors` crate) and checked against the file's length, and each tensor asked for is read
//! alone — a real checkpoint shard is gigabytes, one layer's tensors a few megabytes, so the file
//! is neither read whole nor mapped.

use super::CheckpointProblem;
use super::dtype;
use crate::{Error, Result};
use safetensors::tensor::Metadata;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The largest header the loader parses, as the `safetensors` crate's own limit.
const MAX_HEADER_BYTES: u64 = 100_000_000;

/// An open safetensors file and its parsed header.
pub(crate) struct SafetensorsFile {
    /// The path, as errors print it.
    name: String,
    file: File,
    /// Where the data section starts: after the 8-byte length and the header.
    data_start: u64,
    metadata: Metadata,
}

impl SafetensorsFile {
    /// Opens `path` and parses its header; a truncated file or a malformed header is
    /// [`CheckpointProblem::Format`].
    pub(crate) fn open(path: &Path) -> Result<Self> {
        let name = path.display().to_string();
        let io = |e: std::io::Error| Error::Checkpoint { file: name.clone(), problem: io_problem(e) };
        let mut file = File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let format = |reason: String| Error::Checkpoint {
            file: name.clone(),
            problem: CheckpointProblem::Format { format: "safetensors", reason },
        };
        if len < 8 {
            return Err(format(format!("{len} bytes, shorter than the 8-byte header length")));
        }
        let mut word = [0u8; 8];
        file.read_exact(&mut word).map_err(io)?;
        let header_len = u64::from_le_bytes(word);
        if header_len > MAX_HEADER_BYTES || header_len > len - 8 {
            return Err(format(format!("a header of {header_len} bytes in a file of {len} bytes")));
        }
        let mut header = vec![0u8; header_len as usize];
        file.read_exact(&mut header).map_err(io)?;
        let metadata: Metadata = serde_json::from_slice(&header).map_err(|e| format(format!("header: {e}")))?;
        let data_start = 8 + header_len;
        let data_len = metadata.data_len() as u64;
        if data_start.checked_add(data_len) != Some(len) {
            return Err(format(format!(
                "the header describes {data_len} bytes of data after its {data_start}, but the file has {len} bytes"
            )));
        }
        Ok(Self { name, file, data_start, metadata })
    }

    /// Whether the file holds a tensor named `tensor`.
    pub(crate) fn contains(&self, tensor: &str) -> bool {
        self.metadata.info(tensor).is_some()
    }

    /// The error of `problem` in this file.
    pub(crate) fn error(&self, problem: CheckpointProblem) -> Error {
        Error::Checkpoint { file: self.name.clone(), problem }
    }

    /// Reads `tensor`, which must have shape `expected` and a dtype [`dtype::widen`] reads, as
    /// row-major f32.
    pub(crate) fn read(&mut self, tensor: &str, expected: &[usize]) -> Result<Vec<f32>> {
        let Some(info) = self.metadata.info(tensor) else {
            return Err(self.error(CheckpointProblem::Missing { tensor: tensor.into(), expected: expected.into() }));
        };
        if info.shape != expected {
            let got = info.shape.clone();
            return Err(self.error(CheckpointProblem::Shape { tensor: tensor.into(), expected: expected.into(), got }));
        }
        let dtype = info.dtype;
        if dtype::element_bytes(dtype).is_none() {
            return Err(self.error(CheckpointProblem::Dtype { tensor: tensor.into(), got: dtype.to_string() }));
        }
        // The header's offsets are validated against shape and dtype and the file's length (open).
        let (start, end) = info.data_offsets;
        let mut bytes = vec![0u8; end - start];
        let offset = self.data_start + start as u64;
        let read = self.file.seek(SeekFrom::Start(offset)).and_then(|_| self.file.read_exact(&mut bytes));
        read.map_err(|e| self.error(io_problem(e)))?;
        Ok(dtype::widen(dtype, &bytes))
    }
}

/// An I/O error as a problem.
pub(crate) fn io_problem(e: std::io::Error) -> CheckpointProblem {
    CheckpointProblem::Io { reason: e.to_string() }
}
