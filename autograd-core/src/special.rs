//! `erfc` and the Gaussian `exp(-x^2 / 2)` for f32, computed in f64 by branch-free arithmetic
//! with no call, so that the exact GELU's loops vectorize (with `libm`'s `erfcf` and `expf`, each
//! a call with branches, they took 40% of a transformer block's gradient step).
//!
//! Both work in f64 and round once: the exponent `-z^2` is exact in f64 for an f32 `z`, which is
//! where an f32 evaluation loses its digits in the tail, and the result's error is below 0.51 ulp
//! of f32 (tested below against `libm`'s f64 functions on every 256th f32 of the range). The
//! cross-entropy's `exp` and `ln` of f32 slices ([`exp_in_place_f32`], [`ln_in_place_f32`]) are
//! computed the same way.

/// `log2(e)`.
const LOG2_E: f64 = core::f64::consts::LOG2_E;
/// `ln(2)`.
const LN_2: f64 = core::f64::consts::LN_2;
/// `1.5 * 2^52`: adding it rounds an f64 of magnitude below `2^51` to an integer, whose value the
/// low bits of the sum then hold.
const ROUND: f64 = 6_755_399_441_055_744.0;

/// `e^x` in f64 to `3e-10` relative (a result rounded to f32 stays within 0.51 ulp: an f32 ulp is
/// at least `6e-8` relative), for any `x`:
/// clamped to `[-708, 709]`, where `2^n` is a normal f64, so that below it the result is
/// `e^-708`, 0 as an f32; NaN stays NaN.
#[allow(
    clippy::inline_always,
    reason = "inlined into the f32 loops compiled for wide vectors (`ops::pointwise::erf_loops_f32`)"
)]
#[inline(always)]
fn exp(x: f64) -> f64 {
    let x = x.clamp(-708.0, 709.0);
    let shifted = x * LOG2_E + ROUND;
    let n = shifted - ROUND;
    // |r| <= ln(2) / 2; the Taylor series to r^8 / 8! errs by less than 3e-10 relative there
    // (to r^11 / 11! before: the three more terms cost 20% of a softmax's exponentials).
    let r = x - n * LN_2;
    let mut p = EXP_TAYLOR[8];
    for &c in EXP_TAYLOR[..8].iter().rev() {
        p = p * r + c;
    }
    // The integer n sits in the low bits of `shifted`, two's complement: n + 1023, in 1..=2046
    // after the clamp, is the biased exponent of 2^n.
    let scale = f64::from_bits(
        shifted
            .to_bits()
            .wrapping_sub(ROUND.to_bits())
            .wrapping_add(1023)
            << 52,
    );
    p * scale
}

/// `1 / k!` for `k` in `0..9`.
const EXP_TAYLOR: [f64; 9] = {
    let mut c = [0.0; 9];
    let (mut k, mut factorial) = (0, 1.0);
    while k < 9 {
        c[k] = 1.0 / factorial;
        k += 1;
        #[allow(clippy::cast_precision_loss, reason = "k is at most 9")]
        let next = k as f64;
        factorial *= next;
    }
    c
};

/// `ln(erfc(z) / t) + z^2` as a polynomial in `t = 1 / (1 + z / 2)`, `z` in `[0, 10.5]`, highest
/// power first: a least-squares fit of degree 12 on Chebyshev nodes of `t`, within `1.8e-10` (a
/// relative error of `erfc` far below an ulp of f32), after Numerical Recipes' `erfcc`, whose
/// degree-9 Chebyshev economization of the same form errs by `1.2e-7`.
const ERFC_FIT: [f64; 13] = [
    0.185_811_627_818_295_63,
    -1.372_349_351_317_413,
    4.391_175_930_264_548_6,
    -7.866_347_159_649_837,
    8.517_235_142_939_617,
    -5.732_661_694_148_91,
    2.649_257_489_552_079_3,
    -1.065_682_517_480_368_1,
    0.133_021_714_927_374_5,
    0.047_425_365_144_906_98,
    0.378_863_631_018_737_55,
    0.999_755_021_481_135,
    -1.265_505_200_377_816_4,
];

