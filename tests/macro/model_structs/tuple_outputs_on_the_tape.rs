use super::*;
use autograd_core::tape::Leaves;

/// `|a - b| <= 1e-12 (1 + |b|)` for every element of two models.
#[track_caller]
pub fn same_model<M: Params<Elem = f64>>(tape: &M, generated: &M) {
    for i in 0..M::COUNT {
        for (k, (a, b)) in tape.slice(i).iter().zip(generated.slice(i)).enumerate() {
            assert!(
                (a - b).abs() <= 1e-12 * (1.0 + b.abs()),
                "{} [{k}]: tape {a}, generated {b}",
                M::path(i)
            );
        }
    }
}

/// `h W + b` on the tape, the layer's tensors tracked through `leaves`.
fn lin<const I: usize, const O: usize>(
    leaves: &Leaves<'_, Mlp>,
    h: &Var<f64, Shape![5, I]>,
    l: &Lin<I, O>,
) -> Var<f64, Shape![5, O]> {
    h.matmul(&leaves.var(&l.weight)) + &leaves.var(&l.bias)
}

#[test]
fn loss_with_aux_equals_the_tape() {
    let model = mlp();
    let x: Tensor![f64; 5, 4] = Tensor::rand_uniform(5, -1.0, 1.0);
    let labels = [0, 2, 1, 1, 0];
    let ((loss, logits, n), g) = loss_and_logits_grad(&model, &x, &labels);
    assert_eq!(n, 5);
    let leaves = Leaves::new(&model);
    let h = lin(&leaves, &Var::constant(x.clone()), &model.fc1).relu();
    let z = lin(&leaves, &h, &model.fc2);
    let l = z.cross_entropy(&labels);
    l.backward().unwrap();
    assert!(
        (l.item() - loss).abs() <= 1e-14 * loss.abs(),
        "{} vs {loss}",
        l.item()
    );
    z.value().assert_close(&logits, 1e-14, 1e-15);
    same_model(&leaves.grads(), &g.model);
    // Not zero: every tensor of the model moves the loss.
    for i in 0..Mlp::COUNT {
        assert!(
            g.model.slice(i).iter().any(|v| v.abs() > 1e-3),
            "{}",
            Mlp::path(i)
        );
    }
}

#[test]
fn vjp_of_two_tensors_equals_the_tape() {
    let x = Tensor::new([0.5, -1.0, 2.0]);
    let ct_y = Tensor::new([1.0, 2.0, 3.0]);
    let ct_s = Tensor::new(0.5);
    let (_, g) = two_outputs_vjp(&x, &(ct_y.clone(), ct_s.clone()));
    let xv = Var::param(x.clone());
    let (y, s) = (xv.exp(), xv.square().sum());
    ((&y * &ct_y).sum() + &s * &ct_s).backward().unwrap();
    xv.grad().unwrap().assert_close(&g.x, 1e-12, 1e-12);
    // ct_y exp(x) + 2 ct_s x, by hand.
    let want = [
        0.5f64.exp() + 0.5,
        2.0 * (-1.0f64).exp() - 1.0,
        3.0 * 2.0f64.exp() + 2.0,
    ];
    g.x.assert_close(&Tensor::new(want), 1e-14, 0.0);
}

/// A model with two tensor outputs that share an intermediate: the hidden layer and the logits.
#[allow(clippy::type_complexity, reason = "the two outputs, spelled out")]
#[differentiable]
fn hidden_and_logits(
    model: &Mlp,
    x: &Tensor![f64; 5, 4],
) -> (Tensor![f64; 5, 8], Tensor![f64; 5, 3]) {
    let h = model.fc1.forward(x).tanh();
    let logits = model.fc2.forward(&h);
    (h, logits)
}

#[test]
fn vjp_of_a_model_with_two_tensor_outputs_equals_the_tape() {
    let model = mlp();
    let x: Tensor![f64; 5, 4] = Tensor::rand_uniform(6, -1.0, 1.0);
    let ct_h: Tensor![f64; 5, 8] = Tensor::rand_uniform(7, -1.0, 1.0);
    let ct_z: Tensor![f64; 5, 3] = Tensor::rand_uniform(8, -1.0, 1.0);
    let ((h, z), g) = hidden_and_logits_vjp(&model, &x, &(ct_h.clone(), ct_z.clone()));
    assert_eq!((h.clone(), z.clone()), hidden_and_logits(&model, &x));
    let leaves = Leaves::new(&model);
    let xv = Var::param(x.clone());
    let th = lin(&leaves, &xv, &model.fc1).tanh();
    let tz = lin(&leaves, &th, &model.fc2);
    ((&th * &ct_h).sum() + (&tz * &ct_z).sum())
        .backward()
        .unwrap();
    assert_eq!((th.value(), tz.value()), (&h, &z));
    same_model(&leaves.grads(), &g.model);
    xv.grad().unwrap().assert_close(&g.x, 1e-12, 1e-12);
    // And central differences of <ct, outputs>.
    let pairing = |m: &Mlp, x: &Tensor![f64; 5, 4]| {
        let (h, z) = hidden_and_logits(m, x);
        (&h * &ct_h).sum().item() + (&z * &ct_z).sum().item()
    };
    check_model(|m| pairing(m, &x), &model, &g.model);
    check_gradient(|x| pairing(&model, x), &x, &g.x, Tolerance::default()).unwrap();
}
