//! The machine a benchmark runs on, printed before its numbers: the CPU and the SIMD path the
//! library's matrix products take, which `AUTOGRAD_SIMD=avx2|avx512|scalar` forces.

use autograd_core::__bench::{SimdPath, force_simd_path};

/// The CPU's model name (from `/proc/cpuinfo`) and the SIMD instruction set the library's matrix
/// products dispatch to: pulp's `Arch::new()` takes AVX-512 (x86-64-v4) when the CPU has it, else
/// AVX2 + FMA (x86-64-v3), else scalar code; the same tests are made here.
pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown (no /proc/cpuinfo)".to_owned());
    #[cfg(target_arch = "x86_64")]
    let (v4, v3) = (
        pulp::x86::V4::try_new().is_some(),
        pulp::x86::V3::try_new().is_some(),
    );
    // `AUTOGRAD_SIMD=avx2` (or `avx512`, `scalar`) forces the kernels onto one path, so that one
    // machine measures both: the ratios then hold for that path.
    #[cfg(target_arch = "x86_64")]
    let path = match std::env::var("AUTOGRAD_SIMD").as_deref() {
        Ok("avx2") if v3 => {
            force_simd_path(SimdPath::Avx2);
            "AVX2 + FMA (x86-64-v3), forced by AUTOGRAD_SIMD=avx2"
        }
        Ok("avx512") if v4 => {
            force_simd_path(SimdPath::Avx512);
            "AVX-512 (x86-64-v4), forced by AUTOGRAD_SIMD=avx512"
        }
        Ok("scalar") => {
            force_simd_path(SimdPath::Scalar);
            "scalar, forced by AUTOGRAD_SIMD=scalar"
        }
        Ok(other) if other != "auto" => {
            panic!("AUTOGRAD_SIMD={other}: this CPU has no such path (auto, avx2, avx512, scalar)")
        }
        _ if v4 => "AVX-512 (x86-64-v4)",
        _ if v3 => "AVX2 + FMA (x86-64-v3)",
        _ => "scalar (no AVX2 + FMA)",
    };
    #[cfg(not(target_arch = "x86_64"))]
    let path = "pulp's dispatch for this architecture";
    format!("CPU: {cpu}; the matrix-product kernels take the {path} path")
}
