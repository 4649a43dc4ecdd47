//! Output files that never destroy an input, another output or a device (issues 12, 58).
//!
//! Every writer goes through [`Outputs`]: each file the command reads (trace, config, fit
//! file, snapshot, scheme file) is recorded by identity (device and inode, symlinks
//! followed), and each output is checked against those inputs and against the outputs
//! claimed before it: by identity when it exists, by its directory's identity and its name
//! when it does not yet (`--save-state o/results.json --out o` are one file before either
//! exists). An output is then
//! - a regular file, or a new one ([`Target::File`]): written into a temporary file beside it
//!   (beside the link's target, for a symlink) and renamed over it only when complete
//!   ([`Staged::commit`]); a failed, interrupted or panicking command leaves the old file;
//! - a character device or a FIFO (`/dev/stdout`, `/dev/null`, a named pipe) where the
//!   writer can stream ([`Target::Stream`]): written through as it goes, never renamed over;
//! - anything else (a directory, a block device, a socket): refused, as is a device or FIFO
//!   where files are replaced whole (`--out`'s result files).
//!
//! Temporary files a process leaves when it aborts are named [`STAGING_PREFIX`]; the CLI's
//! panic hook removes its own ([`remove_staging`]).

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Prefix of every temporary file or directory an output is staged in, followed by the
/// writer's pid.
pub const STAGING_PREFIX: &str = ".ftlsim-partial-";

/// A file's identity: its device and inode (elsewhere than Unix, its canonical path).
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileId(#[cfg(unix)] (u64, u64), #[cfg(not(unix))] PathBuf);

/// The identity of what `path` names, symlinks followed; `None` if it does not exist.
fn identity(path: &Path) -> Option<(FileId, std::fs::Metadata)> {
    let m = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let id = {
        use std::os::unix::fs::MetadataExt;
        FileId((m.dev(), m.ino()))
    };
    #[cfg(not(unix))]
    let id = FileId(std::fs::canonicalize(path).ok()?);
    Some((id, m))
}

/// What a file is, in words, for a refusal.
fn kind_of(m: &std::fs::Metadata) -> &'static str {
    let t = m.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// Where a file is or will be: its directory's identity and its name there (symlinks
/// followed), and its own identity when it exists.
#[derive(Debug, Clone)]
struct Place {
    dir: FileId,
    name: std::ffi::OsString,
    id: Option<FileId>,
}

impl Place {
    fn same(&self, other: &Place) -> bool {
        (self.dir == other.dir && self.name == other.name) || (self.id.is_some() && self.id == other.id)
    }
}

/// A file the command reads or writes, by the role it plays (`trace`, `--save-state`).
#[derive(Debug, Clone)]
struct Claimed {
    role: String,
    path: PathBuf,
    place: Place,
}

/// Where a checked output goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A regular file or a new one, at this path (symlinks followed), replaced whole.
    File {
        /// The path written (a symlink's target).
        path: PathBuf,
        /// The path as given, for messages.
        shown: PathBuf,
    },
    /// A character device or FIFO, written through.
    Stream(PathBuf),
}

/// The inputs of a command and the outputs claimed so far.
#[derive(Debug, Default, Clone)]
pub struct Outputs {
    inputs: Vec<Claimed>,
    outputs: Vec<Claimed>,
}

impl Outputs {
    /// No input, no output.
    pub fn new() -> Outputs {
        Outputs::default()
    }

    /// Record `path`, an input playing `role` (`trace`, `--config`). An input that does not
    /// exist is not recorded: its reader reports it.
    pub fn input(&mut self, role: &str, path: &Path) -> &mut Outputs {
        if let Some((id, _)) = identity(path) {
            let place = place_of(path).unwrap_or(Place { dir: id.clone(), name: Default::default(), id: Some(id) });
            self.inputs.push(Claimed { role: role.into(), path: path.into(), place });
        }
        self
    }

