//! Gradients of scientific code: a robot arm's inverse kinematics, and a regularization tuned
//! through a linear solve.
//!
//! **Inverse kinematics.** A six-joint arm (axes z, y, y, z, y, z, as an industrial arm's) has
//! its forward kinematics written as ordinary nalgebra code (`Matrix3`, `Vector3`), generic over
//! the element type: on `f64` it gives the hand's pose, on dual numbers its Jacobian
//! (`forward::jacobian_nalgebra`, one pass per joint). Damped least squares (Levenberg-Marquardt)
//! then steps the joints by `(JᵀJ + μI) δ = -Jᵀr`, solved with the rule library's `solve`, until
//! the hand reaches a target pose: position and orientation to 1e-9. The same pose error is then
//! written a second time as a `#[differentiable]` function over tensors (each joint's rotation by
//! Rodrigues' formula, `I + sin θ K + (1 - cos θ) K²`), and its generated gradient is checked
//! against the dual Jacobian's `Jᵀr`.
//!
//! nalgebra's `Isometry3` and `UnitQuaternion` need `RealField` of their element, which `Dual`
//! does not implement (simba's `SimdValue` requires two `unsafe fn`s, and this project forbids
//! unsafe code), so the rotations here are `Matrix3`s built from `sin` and `cos`.
//!
//! **Ridge regression.** On the diabetes data (`examples/data/diabetes.csv`), the closed-form
//! ridge weights `w(λ) = (XᵀX + λI)⁻¹ Xᵀy` of 300 training rows are a differentiable function of
//! `λ` through `solve`; the validation error of the next 53 rows is minimized over `ln λ` by
//! gradient descent, checked against central differences and a grid, and the weights are scored
//! on the last 89 rows. (Tuned on 53 rows, `λ` follows their noise: its test R² is below least
//! squares'. The point is the gradient through `solve`, which a larger validation set would put to
//! better use.)
//!
//! ```text
//! cargo run --release --example 12-kinematics
//! ```

#![allow(clippy::cast_precision_loss, reason = "row counts are far below 2^53")]

use autograd_core::data::{Regression, Standardize, Targets};
use autograd_core::differentiable;
use autograd_core::forward::{Dual, jacobian_nalgebra};
use autograd_core::prelude::*;
use nalgebra::{
    ClosedAddAssign, ClosedMulAssign, ClosedSubAssign, Matrix3, SMatrix, SVector, Scalar, Vector3,
};
use num_traits::{One, Zero};

/// The joints.
pub const JOINTS: usize = 6;

/// A joint's axis of rotation, in the frame of the link before it.
#[derive(Clone, Copy, Debug)]
pub enum Axis {
    /// About y.
    Y,
    /// About z.
    Z,
}

/// The axes of the six joints.
pub const AXES: [Axis; JOINTS] = [Axis::Z, Axis::Y, Axis::Y, Axis::Z, Axis::Y, Axis::Z];

/// Each link's offset (m) in the frame of the joint before it.
pub const LINKS: [[f64; 3]; JOINTS] = [
    [0.0, 0.0, 0.4],
    [0.0, 0.0, 0.5],
    [0.45, 0.0, 0.0],
    [0.1, 0.0, 0.0],
    [0.1, 0.0, 0.0],
    [0.05, 0.0, 0.0],
];

/// The element types the forward kinematics runs on: `f64`, and `Dual<f64>` for its Jacobian.
pub trait Real:
    Float + Scalar + Copy + Zero + One + ClosedAddAssign + ClosedSubAssign + ClosedMulAssign
{
}

impl<T> Real for T where
    T: Float + Scalar + Copy + Zero + One + ClosedAddAssign + ClosedSubAssign + ClosedMulAssign
{
}

