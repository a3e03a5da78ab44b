//! Unusual but valid `#[differentiable]` functions: patterns, macros, shadowing, raw names, blocks,
//! nested items, loops and branches written the many ways people write them. Each compiles, and its
//! gradient with respect to both parameters equals central differences in f64 (a function that no
//! test reaches fails `every_function_is_checked`).
//!
//! The expansion's unit test (`autograd-macros/src/tests/robustness.rs`) reads this file: every
//! function here counts as an input classified "accepted, compiles, correct" in its robustness
//! corpus, beside the inputs it classifies as rejected with an error at the user's span.

#![allow(unused, clippy::all, clippy::pedantic)]

use autograd_core::differentiable;
use autograd_core::gradcheck::{Tolerance, check_gradient};
use autograd_core::prelude::*;
use std::fmt::Write as _;

type V = Tensor![f64; 3];

const N2: usize = 2;

#[differentiable]
fn g2(a: &Tensor![f64; 3], b: &Tensor![f64; 3]) -> Tensor![f64; 3] {
    a * b
}

#[differentiable]
fn g3(a: &Tensor![f64; 3]) -> f64 {
    a.sum().item()
}

#[differentiable]
fn g4(a: f64) -> f64 {
    a * a
}

/// Checks both gradients of `f` against central differences at a point away from every kink.
fn check(name: &str, f: fn(&V, &V) -> f64, grad: impl Fn(&V, &V) -> (f64, V, V)) {
    let x = Tensor::new([0.3, 0.2, 0.5]);
    let w = Tensor::new([0.7, 0.4, 0.6]);
    let (value, gx, gw) = grad(&x, &w);
    assert_eq!(
        value,
        f(&x, &w),
        "{name}: the value differs from the function's"
    );
    check_gradient(|x| f(x, &w), &x, &gx, Tolerance::default())
        .unwrap_or_else(|e| panic!("{name}, gradient of x: {e}"));
    check_gradient(|w| f(&x, w), &w, &gw, Tolerance::default())
        .unwrap_or_else(|e| panic!("{name}, gradient of w: {e}"));
}

#[differentiable]
fn u002(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    println!("{y:?}");
    y.sum().item()
}

#[differentiable]
fn u003(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    println!("{:?}", y);
    y.sum().item()
}

#[differentiable]
fn u004(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    assert!(y.sum().item() > 0.0, "{y:?}");
    y.sum().item()
}

#[differentiable]
fn u005(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    dbg!(&y);
    y.sum().item()
}

#[differentiable]
fn u006(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    let s = format!("{y:?}");
    assert!(!s.is_empty());
    y.sum().item()
}

#[differentiable]
fn u011(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x * w;
    let z: Tensor![f64; 3] = y;
    z.sum().item()
}

#[differentiable]
fn u017(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let s = (x * w).sum().item();
    s.sqrt()
}

#[differentiable]
fn u023(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp().exp().exp();
    y.sum().item()
}

#[differentiable]
fn u026(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x * w;
    let z = y.clone();
    let q = y;
    (z + q).sum().item()
}

#[differentiable]
fn u030(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = &&x;
    y.sum().item()
}

#[differentiable]
fn u032(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.clone();
    let y = y.clone();
    y.sum().item()
}

#[differentiable]
fn u034(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    let z = { y };
    z.sum().item()
}

#[differentiable]
fn u035(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let c = [1.0f64, 2.0, 3.0];
    let t = Tensor::new(c);
    (x * &t).sum().item()
}

#[differentiable]
fn u036(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    const C: f64 = 2.0;
    static S: f64 = 3.0;
    (x * C * S).sum().item()
}

#[differentiable]
fn u037(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    struct P {
        k: f64,
    }
    let p = P { k: 2.0 };
    (x * p.k).sum().item()
}

#[differentiable]
fn u038(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let k = 2.0f64;
    let y = x * k;
    let k = y.sum().item();
    k
}

#[differentiable]
fn u039(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let _unused = x.exp();
    (x * w).sum().item()
}

#[differentiable]
fn u040(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let (a, b) = (x.exp(), w.ln());
    (a * b).sum().item()
}

#[differentiable]
fn u041(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let (a, _) = (x.exp(), w.ln());
    a.sum().item()
}

#[differentiable]
fn u044(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let mut y = x.clone();
    y = y * 2.0;
    y = y + w;
    y.sum().item()
}

#[differentiable]
fn u045(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let mut y = x.clone();
    for i in 0..3 {
        y = y * (i as f64 + 1.0);
    }
    y.sum().item()
}

