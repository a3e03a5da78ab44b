//! The unusual functions u002 to u117 (see the module's docs), each checked against central
//! differences by the test at the end.

use super::*;

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

#[test]
fn unusual_functions_u002_to_u117_have_the_gradient_of_central_differences() {
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
}
