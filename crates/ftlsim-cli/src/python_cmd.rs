//! `ftlsim sweep` and `ftlsim report`: sweeps (Dask, Parquet) and reports (plots) live in the
//! Python package, so these subcommands hand their arguments to `python -m ftlsim`.

use clap::Args;
use ftlsim_core::error::SimError;
use std::path::PathBuf;
use std::process::Command;

/// Arguments passed through to `python -m ftlsim sweep|report` (`--help` lists them).
#[derive(Args, Debug)]
#[command(disable_help_flag = true)]
pub struct PythonArgs {
    /// Arguments of the Python command.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

/// The interpreter: `FTLSIM_PYTHON`, else the repository's `.venv` (where `make python`
/// installs the package) when this binary was built in the repository, else `python3`.
fn interpreter() -> PathBuf {
    if let Some(p) = std::env::var_os("FTLSIM_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.ancestors().nth(3).map(|root| root.join(".venv/bin/python")))
        .filter(|p| p.exists());
    venv.unwrap_or_else(|| PathBuf::from("python3"))
}

/// Run `python -m ftlsim <cmd> <args>`; its exit code becomes ours.
pub fn run(cmd: &str, a: &PythonArgs) -> Result<u8, SimError> {
    let python = interpreter();
    let check = Command::new(&python).args(["-c", "import ftlsim"]).output();
    match check {
        Err(e) => {
            return Err(SimError::Input(format!(
                "`ftlsim {cmd}` needs Python with the ftlsim package; cannot start {}: {e} (set FTLSIM_PYTHON)",
                python.display()
            )))
        }
        Ok(o) if !o.status.success() => {
            return Err(SimError::Input(format!(
                "`ftlsim {cmd}` needs the Python package ftlsim, which {} cannot import: run `make python` \
                 (or `pip install .` in the repository), or point FTLSIM_PYTHON at an interpreter that has it\n{}",
                python.display(),
                String::from_utf8_lossy(&o.stderr).trim_end()
            )))
        }
        Ok(_) => {}
    }
    let mut command = Command::new(&python);
    command.args(["-m", "ftlsim", cmd]).args(&a.args);
    // Python takes this process's place, so Ctrl-C and the exit code are its own (a child
    // would outlive a parent killed by the signal).
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let e = command.exec();
        Err(SimError::Input(format!("cannot start {}: {e}", python.display())))
    }
    #[cfg(not(unix))]
    {
        let status =
            command.status().map_err(|e| SimError::Input(format!("cannot start {}: {e}", python.display())))?;
        Ok(status.code().map_or(2, |c| c.clamp(0, 255) as u8))
    }
}
