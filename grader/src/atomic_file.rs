//! Writing a file whole or not at all: results.json after every student,
//! bundle.json, the reports and job scripts. A crash leaves the old file or
//! the new one, never a mix.

use std::fs;
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to a temporary file beside `path`, flushes it to disk and
/// renames it over `path`: a crash leaves the old file or the new one.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(folder)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = folder.join(format!(".{name}.{}.tmp", std::process::id()));
    let mut file = fs::File::create(&temporary)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    fs::rename(&temporary, path)
}
