//! The generated gradient allocates nothing: a counting global allocator (`allocation-counter`)
//! sees zero heap allocations in ten gradient calls of the W1 and W2 MLPs (f32, ReLU hidden layer,
//! mean softmax cross-entropy), whose tensors are all inline, written with loose tensors and as a
//! model struct of two `nn::Linear` layers called through their differentiable `forward`.

use autograd_core::differentiable;
use autograd_core::nn::{Init, Linear};
use autograd_core::prelude::*;
#[differentiable(wrt(w1, b1, w2, b2))]
fn mlp<const B: usize, const I: usize, const H: usize, const O: usize>(
    w1: &Tensor![f32; I, H],
    b1: &Tensor![f32; H],
    w2: &Tensor![f32; H, O],
    b2: &Tensor![f32; O],
    x: &Tensor![f32; B, I],
    labels: &[usize; B],
) -> f32 {
    let h = (x.matmul(w1) + b1).relu();
    let logits = h.matmul(w2) + b2;
    logits.cross_entropy(labels).item()
}

/// The heap allocations of ten gradient calls after a warm-up call: the total, not a per-call
/// average, so that a single allocation in any call shows.
fn allocations_in_ten_calls<const B: usize, const I: usize, const H: usize, const O: usize>() -> u64
{
    let w1: Tensor![f32; I, H] = Tensor::rand_uniform(1, -0.1, 0.1);
    let b1: Tensor![f32; H] = Tensor::rand_uniform(2, -0.1, 0.1);
    let w2: Tensor![f32; H, O] = Tensor::rand_uniform(3, -0.1, 0.1);
    let b2: Tensor![f32; O] = Tensor::rand_uniform(4, -0.1, 0.1);
    let x: Tensor![f32; B, I] = Tensor::rand_uniform(5, -1.0, 1.0);
    let labels: [usize; B] = core::array::from_fn(|i| i % O);
    let _ = mlp_grad(&w1, &b1, &w2, &b2, &x, &labels); // warm-up
    let mut total = 0.0;
    let info = allocation_counter::measure(|| {
        for _ in 0..10 {
            let (loss, g) = mlp_grad(&w1, &b1, &w2, &b2, &x, &labels);
            total += loss + g.w1.as_slice()[0] + g.b2.as_slice()[0];
        }
    });
    assert!(total.is_finite());
    info.count_total
}

#[derive(Clone, Params)]
struct Mlp<const I: usize, const H: usize, const O: usize> {
    fc1: Linear<f32, I, H>,
    fc2: Linear<f32, H, O>,
}

#[differentiable]
fn mlp_struct<const B: usize, const I: usize, const H: usize, const O: usize>(
    model: &Mlp<I, H, O>,
    x: &Tensor![f32; B, I],
    labels: &[usize; B],
) -> f32 {
    let h = model.fc1.forward(x).relu();
    model.fc2.forward(&h).cross_entropy(labels).item()
}

/// [`allocations_in_ten_calls`] for the model struct.
fn struct_allocations_in_ten_calls<
    const B: usize,
    const I: usize,
    const H: usize,
    const O: usize,
>() -> u64 {
    let mut rng = Rng::new(1);
    let model = Mlp::<I, H, O> {
        fc1: Linear::new(Init::KaimingUniform, &mut rng),
        fc2: Linear::new(Init::KaimingUniform, &mut rng),
    };
    let x: Tensor![f32; B, I] = Tensor::rand_uniform(5, -1.0, 1.0);
    let labels: [usize; B] = core::array::from_fn(|i| i % O);
    let _ = mlp_struct_grad(&model, &x, &labels); // warm-up
    let mut total = 0.0;
    let info = allocation_counter::measure(|| {
        for _ in 0..10 {
            let (loss, g) = mlp_struct_grad(&model, &x, &labels);
            total += loss + g.model.fc1.weight.as_slice()[0] + g.model.fc2.bias.as_slice()[0];
        }
    });
    assert!(total.is_finite());
    info.count_total
}

#[test]
fn struct_gradients_allocate_nothing() {
    assert_eq!(struct_allocations_in_ten_calls::<16, 4, 16, 3>(), 0);
    // W2, and the digits MLP (batch 32, 64 -> 128 -> 10) of `examples/05-digits.rs`.
    let sizes: [fn() -> u64; 2] = [
        struct_allocations_in_ten_calls::<64, 64, 128, 10>,
        struct_allocations_in_ten_calls::<32, 64, 128, 10>,
    ];
    for count in sizes {
        let n = std::thread::Builder::new()
            .stack_size(16 << 20)
            .spawn(count)
            .expect("spawn")
            .join()
            .expect("join");
        assert_eq!(n, 0);
    }
}

#[test]
fn w1_gradient_allocates_nothing() {
    // W1: batch 16, 4 -> 16 -> 3.
    assert_eq!(allocations_in_ten_calls::<16, 4, 16, 3>(), 0);
}

#[test]
fn w2_gradient_allocates_nothing() {
    // W2: batch 64, 64 -> 128 -> 10 (about 200 KiB of inline tensors: run on a thread with room).
    let n = std::thread::Builder::new()
        .stack_size(16 << 20)
        .spawn(allocations_in_ten_calls::<64, 64, 128, 10>)
        .expect("spawn")
        .join()
        .expect("join");
    assert_eq!(n, 0);
}

#[differentiable(wrt(w))]
fn heap_loss(w: &Tensor![f32; 8, 8; Heap], x: &Tensor![f32; 4, 8; Heap]) -> f32 {
    x.matmul(w).relu().sum().item()
}

#[test]
fn the_counter_sees_heap_tensors() {
    // The same machinery on heap storage allocates: the counter is live.
    let w: Tensor![f32; 8, 8; Heap] = Tensor::ones();
    let x: Tensor![f32; 4, 8; Heap] = Tensor::ones();
    let info = allocation_counter::measure(|| {
        std::hint::black_box(heap_loss_grad(&w, &x));
    });
    assert!(info.count_total >= 1);
}
