//! WAFTL's idle-time prediction for offline GC (seed 002 Sec. III-D, Eqs. 3-4).
//!
//! Eq. 3: t_pred(i) = alpha * t_real(i-1) + (1 - alpha) * t_pred(i-1), an exponentially
//! weighted moving average of the idle periods seen. Eq. 4: the idle period about to start may
//! take N_i = t_pred(i) / T_erasure block erases, none when t_pred(i) < T_erasure ("If
//! predicted idle period is less than T_erasure, block erasure is not initiated", L231); the
//! quotient is taken whole (an erase cannot be cut short). The paper gives no alpha and no
//! first prediction: alpha is a config value (0.5 by default) and the first prediction is 0,
//! so offline GC waits until one idle period has been seen. The mean absolute error of the
//! predictions is kept for the `idle-prediction error` metric.

use serde::{Deserialize, Serialize};

/// The EWMA predictor of Eq. 3 with the erase budget of Eq. 4.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IdlePredictor {
    alpha: f64,
    predicted_ns: f64,
    periods: u64,
    abs_error_ns: f64,
}

impl IdlePredictor {
    /// A predictor with adjust factor `alpha` in (0, 1].
    pub fn new(alpha: f64) -> IdlePredictor {
        assert!(alpha > 0.0 && alpha <= 1.0, "alpha {alpha} outside (0, 1]");
        IdlePredictor { alpha, predicted_ns: 0.0, periods: 0, abs_error_ns: 0.0 }
    }

    /// The predicted length of the next idle period, ns.
    pub fn predicted_ns(&self) -> f64 {
        self.predicted_ns
    }

    /// Eq. 4: block erases the next idle period may take, each `t_erase_ns` long.
    pub fn erases_for(&self, t_erase_ns: u64) -> u32 {
        assert!(t_erase_ns > 0, "an erase takes time");
        let t = self.predicted_ns;
        if t < t_erase_ns as f64 {
            return 0;
        }
        (t / t_erase_ns as f64).floor().min(f64::from(u32::MAX)) as u32
    }

    /// Eq. 3: an idle period of `actual_ns` ended; the prediction for the next one moves
    /// towards it, and the error of the one it replaces is booked.
    pub fn observe(&mut self, actual_ns: u64) {
        let actual = actual_ns as f64;
        self.abs_error_ns += (actual - self.predicted_ns).abs();
        self.periods += 1;
        self.predicted_ns = self.alpha * actual + (1.0 - self.alpha) * self.predicted_ns;
    }

    /// Idle periods observed.
    pub fn periods(&self) -> u64 {
        self.periods
    }

    /// Mean absolute difference between each idle period and its prediction, ns (0 before any).
    pub fn mean_abs_error_ns(&self) -> f64 {
        if self.periods == 0 {
            0.0
        } else {
            self.abs_error_ns / self.periods as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eq3_moves_the_prediction_towards_each_idle_period() {
        let mut p = IdlePredictor::new(0.5);
        assert_eq!(p.predicted_ns(), 0.0);
        p.observe(1_000);
        assert_eq!(p.predicted_ns(), 500.0);
        p.observe(1_000);
        assert_eq!(p.predicted_ns(), 750.0);
        p.observe(3_000);
        assert_eq!(p.predicted_ns(), 1_875.0);
        // Errors: |1000 - 0| + |1000 - 500| + |3000 - 750| = 3750 over 3 periods.
        assert_eq!(p.mean_abs_error_ns(), 1_250.0);
        let mut all = IdlePredictor::new(1.0);
        all.observe(42);
        assert_eq!(all.predicted_ns(), 42.0, "alpha 1 predicts the last period");
    }

    #[test]
    fn eq4_allows_whole_erases_and_none_below_one_erase_time() {
        let mut p = IdlePredictor::new(1.0);
        assert_eq!(p.erases_for(1_500_000), 0, "nothing predicted yet");
        p.observe(1_499_999);
        assert_eq!(p.erases_for(1_500_000), 0, "shorter than one erase: none started");
        p.observe(1_500_000);
        assert_eq!(p.erases_for(1_500_000), 1);
        p.observe(4_499_999);
        assert_eq!(p.erases_for(1_500_000), 2, "the quotient is taken whole");
    }
}
