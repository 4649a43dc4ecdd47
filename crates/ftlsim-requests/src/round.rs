//! Rounding for reports.

/// Round to 6 significant decimals so that JSON output is stable and readable.
pub fn r6(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return if x.is_finite() { 0.0 } else { x };
    }
    let scale = 10f64.powi(5 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}
