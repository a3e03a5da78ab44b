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
        std::hint::black_box(e.sum().item());
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