#[differentiable]
fn u046(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let mut y = x.clone();
    for _ in 0..3 {
        for _ in 0..2 {
            y = &y * w;
        }
    }
    y.sum().item()
}

#[differentiable]
fn u047(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let mut y = x.clone();
    for i in 0..3 {
        if i == 1 {
            y = y.exp();
        } else {
            y = y * w;
        }
    }
    y.sum().item()
}

#[differentiable]
fn u048(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let mut y = x.clone();
    for i in 0..3 {
        match i {
            0 => {
                y = y * 2.0;
            }
            _ => {}
        }
    }
    y.sum().item()
}

#[differentiable]
fn u049(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let mut y = x.clone();
    for i in 0..3 {
        let z = &y * w;
        y = z;
        let _ = i;
    }
    y.sum().item()
}

#[differentiable]
fn u050(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let mut acc = 0.0f64;
    for i in 0..3 {
        acc = acc + (x * (i as f64)).sum().item();
    }
    acc
}

#[differentiable]
fn u051(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let mut acc = 0.0f64;
    for i in 0..3 {
        acc += (x * (i as f64)).sum().item();
    }
    acc
}

#[differentiable]
fn u054(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let mut y = x.clone();
    y = -y;
    y.sum().item()
}

#[differentiable]
fn u055(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = if x.sum().item() > 0.0 {
        x.exp()
    } else if w.sum().item() > 0.0 {
        w.exp()
    } else {
        x * w
    };
    y.sum().item()
}

#[differentiable]
fn u056(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = match (x.sum().item() > 0.0, 1) {
        (true, 1) => x.exp(),
        _ => w.exp(),
    };
    y.sum().item()
}

#[differentiable]
fn u057(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = match 3 {
        n @ 1..=5 => x * n as f64,
        _ => w.clone(),
    };
    y.sum().item()
}

#[differentiable]
fn u058(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = if true { x.exp() } else { unreachable!() };
    y.sum().item()
}

#[differentiable]
fn u059(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    let n = y.sum().item();
    if n.is_nan() {
        panic!("nan")
    }
    n
}

#[differentiable]
fn u060(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let s: f64 = (x * w).sum().item();
    let t: f64 = s * s;
    t
}

#[differentiable]
fn u061(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let s = (x * w).sum().item();
    let t = -s;
    t
}

#[differentiable]
fn u062(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    let z = y.sum().item() * 0.0 + y.sum().item();
    z
}

#[differentiable]
fn u063(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    #[allow(unused_variables)]
    let y = x.exp();
    y.sum().item()
}

#[differentiable]
fn u064(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = (x * w).mean().item();
    y
}

#[differentiable]
fn u065(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.softmax::<0>();
    (y * w).sum().item()
}

#[differentiable]
fn u066(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.relu();
    y.sum().item()
}

#[differentiable]
fn u067(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.tanh().sigmoid();
    y.sum().item()
}

#[differentiable]
fn u068(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.sqrt();
    y.sum().item()
}

#[differentiable]
fn u069(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.powf(2.0);
    y.sum().item()
}

#[differentiable]
fn u070(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.square();
    y.sum().item()
}

#[differentiable]
fn u071(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.maximum(w);
    y.sum().item()
}

#[differentiable]
fn u072(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.max().item();
    y
}

#[differentiable]
fn u073(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.abs();
    y.sum().item()
}

#[differentiable]
fn u078(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.sum_axis::<0>();
    y.item()
}

#[differentiable]
fn u079(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.logsumexp();
    y.item()
}

#[differentiable]
fn u080(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.var();
    y.item()
}

#[differentiable]
fn u083(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    let z = y.detach();
    (x * z).sum().item()
}

#[differentiable]
fn u102(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    y.clone().sum().item()
}

#[differentiable]
fn u106(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    let _ = write!(String::new(), "{y:?}");
    y.sum().item()
}

#[differentiable]
fn u107(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    debug_assert!(y.sum().item() > 0.0);
    y.sum().item()
}

#[differentiable]
fn u108(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    assert_eq!(y.sum().item(), y.sum().item());
    y.sum().item()
}

#[differentiable]
fn u109(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    let m = matches!(y.sum().item(), v if v > 0.0);
    if m { y.sum().item() } else { 0.0 }
}

#[differentiable]
fn u110(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    if matches!(y.sum().item(), v if v > 0.0) {
        y.sum().item()
    } else {
        0.0
    }
}

#[differentiable]
fn u111(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    let z = y;
    let y = z * 2.0;
    y.sum().item()
}