    /// The inputs recorded, each with its role.
    pub fn inputs(&self) -> impl Iterator<Item = (&str, &Path)> {
        self.inputs.iter().map(|i| (i.role.as_str(), i.path.as_path()))
    }

    /// Record the inputs `other` recorded too (a command of several runs: each run's).
    pub fn inputs_of(&mut self, other: &Outputs) -> &mut Outputs {
        self.inputs.extend(other.inputs.iter().cloned());
        self
    }

    /// Claim `path` as the output `role` (`--save-state`, `-o`): a regular file (or a new one)
    /// replaced whole, or a character device or FIFO written through.
    pub fn file(&mut self, role: &str, path: &Path) -> Result<Target, String> {
        self.claim(role, path, true)
    }

    /// Claim `path` as an output `role` that is only ever replaced whole (`--out`'s result
    /// files, renamed into place): a regular file or a new one.
    pub fn replaced(&mut self, role: &str, path: &Path) -> Result<PathBuf, String> {
        match self.claim(role, path, false)? {
            Target::File { path, .. } => Ok(path),
            Target::Stream(_) => unreachable!("a replaced output never streams"),
        }
    }

    fn claim(&mut self, role: &str, path: &Path, may_stream: bool) -> Result<Target, String> {
        let shown = path.display();
        if path.as_os_str().is_empty() {
            return Err(format!("{role}: an empty path; give a file name"));
        }
        let found = identity(path);
        let (stream, char_device) = match &found {
            None => (false, false),
            Some((_, m)) if m.is_file() => (false, false),
            Some((_, m)) if may_stream && (is_fifo(m) || is_char_device(m)) => (true, is_char_device(m)),
            Some((_, m)) if is_fifo(m) || is_char_device(m) => {
                return Err(format!(
                    "{role}: {shown} is {}; it would be replaced by a regular file (result files are moved into \
                     place whole): remove it or choose another path",
                    kind_of(m)
                ))
            }
            Some((_, m)) => {
                return Err(format!(
                    "{role}: {shown} is {}; ftlsim writes regular files{}: choose another path",
                    kind_of(m),
                    if may_stream { ", character devices and FIFOs" } else { "" }
                ))
            }
        };
        let place = match &found {
            // A stream is no file of a directory: only what it is matters.
            Some((id, _)) if stream => Place { dir: id.clone(), name: Default::default(), id: Some(id.clone()) },
            _ => place_of(path).map_err(|e| format!("{role}: cannot write {shown}: {e}"))?,
        };
        let me = Claimed { role: role.into(), path: path.into(), place };
        // Reading and writing one character device (a terminal, /dev/null) destroys nothing.
        if !char_device {
            if let Some(i) = self.inputs.iter().find(|i| i.place.same(&me.place)) {
                return Err(format!(
                    "{role} {shown} is the {} {} (the same file, or a link to it): writing it would destroy the \
                     input; choose another output path",
                    i.role,
                    i.path.display()
                ));
            }
            if let Some(o) = self.outputs.iter().find(|o| o.place.same(&me.place)) {
                return Err(format!(
                    "{role} {shown} is also the output {} {}: two outputs of one command cannot share a file; \
                     choose another path",
                    o.role,
                    o.path.display()
                ));
            }
        }
        self.outputs.push(me);
        Ok(if stream { Target::Stream(path.into()) } else { Target::File { path: resolved(path), shown: path.into() } })
    }
}

fn is_fifo(m: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        m.file_type().is_fifo()
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        false
    }
}

fn is_char_device(m: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        m.file_type().is_char_device()
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        false
    }
}

/// `path` with symlinks followed, when it is one (so the link's target is replaced, not the
/// link); as given otherwise.
fn resolved(path: &Path) -> PathBuf {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path).unwrap_or_else(|_| path.into()),
        _ => path.into(),
    }
}