/// The cross-product matrix `K` of a unit axis: `K v = axis × v`.
#[must_use]
pub fn cross_matrix(axis: Axis) -> [[f64; 3]; 3] {
    match axis {
        Axis::Y => [[0.0, 0.0, 1.0], [0.0, 0.0, 0.0], [-1.0, 0.0, 0.0]],
        Axis::Z => [[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
    }
}

/// The rotation by `angle` about `axis`.
fn rotation<T: Real>(axis: Axis, angle: T) -> Matrix3<T> {
    let (s, c) = (angle.sin(), angle.cos());
    let (zero, one) = (T::zero(), T::one());
    match axis {
        Axis::Y => Matrix3::new(c, zero, s, zero, one, zero, -s, zero, c),
        Axis::Z => Matrix3::new(c, -s, zero, s, c, zero, zero, zero, one),
    }
}

/// The hand's position and orientation for joint angles `q`: ordinary nalgebra code.
pub fn forward_kinematics<T: Real>(q: &SVector<T, JOINTS>) -> (Vector3<T>, Matrix3<T>) {
    let mut orientation = Matrix3::<T>::identity();
    let mut position = Vector3::<T>::zeros();
    for (joint, axis) in AXES.iter().enumerate() {
        orientation *= rotation(*axis, q[joint]);
        let link = Vector3::from(LINKS[joint].map(T::from_f64));
        position += orientation * link;
    }
    (position, orientation)
}

/// A target pose: a position and an orientation.
#[derive(Clone, Copy, Debug)]
pub struct Pose {
    /// The position (m).
    pub position: Vector3<f64>,
    /// The orientation.
    pub orientation: Matrix3<f64>,
}

/// The pose error `r(q)`: the position error and the orientation error `vee(S)`, with
/// `S = (Mᵀ - M)/2`'s skew part of `M = R*ᵀ R` (zero exactly when `R = R*`, and the rotation
/// vector of the error to first order).
pub fn pose_error<T: Real>(q: &SVector<T, JOINTS>, target: &Pose) -> SVector<T, 6> {
    let (position, orientation) = forward_kinematics(q);
    let m = target.orientation.map(T::from_f64).transpose() * orientation;
    let half = T::from_f64(0.5);
    let dp = position - target.position.map(T::from_f64);
    SVector::<T, 6>::from([
        dp[0],
        dp[1],
        dp[2],
        (m[(2, 1)] - m[(1, 2)]) * half,
        (m[(0, 2)] - m[(2, 0)]) * half,
        (m[(1, 0)] - m[(0, 1)]) * half,
    ])
}

/// Damped least squares from `q`: steps `(JᵀJ + μI) δ = -Jᵀr` (the Jacobian by forward mode,
/// the step by the rule library's `solve`), growing `μ` when a step fails and shrinking it when
/// one succeeds. Returns the joint angles, the final error norm and the iterations taken.
#[must_use]
pub fn inverse_kinematics(
    target: &Pose,
    mut q: SVector<f64, JOINTS>,
) -> (SVector<f64, JOINTS>, f64, usize) {
    let cost = |q: &SVector<f64, JOINTS>| pose_error(q, target).norm_squared();
    let mut mu = 1e-3;
    for iteration in 0..200 {
        let (r, j) = jacobian_nalgebra(|q: &SVector<Dual<f64>, JOINTS>| pose_error(q, target), &q);
        if r.norm() < 1e-12 {
            return (q, r.norm(), iteration);
        }
        let jtj = j.transpose() * j;
        let normal: SMatrix<f64, JOINTS, JOINTS> =
            jtj + SMatrix::<f64, JOINTS, JOINTS>::identity() * mu;
        let a: Tensor![f64; JOINTS, JOINTS] = Tensor::from(normal);
        let b: Tensor![f64; JOINTS] = Tensor::from(-(j.transpose() * r));
        let step = SVector::<f64, JOINTS>::from(a.solve(&b).to_array());
        let candidate = q + step;
        if cost(&candidate) < r.norm_squared() {
            q = candidate;
            mu = (mu * 0.3).max(1e-12);
        } else {
            mu *= 10.0;
        }
    }
    let error = pose_error(&q, target).norm();
    (q, error, 200)
}

/// The arm's constants as tensors, for the `#[differentiable]` pose error: per joint, the
/// one-hot row that picks its angle, its axis's `K` and `K²`, and its link.
#[derive(Clone, Debug)]
pub struct ArmTensors {
    /// Row `i` is 1 at joint `i`.
    pub pick: [Tensor![f64; JOINTS]; JOINTS],
    /// Each joint's cross-product matrix `K`.
    pub k: [Tensor![f64; 3, 3]; JOINTS],
    /// Each joint's `K²`.
    pub k2: [Tensor![f64; 3, 3]; JOINTS],
    /// Each link's offset, a column.
    pub link: [Tensor![f64; 3, 1]; JOINTS],
    /// The identity.
    pub eye: Tensor![f64; 3, 3],
    /// The origin, a column of zeros.
    pub origin: Tensor![f64; 3, 1],
    /// The target position, a column.
    pub target_position: Tensor![f64; 3, 1],
    /// The target orientation.
    pub target_orientation: Tensor![f64; 3, 3],
}

impl ArmTensors {
    /// The arm and `target` as tensors.
    #[must_use]
    pub fn new(target: &Pose) -> Self {
        let k = AXES.map(|axis| Tensor::new(cross_matrix(axis)));
        Self {
            pick: std::array::from_fn(|i| {
                Tensor::new(std::array::from_fn(|j| if i == j { 1.0 } else { 0.0 }))
            }),
            k2: k.clone().map(|k| k.matmul(&k)),
            k,
            link: LINKS.map(|l| Tensor::new(l.map(|x| [x]))),
            eye: Tensor::new([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]),
            origin: Tensor::zeros(),
            target_position: Tensor::new([
                [target.position.x],
                [target.position.y],
                [target.position.z],
            ]),
            target_orientation: Tensor::from(target.orientation),
        }
    }
}

/// Half the squared pose error, `½ |r(q)|²`, written over tensors: each joint's rotation by
/// Rodrigues' formula. `#[differentiable]` generates `pose_loss_grad` beside it.
#[differentiable(wrt(q))]
#[must_use]
pub fn pose_loss(q: &Tensor![f64; JOINTS], arm: &ArmTensors) -> f64 {
    let mut orientation = arm.eye.clone();
    let mut position = arm.origin.clone();
    for i in 0..JOINTS {
        let angle = (q * &arm.pick[i]).sum();
        let turn = &arm.eye + &arm.k[i] * angle.sin() + &arm.k2[i] * (1.0 - angle.cos());
        orientation = orientation.matmul(&turn);
        position += orientation.matmul(&arm.link[i]);
    }
    let dp = position - &arm.target_position;
    let m = arm.target_orientation.t().matmul(&orientation);
    let skew = (&m - m.t()) * 0.5;
    // |vee(S)|² is half of S's squared Frobenius norm.
    (dp.square().sum() * 0.5 + skew.square().sum() * 0.25).item()
}

/// The first rows fit the ridge weights, the next ones choose `λ`; the rest test.
pub const FIT: usize = 300;
/// The validation rows.
pub const VALIDATE: usize = 53;
/// The measurements per patient.
pub const FEATURES: usize = 10;

/// The standardized data's pieces the validation error needs: `XᵀX` and `Xᵀy` of the fitting
/// rows, and the validation rows.
#[derive(Clone, Debug)]
pub struct Ridge {
    /// `XᵀX` of the fitting rows.
    pub xtx: Tensor![f64; FEATURES, FEATURES],
    /// `Xᵀy` of the fitting rows.
    pub xty: Tensor![f64; FEATURES, 1],
    /// The identity.
    pub eye: Tensor![f64; FEATURES, FEATURES],
    /// The validation rows' features.
    pub x_validate: Tensor![f64; VALIDATE, FEATURES],
    /// The validation rows' targets.
    pub y_validate: Tensor![f64; VALIDATE, 1],
}

/// The validation error of the ridge weights at `λ = exp(log_lambda)`:
/// `w = (XᵀX + λI)⁻¹ Xᵀy` through `solve`, then the mean squared error of `X_val w`.
#[differentiable(wrt(log_lambda))]
#[must_use]
pub fn validation_error(log_lambda: &Tensor![f64], ridge: &Ridge) -> f64 {
    let a = &ridge.xtx + &ridge.eye * log_lambda.exp();
    let w = a.solve(&ridge.xty);
    ridge.x_validate.matmul(&w).mse(&ridge.y_validate).item()
}

/// The test rows: their features and targets.
pub type TestRows = (Vec<[f64; FEATURES]>, Vec<f64>);

/// The diabetes data, standardized with the fitting rows' statistics, as [`Ridge`]'s pieces and
/// the test rows (features, targets).
///
/// # Errors
/// The loader's error, naming the line and column of a bad cell.
pub fn ridge_data() -> Result<(Ridge, TestRows), String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data/diabetes.csv");
    let mut data: Regression<f64, FEATURES, 1> =
        Regression::read_csv(path, &Targets::named(&["target"]))
            .map_err(|e| format!("{path}: {e}"))?;
    let (fit, _) = data.clone().split_at(FIT);
    data.standardize_features(&Standardize::fit(fit.features()));
    data.standardize_targets(&Standardize::fit(fit.targets()));
    let (fit, rest) = data.split_at(FIT);
    let (validate, test) = rest.split_at(VALIDATE);
    let mut xtx = [[0.0; FEATURES]; FEATURES];
    let mut xty = [[0.0]; FEATURES];
    for (x, y) in fit.features().iter().zip(fit.targets()) {
        for i in 0..FEATURES {
            for j in 0..FEATURES {
                xtx[i][j] += x[i] * x[j];
            }
            xty[i][0] += x[i] * y[0];
        }
    }
    let ridge = Ridge {
        xtx: Tensor::new(xtx),
        xty: Tensor::new(xty),
        eye: Tensor::new(std::array::from_fn(|i| {
            std::array::from_fn(|j| if i == j { 1.0 } else { 0.0 })
        })),
        x_validate: Tensor::new(std::array::from_fn(|r| validate.features()[r])),
        y_validate: Tensor::new(std::array::from_fn(|r| validate.targets()[r])),
    };
    let test_y = test.targets().iter().map(|t| t[0]).collect();
    Ok((ridge, (test.features().to_vec(), test_y)))
}

/// What [`tune_ridge`] found.
#[derive(Clone, Copy, Debug)]
pub struct Tuned {
    /// The chosen `ln λ`.
    pub log_lambda: f64,
    /// Its validation error.
    pub validation_error: f64,
    /// Its gradient, and central differences of the validation error there (step 1e-5).
    pub gradient: f64,
    /// Central differences at the start, beside the gradient there.
    pub start_check: (f64, f64),
}

/// Where the descent on `ln λ` starts (`λ ≈ 20`: below, the validation error is nearly flat), its
/// step and its number of steps.
pub const DESCENT: (f64, f64, usize) = (3.0, 20.0, 100);

/// Gradient descent on `ln λ`: [`DESCENT`]'s steps, each `ln λ -= step · d(error)/d(ln λ)`.
#[must_use]
pub fn tune_ridge(ridge: &Ridge) -> Tuned {
    let at = |t: f64| Tensor::<f64, ()>::new(t);
    let central = |t: f64| {
        let h = 1e-5;
        (validation_error(&at(t + h), ridge) - validation_error(&at(t - h), ridge)) / (2.0 * h)
    };
    let (start, step, steps) = DESCENT;
    let (_, g0) = validation_error_grad(&at(start), ridge);
    let start_check = (g0.log_lambda.item(), central(start));
    let mut t = start;
    for _ in 0..steps {
        let (_, g) = validation_error_grad(&at(t), ridge);
        t -= step * g.log_lambda.item();
    }
    let (error, g) = validation_error_grad(&at(t), ridge);
    Tuned {
        log_lambda: t,
        validation_error: error,
        gradient: g.log_lambda.item(),
        start_check,
    }
}

/// The ridge weights at `λ`, as plain numbers.
#[must_use]
pub fn ridge_weights(ridge: &Ridge, lambda: f64) -> [f64; FEATURES] {
    let a = &ridge.xtx + &ridge.eye * lambda;
    a.solve(&ridge.xty).to_array().map(|w| w[0])
}

/// The joint angles the target pose is made from, and the start of the search.
pub const TARGET_ANGLES: [f64; JOINTS] = [0.4, -0.3, 0.8, 0.2, -0.5, 0.6];

/// Runs both parts and prints what they found.
pub fn main() {
    // Inverse kinematics.
    let q_target = SVector::<f64, JOINTS>::from(TARGET_ANGLES);
    let (position, orientation) = forward_kinematics(&q_target);
    let target = Pose {
        position,
        orientation,
    };
    let start = SVector::<f64, JOINTS>::from([0.1; JOINTS]);
    let (q, error, iterations) = inverse_kinematics(&target, start);
    println!(
        "inverse kinematics: pose error {error:.2e} after {iterations} damped least-squares steps"
    );
    println!("  joint angles {:?}", q.as_slice());

    // The tensor version's gradient against the dual Jacobian's Jᵀr, at the start.
    let arm = ArmTensors::new(&target);
    let (r, j) = jacobian_nalgebra(
        |q: &SVector<Dual<f64>, JOINTS>| pose_error(q, &target),
        &start,
    );
    let dual_gradient = j.transpose() * r;
    let (loss, grad) = pose_loss_grad(&Tensor::from(start), &arm);
    let worst = grad
        .q
        .to_array()
        .iter()
        .zip(dual_gradient.iter())
        .map(|(a, b)| (a - b).abs() / b.abs().max(1e-300))
        .fold(0.0f64, f64::max);
    println!(
        "  #[differentiable] pose loss {loss:.6} (½|r|² = {:.6}); gradient against the dual Jacobian's Jᵀr: worst relative difference {worst:.1e}",
        0.5 * r.norm_squared()
    );

    // Ridge regression.
    let (ridge, (test_x, test_y)) = match ridge_data() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let tuned = tune_ridge(&ridge);
    let lambda = tuned.log_lambda.exp();
    println!(
        "ridge regression: d(validation error)/d(ln λ) at ln λ = {}: {:.6e} (central differences {:.6e})",
        DESCENT.0, tuned.start_check.0, tuned.start_check.1
    );
    println!(
        "  tuned λ = {lambda:.3} (ln λ {:.4}, gradient {:.1e}): validation MSE {:.5} (standardized)",
        tuned.log_lambda, tuned.gradient, tuned.validation_error
    );
    let mean = test_y.iter().sum::<f64>() / test_y.len() as f64;
    let total: f64 = test_y.iter().map(|y| (y - mean).powi(2)).sum();
    let r2 = |w: &[f64; FEATURES]| {
        let residual: f64 = test_x
            .iter()
            .zip(&test_y)
            .map(|(x, y)| (y - x.iter().zip(w).map(|(a, b)| a * b).sum::<f64>()).powi(2))
            .sum();
        1.0 - residual / total
    };
    println!(
        "  test R² on the last 89 rows: {:.3} at the tuned λ, {:.3} without regularization",
        r2(&ridge_weights(&ridge, lambda)),
        r2(&ridge_weights(&ridge, 0.0))
    );
}