#[differentiable]
fn u112(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let r#type = x.exp();
    r#type.sum().item()
}

#[differentiable]
fn u113(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    let r#y2 = y * 2.0;
    r#y2.sum().item()
}

#[differentiable]
fn u114(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let __y = x.exp();
    __y.sum().item()
}

#[differentiable]
fn u115(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let _ = x.exp();
    (x * w).sum().item()
}

#[differentiable]
fn u117(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    let z = &y;
    z.sum().item()
}

#[differentiable]
fn u118(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    let z = &&y;
    (*z).sum().item()
}

#[differentiable]
fn u120(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    let z = y.exp();
    let _w = &z;
    y.sum().item()
}

#[differentiable]
fn u121(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    use std::ops::Mul;
    y.mul(w).sum().item()
}

#[differentiable]
fn u123(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x + 1.0;
    y.sum().item()
}

#[differentiable]
fn u124(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = 1.0 + x;
    y.sum().item()
}

#[differentiable]
fn u125(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = 2.0 * x - w / 3.0;
    y.sum().item()
}

#[differentiable]
fn u126(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x / w;
    y.sum().item()
}

#[differentiable]
fn u127(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = (x.sum().item() * 2.0) + (w.sum().item() / 3.0);
    y
}

#[differentiable]
fn u128(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp().sum().item() - w.exp().sum().item();
    y
}

#[differentiable]
fn u129(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = -x.sum().item();
    y
}

#[differentiable]
fn u130(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = -(x * w);
    y.sum().item()
}

#[differentiable]
fn u131(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    let z = y.sum().item() > 1.0 && y.sum().item() < 100.0;
    if z { 1.0 } else { y.sum().item() }
}

#[differentiable]
fn u132(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    let cond = y.sum().item() > 1.0;
    if cond { y.sum().item() } else { 0.0 }
}

#[differentiable]
fn u133(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    if y.sum().item() > 1.0 {
        y.sum().item()
    } else {
        y.sum().item() * 2.0
    }
}

#[differentiable]
fn u134(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    if let true = y.sum().item() > 1.0 {
        y.sum().item()
    } else {
        0.0
    }
}

#[differentiable]
fn u135(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    let _k = if y.sum().item() > 1.0 { 1 } else { 2 };
    y.sum().item()
}

#[differentiable]
fn u136(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    let k = if y.sum().item() > 1.0 { 1.0 } else { 2.0 };
    (y * k).sum().item()
}

#[differentiable]
fn u137(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    { y.sum().item() }
}

#[differentiable]
fn u138(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    ({ y }).sum().item()
}

#[differentiable]
fn u139(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    (y).sum().item()
}

#[differentiable]
fn u140(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    let z = y.sum().item();
    let z = z + z;
    z
}

#[differentiable]
fn u141(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let s = x.sum().item();
    let t = w.sum().item();
    s * t + s / t - t
}

#[differentiable]
fn u146(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    match y.sum().item().partial_cmp(&1.0) {
        Some(std::cmp::Ordering::Less) => 1.0,
        _ => y.sum().item(),
    }
}

#[differentiable]
fn u147(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    match y.sum().item() {
        0.0 => 1.0,
        _ => y.sum().item(),
    }
}

#[differentiable]
fn u155(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    let mut a = y.clone();
    for _ in 0..N2 {
        a = a * 2.0;
    }
    a.sum().item()
}

#[differentiable]
fn u156(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let mut a = x.clone();
    for i in 0..3 {
        a = a * w;
        if i == 2 {
            a = a.exp();
        }
    }
    a.sum().item()
}

#[differentiable]
fn u157(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let mut a = x.clone();
    let mut b = w.clone();
    for _ in 0..3 {
        let t = a.clone();
        a = b;
        b = t;
    }
    (a * b).sum().item()
}

#[differentiable]
fn u158(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let mut a = x.clone();
    for _ in 0..3 {
        let a = a.exp();
        let _ = a;
    }
    a.sum().item()
}

#[differentiable]
fn u159(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let mut a = x.clone();
    for _ in 0..3 {
        a = {
            let t = a.exp();
            t * 0.5
        };
    }
    a.sum().item()
}

#[differentiable]
fn u161(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = g2(x, w);
    y.sum().item()
}

#[differentiable]
fn u162(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = g2(&x.exp(), w);
    y.sum().item()
}

#[differentiable]
fn u163(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = self::g2(x, w);
    y.sum().item()
}

#[differentiable]
fn u164(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    // This file is the module `macro_unusual` of the `macro` test binary.
    let y = crate::macro_unusual::g2(x, w);
    y.sum().item()
}

