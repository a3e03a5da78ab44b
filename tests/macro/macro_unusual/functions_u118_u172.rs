//! The unusual functions u118 to u172 (see the module's docs), each checked against central
//! differences by the test at the end.

use super::*;

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
#[test]
fn unusual_functions_u118_to_u172_have_the_gradient_of_central_differences() {
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
