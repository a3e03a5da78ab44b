//! An out-of-range label reaching `cross_entropy` panics at the caller's line, not inside the
//! library: the Tensor method, the tape's `Var` method and the rule's forward are all
//! `#[track_caller]`, down to the check that panics; in a `#[differentiable]` function, the
//! generated calls carry the user's span and the glue they call is `#[track_caller]` too.

use autograd_core::differentiable;
use autograd_core::prelude::*;
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// Where this thread's last panic was raised, as `(file, line)`.
    static LAST_PANIC: RefCell<Option<(String, u32)>> = const { RefCell::new(None) };
    /// Whether this thread is inside [`panic_site`], whose panics the hook records.
    static WATCHED: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, expects it to panic, and returns the panic's message and location. The hook is
/// process-wide, so it records into the panicking thread's own slot: tests on other threads do
/// not disturb each other. Panics outside `panic_site` (the other tests of this binary) go to
/// the previous hook, which prints their message.
fn panic_site(f: impl FnOnce()) -> (String, String, u32) {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if WATCHED.get() {
                let at = info.location().map(|l| (l.file().to_string(), l.line()));
                LAST_PANIC.with(|p| *p.borrow_mut() = at);
            } else {
                previous(info);
            }
        }));
    });
    LAST_PANIC.with(|p| p.borrow_mut().take());
    WATCHED.set(true);
    let payload = panic::catch_unwind(AssertUnwindSafe(f));
    WATCHED.set(false);
    let payload = payload.expect_err("expected a panic");
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_string()))
        .unwrap_or_default();
    let (file, line) = LAST_PANIC
        .with(|p| p.borrow_mut().take())
        .expect("the hook saw the panic");
    (message, file, line)
}

#[test]
fn tensor_cross_entropy_panics_at_the_callers_line() {
    let z: Tensor![f32; 2, 10] = Tensor::zeros();
    let mut line = 0;
    let (message, file, at) = panic_site(|| {
        line = line!() + 1;
        let _ = z.cross_entropy(&[3, 10]);
    });
    assert_eq!(
        message,
        "cross_entropy: label 10 (row 1) is out of range for 10 classes; labels must be below 10"
    );
    assert_eq!((file.as_str(), at), (file!(), line));
}

#[test]
fn var_cross_entropy_panics_at_the_callers_line() {
    let z: Var<f32, Shape![3, 4]> = Var::param(Tensor::zeros());
    let mut line = 0;
    let (message, file, at) = panic_site(|| {
        line = line!() + 1;
        let _ = z.cross_entropy(&[0, usize::MAX, 1]);
    });
    assert_eq!(
        message,
        format!(
            "cross_entropy: label {} (row 1) is out of range for 4 classes; labels must be below 4",
            usize::MAX
        )
    );
    assert_eq!((file.as_str(), at), (file!(), line));
    // A constant takes the same path (recorded or not, the rule's forward runs).
    let c: Var<f32, Shape![1, 4]> = Var::constant(Tensor::zeros());
    let (_, file, at) = panic_site(|| {
        line = line!() + 1;
        let _ = c.cross_entropy(&[4]);
    });
    assert_eq!((file.as_str(), at), (file!(), line));
}

#[differentiable]
fn loss_of(z: &Tensor![f32; 2, 10], labels: &[usize; 2]) -> f32 {
    let y = z * 2.0;
    let l = y.cross_entropy(labels); // CROSS_ENTROPY_LINE
    l.item()
}

#[test]
fn a_generated_gradient_panics_at_the_line_of_the_differentiable_function() {
    let line = include_str!("label_panic_location.rs")
        .lines()
        .position(|l| l.contains("CROSS_ENTROPY_LINE") && l.contains("let l"))
        .expect("marker")
        + 1;
    let z: Tensor![f32; 2, 10] = Tensor::zeros();
    for f in [
        (|z: &Tensor![f32; 2, 10]| drop(loss_of_grad(z, &[3, 10]))) as fn(&_),
        |z| drop(loss_of_vjp(z, &[3, 10], &1.0)),
    ] {
        let (message, file, at) = panic_site(|| f(&z));
        assert!(
            message.contains("label 10 (row 1) is out of range"),
            "{message}"
        );
        assert_eq!((file.as_str(), at as usize), (file!(), line));
    }
}