/// The place of `path`: its own identity if it exists, and its directory's with its name.
fn place_of(path: &Path) -> Result<Place, String> {
    let real = resolved(path);
    let name = real.file_name().ok_or("it names no file")?.to_os_string();
    let dir = real.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let (dir_id, m) = identity(dir).ok_or_else(|| format!("its directory {} does not exist", dir.display()))?;
    if !m.is_dir() {
        return Err(format!("{} is not a directory", dir.display()));
    }
    Ok(Place { dir: dir_id, name, id: identity(path).map(|(id, _)| id) })
}

/// Temporary files staged now, removed by [`remove_staging`] when the process aborts.
static STAGING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn staging_list() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    STAGING.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Note `path`, a temporary file or directory of this process, for [`remove_staging`].
pub fn note_staging(path: &Path) {
    staging_list().push(path.into());
}

/// Forget `path`: it was renamed into place or removed.
pub fn forget_staging(path: &Path) {
    staging_list().retain(|p| p != path);
}

/// Remove every temporary file and directory this process staged and has not committed: a
/// panic hook's last act before the process exits without running destructors.
pub fn remove_staging() {
    for p in staging_list().drain(..) {
        let _ = std::fs::remove_file(&p).or_else(|_| std::fs::remove_dir_all(&p));
    }
}

/// A complete output waiting to be renamed into place ([`Staged::commit`]); dropped, it is
/// removed and the old file stays.
#[derive(Debug)]
pub struct Staged {
    tmp: Option<tempfile::TempPath>,
    to: PathBuf,
    shown: PathBuf,
}

impl Staged {
    /// Rename the output into place (nothing to do for a stream, written already).
    pub fn commit(mut self) -> Result<(), String> {
        let Some(tmp) = self.tmp.take() else { return Ok(()) };
        let path = tmp.to_path_buf();
        let r = tmp.persist(&self.to).map_err(|e| format!("cannot write {}: {}", self.shown.display(), e.error));
        forget_staging(&path);
        r
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(tmp) = &self.tmp {
            forget_staging(tmp);
        }
    }
}

impl Target {
    /// Write the output through `fill`: a file into a temporary file beside it, to be
    /// committed; a stream at once. Errors name the file.
    pub fn write(&self, fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<Staged, String> {
        match self {
            Target::Stream(path) => {
                let err = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
                let f = std::fs::OpenOptions::new().write(true).open(path).map_err(err)?;
                let mut w = BufWriter::with_capacity(1 << 20, f);
                fill(&mut w).map_err(err)?;
                w.flush().map_err(err)?;
                Ok(Staged { tmp: None, to: path.clone(), shown: path.clone() })
            }
            Target::File { path, shown } => {
                let err = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", shown.display());
                let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
                let mut builder = tempfile::Builder::new();
                let prefix = format!("{STAGING_PREFIX}{}-", std::process::id());
                builder.prefix(&prefix).suffix(".tmp");
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    builder.permissions(std::fs::Permissions::from_mode(0o644));
                }
                let mut tmp = builder.tempfile_in(dir).map_err(|e| err(&e))?;
                note_staging(tmp.path());
                let staged = |tmp: tempfile::NamedTempFile| Staged {
                    tmp: Some(tmp.into_temp_path()),
                    to: path.clone(),
                    shown: shown.clone(),
                };
                let written = {
                    let mut w = BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
                    fill(&mut w).and_then(|()| w.flush())
                };
                // Dropped without `commit`, the temporary file is removed.
                let s = staged(tmp);
                written.map_err(|e| err(&e))?;
                Ok(s)
            }
        }
    }

    /// The path as given, for messages.
    pub fn shown(&self) -> &Path {
        match self {
            Target::File { shown, .. } => shown,
            Target::Stream(p) => p,
        }
    }
}