#[differentiable]
fn u165(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = g2(x, w);
    y.sum().item()
}

#[differentiable]
fn u166(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    g2(&y, &y).sum().item()
}

#[differentiable]
fn u167(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    g3(&y)
}

#[differentiable]
fn u168(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    g3(&y) + g3(x)
}

#[differentiable]
fn u169(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    g4(y.sum().item())
}

// Locals named like what generated code binds beside them (`__out`, the place a callee's output
// is written into; `__needs`; `__value`; `__grad`) or derives from another variable's name
// (`__pb_out` is the pullback of the call bound to `out`, `__saved_y` what the op computing `y`
// saved, `__ct_y` its cotangent, `__op_y` its rule): each is renamed, so none shadows the
// generated one.
#[differentiable]
fn u170_callee(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> Tensor![f64; 3] {
    let out = x.exp();
    let needs = &out * w;
    needs
}

#[differentiable]
fn u170(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let out = u170_callee(x, w);
    let pb_out = out.sin();
    let y = &pb_out * &out;
    let saved_y = y.tanh();
    let ct_y = &saved_y * &y;
    let op_y = ct_y.sum();
    let value = op_y.item();
    let grad = value * 3.0;
    let gs_out = grad + 1.0;
    gs_out
}

// A local named like the second binding of a shadowed name (`__y_2`): the generated names stay
// distinct.
#[differentiable]
fn u171(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    let y = y.sin();
    let y_2 = w.cos();
    (&y * &y_2).sum().item()
}

// `f64::clamp` on a float of the body is the rule `clamp` (it was rejected by rustc as a method
// of no rule): the same value for bounds in order, and the gradient inside them.
#[differentiable]
fn u172(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let s = (x * w).sum().item();
    s.clamp(0.0, 1.0) + (s * 4.0).clamp(-0.5, 0.5)
}

// Let-chains: a name bound by the chain shadows the parameter `x` in the later conditions and in
// the arm; the gradient flows through `w` only.
#[differentiable]
fn let_chain_shadows(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let k = Some(2.0);
    if let Some(x) = k
        && x > 1.0
        && let Some(y) = Some(x * 3.0)
    {
        (w * x * y).sum().item()
    } else {
        x.sum().item()
    }
}

#[differentiable]
fn let_chain_on_a_comparison(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    if let true = x.sum().item() > 0.0
        && let Some(n) = Some(2.0)
    {
        (x * w * n).sum().item()
    } else {
        0.0
    }
}

#[test]
fn let_chains_bind_their_names_for_the_arm() {
    check("let_chain_shadows", let_chain_shadows, |x, w| {
        let (v, g) = let_chain_shadows_grad(x, w);
        (v, g.x, g.w)
    });
    let (_, g) =
        let_chain_shadows_grad(&Tensor::new([0.3, 0.2, 0.5]), &Tensor::new([0.7, 0.4, 0.6]));
    assert_eq!(g.w.to_array(), [12.0; 3]); // x * y = 2 * 6
    assert_eq!(g.x.to_array(), [0.0; 3]);
    check(
        "let_chain_on_a_comparison",
        let_chain_on_a_comparison,
        |x, w| {
            let (v, g) = let_chain_on_a_comparison_grad(x, w);
            (v, g.x, g.w)
        },
    );
}

// Format strings: inline captures and named arguments of differentiated values are read only.
#[differentiable]
fn printed(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x * w;
    let s = format!("{y:?} {a}", a = y.sum().item());
    assert!(!s.is_empty(), "{y:?} {s}");
    (&y * &y).sum().item()
}

#[test]
fn format_macros_read_differentiated_values() {
    check("printed", printed, |x, w| {
        let (v, g) = printed_grad(x, w);
        (v, g.x, g.w)
    });
}

// Raw identifiers as the function's name and parameter: the macro panicked on these, and rustc
// reported "custom attribute panicked" with the function gone.
#[differentiable]
fn r#match(r#type: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let r#in = r#type * w;
    r#in.exp().sum().item()
}

#[test]
fn raw_identifiers_are_differentiated() {
    check("r#match", r#match, |x, w| {
        let (v, g) = match_grad(x, w);
        (v, g.r#type, g.w)
    });
    let x = Tensor::new([0.3, 0.2, 0.5]);
    let (_, g) = match_grad(&x, &x);
    assert!(format!("{g:?}").contains("MatchGrad { type: "), "{g:?}");
}

