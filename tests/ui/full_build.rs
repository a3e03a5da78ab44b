// A case that must compile and run. Its presence makes trybuild build every case fully instead of
// only type-checking it: the post-monomorphization errors pinned next to it (reshape element counts,
// slice bounds, repeated permutation axes, convolution sizes) appear only in a full build. It also pins the forms that
// must keep compiling: sizes inferred from an annotation with `_`, and an inline tensor exactly at
// the inline limit (64 KiB).
use autograd_core::prelude::*;

fn main() {
    let x: Tensor![f32; 2, 3] = Tensor::new([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    let flat: Tensor![f32; 6] = x.reshape();
    let padded: Tensor![f32; 2, 5] = x.pad::<1, 1, 1, _>();
    let joined: Tensor![f32; 4, 3] = x.concat::<0, _, _>(&x);
    let cube: Tensor![f32; 3, 2, 1] = x.reshape::<Shape![2, 3, 1]>().permute::<1, 0, 2>();
    assert_eq!(flat.sum().item(), 21.0);
    assert_eq!(padded.slice::<1, 1, 3>(), x);
    assert_eq!(joined.slice::<0, 2, 2>(), x);
    assert_eq!(cube.shape(), vec![3, 2, 1]);
    let image: Tensor![f32; 2, 1, 8, 8] = Tensor::ones();
    let kernel: Tensor![f32; 4, 1, 3, 3] = Tensor::ones();
    let conv: Tensor![f32; 2, 4, 8, 8] = image.conv2d::<1, 1, 1, 1, _, _>(&kernel);
    assert_eq!(conv.as_slice()[9], 9.0);
    let at_limit: Tensor![f32; 128, 128] = Tensor::ones();
    assert_eq!(at_limit.sum().item(), 16384.0);
}