/// `erfc(z)` for an f32, to 0.51 ulp: for `z >= 0` (`|z|` clamped to 10.5, past which erfc is
/// below the smallest f32), `t e^(-z^2 + P(t))`; for `z < 0`, `2 - erfc(-z)`.
#[allow(clippy::inline_always, reason = "as `exp`")]
#[inline(always)]
pub(crate) fn erfc_f32(z: f32) -> f32 {
    let z = f64::from(z);
    let a = z.abs().min(10.5);
    let t = 1.0 / (1.0 + 0.5 * a);
    let mut p = 0.0;
    for c in ERFC_FIT {
        p = p * t + c;
    }
    let tail = t * exp(p - a * a);
    let r = if z < 0.0 { 2.0 - tail } else { tail };
    #[allow(
        clippy::cast_possible_truncation,
        reason = "rounding the f64 result to f32 is the point"
    )]
    let r = if z.is_nan() { z } else { r } as f32;
    r
}

/// `exp(-x^2 / 2)` for an f32, to 0.5 ulp (`x^2` is exact in f64).
#[allow(clippy::inline_always, reason = "as `exp`")]
#[inline(always)]
pub(crate) fn gauss_f32(x: f32) -> f32 {
    let x = f64::from(x);
    #[allow(
        clippy::cast_possible_truncation,
        reason = "rounding the f64 result to f32 is the point"
    )]
    let r = exp(-0.5 * (x * x)) as f32;
    r
}

/// `e^x` of each f32 in place, each computed in f64 and rounded once (to 0.5 ulp; tested): the
/// softmax of the cross-entropy ([`Float::exp_in_place`](crate::Float::exp_in_place)), where
/// `libm`'s `expf`, a call per element, took a third of the loss's time. Inlined, so that a
/// caller running inside the products' dispatch (`ops::pointwise::wide`) gets it compiled for the
/// machine's widest vectors.
#[allow(clippy::inline_always, reason = "as `exp`")]
#[inline(always)]
pub(crate) fn exp_in_place_f32(xs: &mut [f32]) {
    for x in xs {
        #[allow(
            clippy::cast_possible_truncation,
            reason = "rounding the f64 result to f32 is the point"
        )]
        let e = exp(f64::from(*x)) as f32;
        *x = e;
    }
}

/// `1 / (2k + 1)` for `k` in `0..6`: `ln m = 2 atanh u = 2 sum_k u^(2k+1) / (2k+1)`.
const ATANH_SERIES: [f64; 6] = [1.0, 1.0 / 3.0, 1.0 / 5.0, 1.0 / 7.0, 1.0 / 9.0, 1.0 / 11.0];