// A `#[differentiable]` function defined inside another and called on a differentiated value:
// a callee like any other (it was rejected as a local function).
#[differentiable]
fn nested_differentiable(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    #[differentiable]
    fn inner(y: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
        (y * y * w).sum().item()
    }
    inner(&x.sin(), w) * 2.0 + inner(x, &w.exp())
}

#[test]
fn a_nested_differentiable_function_is_a_callee() {
    check("nested_differentiable", nested_differentiable, |x, w| {
        let (v, g) = nested_differentiable_grad(x, w);
        (v, g.x, g.w)
    });
}

#[test]
fn a_detached_factor_is_a_constant() {
    // d/dx sum(x * detach(exp(x))) = exp(x): central differences would also see through the detach.
    let x = Tensor::new([0.3, 0.2, 0.5]);
    let w = Tensor::new([0.7, 0.4, 0.6]);
    let (_, g) = u083_grad(&x, &w);
    g.x.assert_close(&x.exp(), 1e-15, 0.0);
    assert_eq!(g.w.to_array(), [0.0; 3]);
}

#[test]
fn every_unusual_function_has_the_gradient_of_central_differences() {
    check("u002", u002, |x, w| {
        let (v, g) = u002_grad(x, w);
        (v, g.x, g.w)
    });
    check("u003", u003, |x, w| {
        let (v, g) = u003_grad(x, w);
        (v, g.x, g.w)
    });
    check("u004", u004, |x, w| {
        let (v, g) = u004_grad(x, w);
        (v, g.x, g.w)
    });
    check("u005", u005, |x, w| {
        let (v, g) = u005_grad(x, w);
        (v, g.x, g.w)
    });
    check("u006", u006, |x, w| {
        let (v, g) = u006_grad(x, w);
        (v, g.x, g.w)
    });
    check("u011", u011, |x, w| {
        let (v, g) = u011_grad(x, w);
        (v, g.x, g.w)
    });
    check("u017", u017, |x, w| {
        let (v, g) = u017_grad(x, w);
        (v, g.x, g.w)
    });
    check("u023", u023, |x, w| {
        let (v, g) = u023_grad(x, w);
        (v, g.x, g.w)
    });
    check("u026", u026, |x, w| {
        let (v, g) = u026_grad(x, w);
        (v, g.x, g.w)
    });
    check("u030", u030, |x, w| {
        let (v, g) = u030_grad(x, w);
        (v, g.x, g.w)
    });
    check("u032", u032, |x, w| {
        let (v, g) = u032_grad(x, w);
        (v, g.x, g.w)
    });
    check("u034", u034, |x, w| {
        let (v, g) = u034_grad(x, w);
        (v, g.x, g.w)
    });
    check("u035", u035, |x, w| {
        let (v, g) = u035_grad(x, w);
        (v, g.x, g.w)
    });
    check("u036", u036, |x, w| {
        let (v, g) = u036_grad(x, w);
        (v, g.x, g.w)
    });
    check("u037", u037, |x, w| {
        let (v, g) = u037_grad(x, w);
        (v, g.x, g.w)
    });
    check("u038", u038, |x, w| {
        let (v, g) = u038_grad(x, w);
        (v, g.x, g.w)
    });
    check("u039", u039, |x, w| {
        let (v, g) = u039_grad(x, w);
        (v, g.x, g.w)
    });
    check("u040", u040, |x, w| {
        let (v, g) = u040_grad(x, w);
        (v, g.x, g.w)
    });
    check("u041", u041, |x, w| {
        let (v, g) = u041_grad(x, w);
        (v, g.x, g.w)
    });
    check("u044", u044, |x, w| {
        let (v, g) = u044_grad(x, w);
        (v, g.x, g.w)
    });
    check("u045", u045, |x, w| {
        let (v, g) = u045_grad(x, w);
        (v, g.x, g.w)
    });
    check("u046", u046, |x, w| {
        let (v, g) = u046_grad(x, w);
        (v, g.x, g.w)
    });
    check("u047", u047, |x, w| {
        let (v, g) = u047_grad(x, w);
        (v, g.x, g.w)
    });
    check("u048", u048, |x, w| {
        let (v, g) = u048_grad(x, w);
        (v, g.x, g.w)
    });
    check("u049", u049, |x, w| {
        let (v, g) = u049_grad(x, w);
        (v, g.x, g.w)
    });
    check("u050", u050, |x, w| {
        let (v, g) = u050_grad(x, w);
        (v, g.x, g.w)
    });
    check("u051", u051, |x, w| {
        let (v, g) = u051_grad(x, w);
        (v, g.x, g.w)
    });
    check("u054", u054, |x, w| {
        let (v, g) = u054_grad(x, w);
        (v, g.x, g.w)
    });
    check("u055", u055, |x, w| {
        let (v, g) = u055_grad(x, w);
        (v, g.x, g.w)
    });
    check("u056", u056, |x, w| {
        let (v, g) = u056_grad(x, w);
        (v, g.x, g.w)
    });
    check("u057", u057, |x, w| {
        let (v, g) = u057_grad(x, w);
        (v, g.x, g.w)
    });
    check("u058", u058, |x, w| {
        let (v, g) = u058_grad(x, w);
        (v, g.x, g.w)
    });
    check("u059", u059, |x, w| {
        let (v, g) = u059_grad(x, w);
        (v, g.x, g.w)
    });
    check("u060", u060, |x, w| {
        let (v, g) = u060_grad(x, w);
        (v, g.x, g.w)
    });
    check("u061", u061, |x, w| {
        let (v, g) = u061_grad(x, w);
        (v, g.x, g.w)
    });
    check("u062", u062, |x, w| {
        let (v, g) = u062_grad(x, w);
        (v, g.x, g.w)
    });
    check("u063", u063, |x, w| {
        let (v, g) = u063_grad(x, w);
        (v, g.x, g.w)
    });
    check("u064", u064, |x, w| {
        let (v, g) = u064_grad(x, w);
        (v, g.x, g.w)
    });
    check("u065", u065, |x, w| {
        let (v, g) = u065_grad(x, w);
        (v, g.x, g.w)
    });
    check("u066", u066, |x, w| {
        let (v, g) = u066_grad(x, w);
        (v, g.x, g.w)
    });
    check("u067", u067, |x, w| {
        let (v, g) = u067_grad(x, w);
        (v, g.x, g.w)
    });
    check("u068", u068, |x, w| {
        let (v, g) = u068_grad(x, w);
        (v, g.x, g.w)
    });
    check("u069", u069, |x, w| {
        let (v, g) = u069_grad(x, w);
        (v, g.x, g.w)
    });
    check("u070", u070, |x, w| {
        let (v, g) = u070_grad(x, w);
        (v, g.x, g.w)
    });
    check("u071", u071, |x, w| {
        let (v, g) = u071_grad(x, w);
        (v, g.x, g.w)
    });
    check("u072", u072, |x, w| {
        let (v, g) = u072_grad(x, w);
        (v, g.x, g.w)
    });
    check("u073", u073, |x, w| {
        let (v, g) = u073_grad(x, w);
        (v, g.x, g.w)
    });
    check("u078", u078, |x, w| {
        let (v, g) = u078_grad(x, w);
        (v, g.x, g.w)
    });
    check("u079", u079, |x, w| {
        let (v, g) = u079_grad(x, w);
        (v, g.x, g.w)
    });
    check("u080", u080, |x, w| {
        let (v, g) = u080_grad(x, w);
        (v, g.x, g.w)
    });
    check("u102", u102, |x, w| {
        let (v, g) = u102_grad(x, w);
        (v, g.x, g.w)
    });
    check("u106", u106, |x, w| {
        let (v, g) = u106_grad(x, w);
        (v, g.x, g.w)
    });
    check("u107", u107, |x, w| {
        let (v, g) = u107_grad(x, w);
        (v, g.x, g.w)
    });
    check("u108", u108, |x, w| {
        let (v, g) = u108_grad(x, w);
        (v, g.x, g.w)
    });
    check("u109", u109, |x, w| {
        let (v, g) = u109_grad(x, w);
        (v, g.x, g.w)
    });
    check("u110", u110, |x, w| {
        let (v, g) = u110_grad(x, w);
        (v, g.x, g.w)
    });
    check("u111", u111, |x, w| {
        let (v, g) = u111_grad(x, w);
        (v, g.x, g.w)
    });
    check("u112", u112, |x, w| {
        let (v, g) = u112_grad(x, w);
        (v, g.x, g.w)
    });
    check("u113", u113, |x, w| {
        let (v, g) = u113_grad(x, w);
        (v, g.x, g.w)
    });
    check("u114", u114, |x, w| {
        let (v, g) = u114_grad(x, w);
        (v, g.x, g.w)
    });
    check("u115", u115, |x, w| {
        let (v, g) = u115_grad(x, w);
        (v, g.x, g.w)
    });
    check("u117", u117, |x, w| {
        let (v, g) = u117_grad(x, w);
        (v, g.x, g.w)
    });
    check("u118", u118, |x, w| {
        let (v, g) = u118_grad(x, w);
        (v, g.x, g.w)
    });
    check("u120", u120, |x, w| {
        let (v, g) = u120_grad(x, w);
        (v, g.x, g.w)
    });
    check("u121", u121, |x, w| {
        let (v, g) = u121_grad(x, w);
        (v, g.x, g.w)
    });
    check("u123", u123, |x, w| {
        let (v, g) = u123_grad(x, w);
        (v, g.x, g.w)
    });
    check("u124", u124, |x, w| {
        let (v, g) = u124_grad(x, w);
        (v, g.x, g.w)
    });
    check("u125", u125, |x, w| {
        let (v, g) = u125_grad(x, w);
        (v, g.x, g.w)
    });
    check("u126", u126, |x, w| {
        let (v, g) = u126_grad(x, w);
        (v, g.x, g.w)
    });
    check("u127", u127, |x, w| {
        let (v, g) = u127_grad(x, w);
        (v, g.x, g.w)
    });
    check("u128", u128, |x, w| {
        let (v, g) = u128_grad(x, w);
        (v, g.x, g.w)
    });
    check("u129", u129, |x, w| {
        let (v, g) = u129_grad(x, w);
        (v, g.x, g.w)
    });
    check("u130", u130, |x, w| {
        let (v, g) = u130_grad(x, w);
        (v, g.x, g.w)
    });
    check("u131", u131, |x, w| {
        let (v, g) = u131_grad(x, w);
        (v, g.x, g.w)
    });
    check("u132", u132, |x, w| {
        let (v, g) = u132_grad(x, w);
        (v, g.x, g.w)
    });
    check("u133", u133, |x, w| {
        let (v, g) = u133_grad(x, w);
        (v, g.x, g.w)
    });
    check("u134", u134, |x, w| {
        let (v, g) = u134_grad(x, w);
        (v, g.x, g.w)
    });
    check("u135", u135, |x, w| {
        let (v, g) = u135_grad(x, w);
        (v, g.x, g.w)
    });
    check("u136", u136, |x, w| {
        let (v, g) = u136_grad(x, w);
        (v, g.x, g.w)
    });
    check("u137", u137, |x, w| {
        let (v, g) = u137_grad(x, w);
        (v, g.x, g.w)
    });
    check("u138", u138, |x, w| {
        let (v, g) = u138_grad(x, w);
        (v, g.x, g.w)
    });
    check("u139", u139, |x, w| {
        let (v, g) = u139_grad(x, w);
        (v, g.x, g.w)
    });
    check("u140", u140, |x, w| {
        let (v, g) = u140_grad(x, w);
        (v, g.x, g.w)
    });
    check("u141", u141, |x, w| {
        let (v, g) = u141_grad(x, w);
        (v, g.x, g.w)
    });
    check("u146", u146, |x, w| {
        let (v, g) = u146_grad(x, w);
        (v, g.x, g.w)
    });
    check("u147", u147, |x, w| {
        let (v, g) = u147_grad(x, w);
        (v, g.x, g.w)
    });
    check("u155", u155, |x, w| {
        let (v, g) = u155_grad(x, w);
        (v, g.x, g.w)
    });
    check("u156", u156, |x, w| {
        let (v, g) = u156_grad(x, w);
        (v, g.x, g.w)
    });
    check("u157", u157, |x, w| {
        let (v, g) = u157_grad(x, w);
        (v, g.x, g.w)
    });
    check("u158", u158, |x, w| {
        let (v, g) = u158_grad(x, w);
        (v, g.x, g.w)
    });
    check("u159", u159, |x, w| {
        let (v, g) = u159_grad(x, w);
        (v, g.x, g.w)
    });
    check("u161", u161, |x, w| {
        let (v, g) = u161_grad(x, w);
        (v, g.x, g.w)
    });
    check("u162", u162, |x, w| {
        let (v, g) = u162_grad(x, w);
        (v, g.x, g.w)
    });
    check("u163", u163, |x, w| {
        let (v, g) = u163_grad(x, w);
        (v, g.x, g.w)
    });
    check("u164", u164, |x, w| {
        let (v, g) = u164_grad(x, w);
        (v, g.x, g.w)
    });
    check("u165", u165, |x, w| {
        let (v, g) = u165_grad(x, w);
        (v, g.x, g.w)
    });
    check("u166", u166, |x, w| {
        let (v, g) = u166_grad(x, w);
        (v, g.x, g.w)
    });
    check("u167", u167, |x, w| {
        let (v, g) = u167_grad(x, w);
        (v, g.x, g.w)
    });
    check("u168", u168, |x, w| {
        let (v, g) = u168_grad(x, w);
        (v, g.x, g.w)
    });
    check("u169", u169, |x, w| {
        let (v, g) = u169_grad(x, w);
        (v, g.x, g.w)
    });
    check("u170", u170, |x, w| {
        let (v, g) = u170_grad(x, w);
        (v, g.x, g.w)
    });
    check("u171", u171, |x, w| {
        let (v, g) = u171_grad(x, w);
        (v, g.x, g.w)
    });
    check("u172", u172, |x, w| {
        let (v, g) = u172_grad(x, w);
        (v, g.x, g.w)
    });
}