/// Write `path`, the output `role`, through `fill` completely or not at all (checked against
/// no input: see [`Outputs`] for that).
pub fn write_file(
    role: &str,
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), String> {
    Outputs::new().file(role, path)?.write(fill)?.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(p: &Path) -> String {
        std::fs::read_to_string(p).unwrap()
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_partial_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bin");
        write_file("-o", &path, |w| w.write_all(b"old")).unwrap();
        let e = write_file("-o", &path, |w| {
            w.write_all(b"partial")?;
            Err(std::io::Error::other("disk full"))
        })
        .unwrap_err();
        assert!(e.contains("out.bin") && e.contains("disk full"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file left");
    }

    #[test]
    fn a_staged_file_replaces_the_old_one_only_when_committed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("snap");
        std::fs::write(&path, "old").unwrap();
        let t = Outputs::new().file("--save-state", &path).unwrap();
        let staged = t.write(|w| w.write_all(b"new")).unwrap();
        assert_eq!(text(&path), "old", "not before the commit");
        drop(staged);
        assert_eq!(text(&path), "old", "an uncommitted output is dropped");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        t.write(|w| w.write_all(b"new")).unwrap().commit().unwrap();
        assert_eq!(text(&path), "new");
    }

    #[test]
    fn an_output_is_refused_when_it_is_an_input_by_any_name() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("t.csv");
        std::fs::write(&input, "trace").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&input, dir.path().join("link.csv")).unwrap();
        std::fs::hard_link(&input, dir.path().join("hard.csv")).unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let dotted = sub.join("..").join("t.csv");
        let mut names = vec![input.clone(), dir.path().join("hard.csv"), dotted];
        if cfg!(unix) {
            names.push(dir.path().join("link.csv"));
        }
        for out in names {
            let mut o = Outputs::new();
            o.input("trace", &input);
            let e = o.file("--save-state", &out).unwrap_err();
            assert!(e.contains("is the trace") && e.contains("t.csv"), "{e}");
            assert_eq!(text(&input), "trace");
        }
    }

    #[test]
    fn two_outputs_of_one_command_may_not_share_a_file_even_before_it_exists() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let mut o = Outputs::new();
        o.file("--save-state", &dir.path().join("results.json")).unwrap();
        let e = o.replaced("--out", &dir.path().join("sub/../results.json")).unwrap_err();
        assert!(e.contains("also the output --save-state"), "{e}");
    }

    #[test]
    fn a_symlinked_output_replaces_its_target_and_keeps_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.toml");
        std::fs::write(&real, "old").unwrap();
        let link = dir.path().join("link.toml");
        #[cfg(unix)]
        std::os::unix::fs::symlink(&real, &link).unwrap();
        #[cfg(unix)]
        {
            write_file("-o", &link, |w| w.write_all(b"new")).unwrap();
            assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
            assert_eq!(text(&real), "new");
        }
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_fifos_are_written_through_or_refused_never_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        // A character device: written through, still a device after.
        write_file("-o", Path::new("/dev/null"), |w| w.write_all(b"x")).unwrap();
        assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
        // A FIFO: written through to its reader.
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path and a mode.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        write_file("-o", &fifo, |w| w.write_all(b"through the pipe")).unwrap();
        assert_eq!(reader.join().unwrap(), "through the pipe");
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo(), "still a FIFO");
        // Replaced whole, a FIFO would be gone: refused.
        let e = Outputs::new().replaced("--out", &fifo).unwrap_err();
        assert!(e.contains("FIFO") && e.contains("remove it"), "{e}");
        // A directory is no file.
        let e = Outputs::new().file("-o", dir.path()).unwrap_err();
        assert!(e.contains("a directory"), "{e}");
        // No temporary file was left.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_missing_directory_is_named() {
        let e = Outputs::new().file("-o", Path::new("/nonexistent-ftlsim-dir/x.toml")).unwrap_err();
        assert!(e.contains("/nonexistent-ftlsim-dir") && e.contains("does not exist"), "{e}");
    }
}