/// `ln x` of each f32 in place, computed in f64 without a call and rounded once (to 0.5 ulp;
/// tested), inlined as [`exp_in_place_f32`]: the cross-entropy's `ln` of each row's sum
/// ([`Float::ln_in_place`](crate::Float::ln_in_place)), a call to `logf` per row before.
///
/// `x = 2^e m` with `m` in `[sqrt(1/2), sqrt(2))` (an f32's subnormals are normal in f64), and
/// `ln m = 2 atanh u` with `u = (m - 1) / (m + 1)`, `|u| <= 0.172`: the series to `u^11 / 11`
/// errs by less than `5e-11` relative. Zero, negatives, infinity and NaN get `ln`'s values by
/// selection, so that the loop has no branch.
#[allow(clippy::inline_always, reason = "as `exp`")]
#[inline(always)]
pub(crate) fn ln_in_place_f32(xs: &mut [f32]) {
    for x in xs {
        let v = f64::from(*x);
        let bits = v.to_bits();
        // The mantissa scaled into [1, 2), then into [sqrt(1/2), sqrt(2)).
        let m = f64::from_bits((bits & ((1 << 52) - 1)) | (1023 << 52));
        let high = m > core::f64::consts::SQRT_2;
        let m = if high { 0.5 * m } else { m };
        #[allow(clippy::cast_possible_wrap, reason = "an exponent field of 11 bits")]
        let e = (bits >> 52) as i64 - 1023 + i64::from(high);
        let u = (m - 1.0) / (m + 1.0);
        let u2 = u * u;
        let mut series = ATANH_SERIES[5];
        for &c in ATANH_SERIES[..5].iter().rev() {
            series = series * u2 + c;
        }
        #[allow(
            clippy::cast_precision_loss,
            reason = "an exponent below 2^11 is exact"
        )]
        let ln = e as f64 * LN_2 + 2.0 * u * series;
        #[allow(
            clippy::cast_possible_truncation,
            reason = "rounding the f64 result to f32 is the point"
        )]
        let ln = ln as f32;
        let special = if *x == 0.0 {
            f32::NEG_INFINITY
        } else if *x == f32::INFINITY {
            f32::INFINITY
        } else {
            f32::NAN
        };
        *x = if *x > 0.0 && *x < f32::INFINITY {
            ln
        } else {
            special
        };
    }
}

#[cfg(test)]
mod tests {
    use super::{erfc_f32, exp, exp_in_place_f32, gauss_f32, ln_in_place_f32};

    /// The distance in f32 ulps between `got` and the f64 value `want`.
    #[allow(clippy::cast_possible_truncation, reason = "f32 ulps of an f64")]
    fn ulps(got: f32, want: f64) -> f64 {
        let ulp = if want == 0.0 {
            f64::from(f32::from_bits(1))
        } else {
            // The spacing of f32s around `want` (subnormals share the smallest).
            let w = want.abs() as f32;
            let next = f32::from_bits(w.to_bits() + 1);
            f64::from(next - w).max(f64::from(f32::from_bits(1)))
        };
        (f64::from(got) - want).abs() / ulp
    }

    /// Every 256th f32 in `[lo, hi]`, both signs handled by the caller.
    fn grid(lo: f32, hi: f32) -> impl Iterator<Item = f32> {
        let (a, b) = (lo.to_bits(), hi.to_bits());
        (a..=b).step_by(256).map(f32::from_bits)
    }

    #[test]
    fn erfc_is_within_0_51_ulp_of_the_f64_function() {
        let mut worst = (0.0f64, 0.0f32);
        for z in grid(1e-30, 10.5).chain(grid(1e-30, 30.0).map(|z| -z)) {
            let e = ulps(erfc_f32(z), libm::erfc(f64::from(z)));
            if e > worst.0 {
                worst = (e, z);
            }
        }
        assert!(worst.0 <= 0.51, "{} ulp at {}", worst.0, worst.1);
    }

    #[test]
    fn gauss_is_within_0_51_ulp_of_the_f64_function() {
        let mut worst = (0.0f64, 0.0f32);
        for x in grid(1e-30, 20.0) {
            for x in [x, -x] {
                let e = ulps(gauss_f32(x), libm::exp(-0.5 * f64::from(x) * f64::from(x)));
                if e > worst.0 {
                    worst = (e, x);
                }
            }
        }
        assert!(worst.0 <= 0.51, "{} ulp at {}", worst.0, worst.1);
    }

    /// The largest error in ulps of `f_in_place` against the f64 function `want` over `xs`, and
    /// where: `xs` goes through in slices of 1000, so that the vector loop and its remainder both
    /// run.
    fn worst_in_place(xs: &[f32], f_in_place: fn(&mut [f32]), want: fn(f64) -> f64) -> (f64, f32) {
        let mut worst = (0.0f64, 0.0f32);
        for chunk in xs.chunks(1000) {
            let mut ys = chunk.to_vec();
            f_in_place(&mut ys);
            for (&x, &y) in chunk.iter().zip(&ys) {
                let e = ulps(y, want(f64::from(x)));
                if e > worst.0 {
                    worst = (e, x);
                }
            }
        }
        worst
    }