/// Every `#[differentiable]` function of this file is reached by a check: its `_grad` or `_vjp` is
/// called by a test, or (a helper) it is called by another function. A function added without a
/// `check(..)` fails here.
#[test]
fn every_function_is_checked() {
    let source = include_str!("macro_unusual.rs");
    let lines: Vec<&str> = source.lines().collect();
    // `name(` or `name::<` where `name` is a whole identifier, on a line that does not define it.
    let called = |name: &str| {
        lines.iter().any(|line| {
            !line.trim_start().starts_with("fn ")
                && line.match_indices(name).any(|(at, _)| {
                    let before = line[..at].chars().next_back();
                    let after = &line[at + name.len()..];
                    !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '#')
                        && (after.starts_with('(') || after.starts_with("::<"))
                })
        })
    };
    let mut names = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !line.trim_start().starts_with("#[differentiable") {
            continue;
        }
        let Some(def) = lines[i + 1..].iter().find(|l| l.contains("fn ")) else {
            continue;
        };
        let rest = &def[def.find("fn ").expect("a definition") + 3..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '#')
            .collect();
        names.push(name);
    }
    assert!(names.len() >= 100, "only {} functions found", names.len());
    let unreached: Vec<&String> = names
        .iter()
        .filter(|n| {
            let plain = n.trim_start_matches("r#");
            !called(&format!("{plain}_grad")) && !called(&format!("{plain}_vjp")) && !called(n)
        })
        .collect();
    assert!(
        unreached.is_empty(),
        "functions no test checks: {unreached:?}"
    );
}

