//! Anomaly mode covers generated gradients: with `detect_anomaly` on, the first op of a
//! `#[differentiable]` function whose output or cotangent is not finite panics with the op's name
//! and the line of the user's code that called it.

use autograd_core::differentiable;
use autograd_core::prelude::*;
use autograd_core::tape::detect_anomaly;
use std::panic::{AssertUnwindSafe, catch_unwind};

#[differentiable]
fn log_sum(x: &Tensor![f64; 2]) -> f64 {
    let y = x * 2.0;
    let z = y.ln(); // LN_LINE
    z.sum().item()
}

#[differentiable]
fn root_sum(x: &Tensor![f64; 2]) -> f64 {
    let r = x.sqrt(); // SQRT_LINE
    let s = r * 3.0;
    s.sum().item()
}

/// The line of this file holding `marker`.
fn line_of(marker: &str) -> usize {
    include_str!("macro_anomaly.rs")
        .lines()
        .position(|l| l.contains(marker) && l.contains("let "))
        .expect("marker")
        + 1
}

fn panic_message(f: impl FnOnce()) -> String {
    let err = catch_unwind(AssertUnwindSafe(f)).expect_err("anomaly mode should stop the sweep");
    err.downcast_ref::<String>().cloned().unwrap_or_default()
}

#[test]
fn a_non_finite_forward_value_names_the_op_and_the_users_line() {
    let x = Tensor::new([1.0, -1.0]); // ln(-2) is NaN
    let msg = panic_message(|| {
        detect_anomaly(|| log_sum_grad(&x));
    });
    let at = format!("macro_anomaly.rs:{}", line_of("LN_LINE"));
    assert!(
        msg.contains("`ln`") && msg.contains("non-finite output"),
        "{msg}"
    );
    assert!(msg.contains(&at), "expected {at} in {msg}");
}

#[test]
fn a_non_finite_cotangent_names_the_op_and_the_users_line() {
    // sqrt(0) = 0 is finite; its derivative 1 / (2 sqrt(0)) is not.
    let x = Tensor::new([0.0, 4.0]);
    let msg = panic_message(|| {
        detect_anomaly(|| root_sum_grad(&x));
    });
    let at = format!("macro_anomaly.rs:{}", line_of("SQRT_LINE"));
    assert!(
        msg.contains("VJP of `sqrt`") && msg.contains("input 0"),
        "{msg}"
    );
    assert!(msg.contains(&at), "expected {at} in {msg}");
}

#[test]
fn without_anomaly_mode_the_values_flow_through() {
    let (v, g) = root_sum_grad(&Tensor::new([0.0, 4.0]));
    assert_eq!(v, 6.0);
    assert_eq!(g.x.to_array()[0], f64::INFINITY);
    assert_eq!(g.x.to_array()[1], 0.75);
    let (v, _) = log_sum_grad(&Tensor::new([1.0, -1.0]));
    assert!(v.is_nan());
}
