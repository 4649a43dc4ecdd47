//! Conversions between the core's types and Python's: errors to exceptions (one per core
//! error), JSON to Python objects, the time series to columns, Python's `trace_options` dict
//! to `TraceOptions`.

use crate::{ConfigError, InputError, SimulationError, SnapshotError, TraceError, WorkloadError};
use ftlsim_core::error::{ConfigError as CoreConfigError, SimError};
use ftlsim_core::metrics::IntervalRow;
use ftlsim_requests::trace::{Overflow, ParserOptions, TraceFormat, TraceOptions};
use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The Python exception for a simulator error, with the offending key, file, line and field
/// as attributes where the error names them.
pub fn to_py(py: Python<'_>, e: SimError) -> PyErr {
    let msg = e.to_string();
    let err = match &e {
        SimError::Interrupted => return PyKeyboardInterrupt::new_err("ftlsim run interrupted"),
        SimError::Config(_) => ConfigError::new_err(msg),
        SimError::Workload(_) => WorkloadError::new_err(msg),
        SimError::Request(_) | SimError::Input(_) => InputError::new_err(msg),
        SimError::Trace(_) => TraceError::new_err(msg),
        SimError::Snapshot(_) => SnapshotError::new_err(msg),
        _ => SimulationError::new_err(msg),
    };
    let value = err.value(py);
    // Setting an attribute on a fresh exception object does not fail.
    let _ = match &e {
        SimError::Config(CoreConfigError::Invalid { key, .. } | CoreConfigError::Override { key, .. }) => {
            value.setattr("key", key)
        }
        SimError::Config(_) => value.setattr("key", py.None()),
        SimError::Workload(w) => value.setattr("key", &w.key),
        SimError::Trace(t) => value
            .setattr("file", &t.file)
            .and_then(|_| value.setattr("line", t.line))
            .and_then(|_| value.setattr("field", &t.field)),
        _ => Ok(()),
    };
    err
}

/// JSON to Python objects (dicts, lists, numbers, strings, None).
pub fn json_to_py(py: Python<'_>, v: &serde_json::Value) -> PyResult<Py<PyAny>> {
    Ok(pythonize::pythonize(py, v)?.unbind())
}

/// The time series as columns (`{name: [values]}`), ready for a DataFrame: the drive's
/// columns, then the FTL's own.
pub fn rows_to_columns(py: Python<'_>, rows: &[IntervalRow]) -> PyResult<Py<PyAny>> {
    let d = PyDict::new(py);
    macro_rules! col {
        ($($f:ident),*) => {$(
            d.set_item(stringify!($f), rows.iter().map(|r| r.$f).collect::<Vec<_>>())?;
        )*};
    }
    col!(
        t_end_ns,
        requests,
        iops,
        throughput_mb_per_s,
        mean_latency_us,
        max_latency_us,
        free_blocks,
        gc_collections,
        gc_pages_moved,
        flash_programs,
        write_buffer_utilisation
    );
    assert_eq!(d.len(), IntervalRow::COLUMNS.len(), "a column of IntervalRow is missing here");
    if let Some(first) = rows.first() {
        for (i, (name, _)) in first.ftl.iter().enumerate() {
            d.set_item(*name, rows.iter().map(|r| r.ftl[i].1).collect::<Vec<_>>())?;
        }
        for (i, t) in first.tenants.iter().enumerate() {
            let col = |c: &str| format!("tenant.{}.{c}", t.name);
            d.set_item(col("requests"), rows.iter().map(|r| r.tenants[i].requests).collect::<Vec<_>>())?;
            d.set_item(col("iops"), rows.iter().map(|r| r.tenants[i].iops).collect::<Vec<_>>())?;
            d.set_item(col("mean_latency_us"), rows.iter().map(|r| r.tenants[i].mean_latency_us).collect::<Vec<_>>())?;
        }
    }
    Ok(d.into_any().unbind())
}

fn get<'py, T>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<T>>
where
    T: for<'a> FromPyObject<'a, 'py>,
{
    match d.get_item(key)? {
        Some(v) if !v.is_none() => Ok(Some(v.extract::<T>().map_err(|e| {
            let e: PyErr = e.into();
            PyValueError::new_err(format!("trace_options[{key:?}]: {e}"))
        })?)),
        _ => Ok(None),
    }
}

/// `TraceOptions` from Python's `trace_options` dict (the CLI's trace flags by name).
pub fn parse_trace_options(py: Python<'_>, d: Option<&Bound<'_, PyDict>>) -> PyResult<(TraceOptions, Option<u32>)> {
    let mut o = TraceOptions::default();
    let Some(d) = d else { return Ok((o, None)) };
    const KEYS: [&str; 12] = [
        "format",
        "device",
        "overflow",
        "speed",
        "qd",
        "reorder_window",
        "skip",
        "max_requests",
        "time_window",
        "repeat",
        "skip_bad_lines",
        "blkparse_queue",
    ];
    for k in d.keys() {
        let k: String = k.extract()?;
        if !KEYS.contains(&k.as_str()) {
            return Err(PyValueError::new_err(format!(
                "trace_options: unknown key `{k}` (known: {})",
                KEYS.join(", ")
            )));
        }
    }
    if let Some(f) = get::<String>(d, "format")? {
        o.format = Some(
            f.parse::<TraceFormat>().map_err(|e| PyValueError::new_err(format!("trace_options[\"format\"]: {e}")))?,
        );
    }
    o.device = get(d, "device")?;
    if let Some(ov) = get::<String>(d, "overflow")? {
        o.overflow = ov
            .parse::<Overflow>()
            .map_err(|e| PyValueError::new_err(format!("trace_options[\"overflow\"]: `{ov}`: {e}")))?;
    }
    o.speed = get(d, "speed")?.unwrap_or(o.speed);
    o.reorder_window = get(d, "reorder_window")?.unwrap_or(o.reorder_window);
    o.skip = get(d, "skip")?.unwrap_or(o.skip);
    o.max_requests = get(d, "max_requests")?;
    if let Some(w) = get::<String>(d, "time_window")? {
        o.time_window_ns = Some(ftlsim_run::time_window_ns(&w).map_err(|e| to_py(py, e))?);
    }
    o.repeat = get(d, "repeat")?.unwrap_or(o.repeat);
    o.skip_bad_lines = get(d, "skip_bad_lines")?.unwrap_or(false);
    if get::<bool>(d, "blkparse_queue")?.unwrap_or(false) {
        o.parser = ParserOptions { blkparse_event: b'Q' };
    }
    Ok((o, get(d, "qd")?))
}
