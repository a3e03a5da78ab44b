//! Tells the MPI tests (`tests/mpi`, feature `mpi`) whether `mpirun` is on `PATH` (cfg
//! `mpirun_missing` when it is not), so that without it they show as ignored, with the reason,
//! rather than pass having run nothing. Cargo reruns this when `PATH` changes; after installing
//! Open MPI on an unchanged `PATH`, `touch build.rs`.

fn main() {
    println!("cargo:rerun-if-env-changed=PATH");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-check-cfg=cfg(mpirun_missing)");
    let found = std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|p| p.join("mpirun").is_file()));
    if !found {
        println!("cargo:rustc-cfg=mpirun_missing");
    }
}