/// A model whose configuration fields (`Copy`, skipped by `Params`) a method reads by value:
/// `let flag = self.flag;` and `let (on, p) = (self.on, self.p);` are copies, as in Rust (they
/// were references in the generated code: "expected `bool`, found `&bool`").
#[derive(Clone, Params)]
struct Configured {
    w: Tensor![f64; 3],
    #[params(skip)]
    flag: bool,
    #[params(skip)]
    on: bool,
    #[params(skip)]
    p: f64,
}

#[differentiable]
impl Configured {
    fn forward(&self, x: &Tensor![f64; 3]) -> Tensor![f64; 3] {
        let flag = self.flag;
        let (on, p) = (self.on, self.p);
        let y = x * &self.w;
        if flag && on {
            y.powf(autograd_core::detach(&p))
        } else {
            y * p
        }
    }
}

#[differentiable]
fn configured_loss(m: &Configured, x: &Tensor![f64; 3]) -> f64 {
    m.forward(x).sum().item()
}

#[test]
fn copies_of_configuration_fields_are_values() {
    for (flag, on) in [(true, true), (true, false), (false, true)] {
        let m = Configured {
            w: Tensor::new([0.7, -0.4, 0.6]),
            flag,
            on,
            p: 3.0,
        };
        let x = Tensor::new([0.3, 0.2, 0.5]);
        let (value, g) = configured_loss_grad(&m, &x);
        assert_eq!(value, configured_loss(&m, &x));
        check_gradient(|x| configured_loss(&m, x), &x, &g.x, Tolerance::default())
            .unwrap_or_else(|e| panic!("x: {e}"));
        let f = |w: &V| {
            let m = Configured {
                w: w.clone(),
                ..m.clone()
            };
            configured_loss(&m, &x)
        };
        check_gradient(f, &m.w, &g.m.w, Tolerance::default()).unwrap_or_else(|e| panic!("w: {e}"));
        // By hand: sum((x w)^3) gives 3 x^3 w^2; 3 sum(x w) gives 3 x.
        let want = if flag && on {
            3.0 * 0.3f64.powi(3) * 0.49
        } else {
            3.0 * 0.3
        };
        assert!((g.m.w.to_array()[0] - want).abs() < 1e-12);
    }
}
