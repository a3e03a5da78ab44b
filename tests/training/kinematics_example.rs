//! The example `12-kinematics`, included as a module: inverse kinematics reaches its target pose,
//! the `#[differentiable]` pose error's gradient is the dual Jacobian's `Jᵀr`, and the ridge
//! regression's tuned `λ` is where its validation error is least.

#[allow(dead_code, reason = "the example's printing is not used here")]
#[path = "../../examples/12-kinematics.rs"]
mod kinematics;

use autograd_core::forward::{Dual, jacobian_nalgebra};
use autograd_core::prelude::*;
use kinematics::{JOINTS, Pose};
use nalgebra::SVector;

fn target() -> Pose {
    let (position, orientation) =
        kinematics::forward_kinematics(&SVector::<f64, JOINTS>::from(kinematics::TARGET_ANGLES));
    Pose {
        position,
        orientation,
    }
}

#[test]
fn forward_kinematics_by_hand() {
    // All joints at zero: the links add up along z then x, and the hand is not turned.
    let (p, r) = kinematics::forward_kinematics(&SVector::<f64, JOINTS>::zeros());
    assert!(
        (p.x - 0.7).abs() < 1e-15 && p.y == 0.0 && (p.z - 0.9).abs() < 1e-15,
        "{p}"
    );
    assert_eq!(r, nalgebra::Matrix3::identity());
    // The first joint (about z) by a right angle turns the whole arm onto y.
    let mut q = SVector::<f64, JOINTS>::zeros();
    q[0] = std::f64::consts::FRAC_PI_2;
    let (p, _) = kinematics::forward_kinematics(&q);
    assert!((p.x - 0.0).abs() < 1e-15 && (p.y - 0.7).abs() < 1e-15 && (p.z - 0.9).abs() < 1e-15);
}

#[test]
fn inverse_kinematics_reaches_the_target_pose() {
    let target = target();
    for start in [[0.1; JOINTS], [0.5, 0.1, 0.4, -0.2, -0.1, 0.3]] {
        let (q, error, iterations) =
            kinematics::inverse_kinematics(&target, SVector::<f64, JOINTS>::from(start));
        assert!(error < 1e-9, "pose error {error} after {iterations} steps");
        assert!(kinematics::pose_error(&q, &target).norm() < 1e-9);
    }
}

#[test]
fn the_generated_gradient_is_the_dual_jacobians() {
    let target = target();
    let arm = kinematics::ArmTensors::new(&target);
    for point in [[0.1; JOINTS], [1.0, -0.7, 0.2, 2.0, 0.9, -1.3]] {
        let q = SVector::<f64, JOINTS>::from(point);
        let (r, j) = jacobian_nalgebra(
            |q: &SVector<Dual<f64>, JOINTS>| kinematics::pose_error(q, &target),
            &q,
        );
        let expected = j.transpose() * r;
        let (loss, grad) = kinematics::pose_loss_grad(&Tensor::from(q), &arm);
        assert!((loss - 0.5 * r.norm_squared()).abs() <= 1e-14 * loss);
        assert_eq!(loss, kinematics::pose_loss(&Tensor::from(q), &arm));
        for (g, e) in grad.q.to_array().iter().zip(expected.iter()) {
            assert!(
                (g - e).abs() <= 1e-12 * e.abs().max(1e-3),
                "{g} against {e}"
            );
        }
    }
}

#[test]
fn the_tuned_lambda_minimizes_the_validation_error() {
    let (ridge, _) = kinematics::ridge_data().expect("the diabetes data set is committed");
    let tuned = kinematics::tune_ridge(&ridge);
    // The gradient against central differences where the descent starts.
    let (gradient, central) = tuned.start_check;
    assert!(
        (gradient - central).abs() <= 1e-6 * central.abs(),
        "{gradient} against {central}"
    );
    // The minimum by a fine grid on the function itself: the descent ends within a grid step.
    let error = |t: f64| kinematics::validation_error(&Tensor::new(t), &ridge);
    let best = (0..=8000)
        .map(|k| f64::from(k) * 1e-3)
        .min_by(|a, b| error(*a).total_cmp(&error(*b)))
        .expect("a grid");
    assert!(
        (tuned.log_lambda - best).abs() <= 1e-3,
        "descent {} grid {best}",
        tuned.log_lambda
    );
    assert!(tuned.gradient.abs() < 1e-10);
    assert!(tuned.validation_error <= error(best));
}

#[test]
fn the_example_runs() {
    kinematics::main();
}