    #[test]
    fn ln_in_place_is_within_0_51_ulp_of_the_f64_function() {
        // Every 256th positive f32, subnormals included.
        let xs: Vec<f32> = grid(f32::from_bits(1), f32::MAX).collect();
        let worst = worst_in_place(&xs, ln_in_place_f32, libm::log);
        assert!(worst.0 <= 0.51, "{} ulp at {}", worst.0, worst.1);
        // Exact where ln is: ln 1 = 0, and the powers of 2 are their exponent times ln 2.
        let mut exact = [1.0f32, 2.0, 0.5, 1024.0];
        ln_in_place_f32(&mut exact);
        assert_eq!(exact[0].to_bits(), 0);
        for (y, e) in exact[1..].iter().zip([1.0, -1.0, 10.0]) {
            #[allow(clippy::cast_possible_truncation, reason = "f32 of an f64")]
            let want = (e * core::f64::consts::LN_2) as f32;
            assert_eq!(*y, want);
        }
        let mut special = [0.0, -0.0, -1.0, f32::NEG_INFINITY, f32::INFINITY, f32::NAN];
        ln_in_place_f32(&mut special);
        assert_eq!(special[..2], [f32::NEG_INFINITY; 2]);
        assert!(special[2].is_nan() && special[3].is_nan() && special[5].is_nan());
        assert_eq!(special[4], f32::INFINITY);
    }

    #[test]
    fn exp_in_place_is_within_0_51_ulp_of_the_f64_function() {
        // Every 256th f32 of [-104, 88.72] (up to the largest finite e^x, subnormals included).
        let xs: Vec<f32> = grid(1e-30, 104.0)
            .map(|x| -x)
            .chain(grid(1e-30, 88.72))
            .collect();
        let worst = worst_in_place(&xs, exp_in_place_f32, libm::exp);
        assert!(worst.0 <= 0.51, "{} ulp at {}", worst.0, worst.1);
        let mut special = [
            0.0,
            -0.0,
            f32::NEG_INFINITY,
            f32::INFINITY,
            f32::NAN,
            89.0,
            -104.0,
        ];
        exp_in_place_f32(&mut special);
        assert_eq!(special[..4], [1.0, 1.0, 0.0, f32::INFINITY]);
        assert!(special[4].is_nan());
        assert_eq!(special[5..], [f32::INFINITY, 0.0]);
    }

    #[test]
    #[allow(clippy::float_cmp, reason = "exact values")]
    fn special_values() {
        assert_eq!(erfc_f32(0.0), 1.0);
        assert_eq!(erfc_f32(-0.0), 1.0);
        assert_eq!(erfc_f32(f32::INFINITY), 0.0);
        assert_eq!(erfc_f32(f32::NEG_INFINITY), 2.0);
        assert_eq!(erfc_f32(11.0), 0.0);
        assert!(erfc_f32(f32::NAN).is_nan());
        assert_eq!(gauss_f32(0.0), 1.0);
        assert_eq!(gauss_f32(f32::INFINITY), 0.0);
        assert_eq!(gauss_f32(1e30), 0.0);
        assert!(gauss_f32(f32::NAN).is_nan());
        // The f64 exponential on its own, against the C library's, to its documented 3e-10.
        for x in [
            -700.0, -100.5, -1.0, -1e-300, 0.0, 0.3, 0.34, -0.34, 1.0, 50.0, 700.0,
        ] {
            let (got, want) = (exp(x), libm::exp(x));
            assert!(
                (got - want).abs() <= 3e-10 * want,
                "exp({x}) = {got}, not {want}"
            );
        }
        assert!(exp(f64::NAN).is_nan());
    }
}
