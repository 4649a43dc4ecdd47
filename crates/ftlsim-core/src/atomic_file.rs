//! Writing a file completely or not at all: into a temporary file beside it, renamed into
//! place only when the whole content was written. A failure (or a panic) leaves the old
//! file, if any, untouched and no partial file behind.

use std::io::{BufWriter, Write};
use std::path::Path;

/// Write `path` through `fill`, atomically. Errors name the file.
pub fn write_atomically(
    path: &Path,
    fill: impl FnOnce(&mut BufWriter<&mut std::fs::File>) -> std::io::Result<()>,
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", path.display());
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut builder = tempfile::Builder::new();
    builder.prefix(".ftlsim-").suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o644));
    }
    // Dropped without `persist`, the temporary file is removed.
    let mut tmp = builder.tempfile_in(dir).map_err(|e| err(&e))?;
    {
        let mut w = BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
        fill(&mut w).map_err(|e| err(&e))?;
        w.flush().map_err(|e| err(&e))?;
    }
    tmp.persist(path).map_err(|e| err(&e.error))?;
    Ok(())
}

/// Refuse to write `out` when it is the file `input` (the same path, a symlink to it or a hard
/// link of it): the output would replace the input. `doing` names what would destroy it
/// ("converting", "fitting").
pub fn refuse_same_file(input: &Path, out: &Path, doing: &str) -> Result<(), String> {
    let (Ok(i), Ok(o)) = (std::fs::metadata(input), std::fs::metadata(out)) else {
        return Ok(());
    };
    #[cfg(unix)]
    let same = {
        use std::os::unix::fs::MetadataExt;
        (i.dev(), i.ino()) == (o.dev(), o.ino())
    };
    #[cfg(not(unix))]
    let same = {
        let _ = (i, o);
        std::fs::canonicalize(input).ok() == std::fs::canonicalize(out).ok()
    };
    if same {
        return Err(format!(
            "output {} is the input trace {} (or a link to it): {doing} would destroy it; choose another output file",
            out.display(),
            input.display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::write_atomically;
    use std::io::Write;

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_partial_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bin");
        write_atomically(&path, |w| w.write_all(b"old")).unwrap();
        let e = write_atomically(&path, |w| {
            w.write_all(b"partial")?;
            Err(std::io::Error::other("disk full"))
        })
        .unwrap_err();
        assert!(e.contains("out.bin") && e.contains("disk full"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file left");
    }
}
