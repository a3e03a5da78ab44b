//! Where tensors live: small ones inline (no heap), big ones on the heap without a stack temporary.

use autograd_core::prelude::*;

/// Creating, adding and multiplying 16x16 tensors touches no allocator.
#[test]
fn small_tensors_do_not_allocate() {
    let info = allocation_counter::measure(|| {
        let a: Tensor![f32; 16, 16] = Tensor::from_fn(|i| (i[0] * 16 + i[1]) as f32);
        let b: Tensor![f32; 16, 16] = Tensor::ones();
        let c = &a + &b;
        let d = &c * &a;
        let e = &d * 0.5 - &Tensor::<f32, Shape![16]>::ones();
        let f = e.matmul(&a);
        std::hint::black_box(f.sum().item());
    });
    assert_eq!(
        info.count_total, 0,
        "inline tensors allocated {} times",
        info.count_total
    );
}

/// The same ops on heap storage do allocate: the counter is live (a test that could not fail
/// would prove nothing).
#[test]
fn heap_tensors_allocate() {
    let info = allocation_counter::measure(|| {
        let a: Tensor![f32; 16, 16; Heap] = Tensor::ones();
        std::hint::black_box(a.sum().item());
    });
    assert!(info.count_total >= 1);
}

/// 1024x1024 f32 tensors (4 MiB each) on a thread with a 2 MiB stack: created, multiplied,
/// reduced and differentiated without ever passing through the stack.
#[test]
fn big_tensors_on_a_small_stack() {
    use autograd_core::rules::{BinaryRule, MatMul, Sum, UnaryRule};
    let worker = std::thread::Builder::new().stack_size(2 << 20).spawn(|| {
        type Big = Tensor![f32; 1024, 1024; Heap];
        let a: Big = Tensor::from_fn(|i| if i[0] == i[1] { 2.0 } else { 0.0 });
        let b: Big = Tensor::ones();
        // y = sum(a @ b) with a = 2I: every entry of a @ b is 2.
        let (c, c_res) = MatMul.forward(&a, &b);
        let (y, y_res) = Sum(autograd_core::rules::All).forward(&c);
        assert_eq!(y.item(), 2.0 * 1024.0 * 1024.0);
        // dy/dc = 1; dy/da = 1 @ b^T = 1024 everywhere; dy/db = a^T @ 1 = 2 everywhere.
        let c_bar =
            Sum(autograd_core::rules::All).vjp(&c, &y, &y_res, &Tensor::new(1.0).to_storage());
        let a_bar = MatMul.vjp_lhs(&a, &b, &c, &c_res, &c_bar);
        let b_bar = MatMul.vjp_rhs(&a, &b, &c, &c_res, &c_bar);
        assert!(a_bar.as_slice().iter().all(|&v| v == 1024.0));
        assert!(b_bar.as_slice().iter().all(|&v| v == 2.0));
        let row_max = c.max_axis::<1>();
        assert_eq!(row_max.as_slice()[0], 2.0);
    });
    worker
        .unwrap()
        .join()
        .expect("the 2 MiB thread overflowed or failed");
}
