//! The checkpoint module's unit tests: the file format, the model mapping, the atomic save and
//! the lock.

use super::format::{CHECKSUM_AT, CHECKSUM_KEY, CHECKSUM_PLACEHOLDER, Fnv, OLD_CHECKSUM_KEY};
use super::*;
use crate::prelude::*;
use crate::tape::test_models::{Lin, Mlp, mlp};
use safetensors::{Dtype, SafeTensors};

fn sample() -> Checkpoint {
    let mut c = Checkpoint::new();
    c.put("a", &Tensor::<f32, Shape![2, 3]>::randn(1));
    c.put("b", &Tensor::<f64, Shape![4]>::randn(2));
    c.set_meta("step", 7);
    c.set_meta("epoch", 20);
    c.set_meta("batch", 3);
    c.set_meta("rng", 0x1234_5678_9abc_def0_u64);
    c
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ckpt-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn header_len(bytes: &[u8]) -> usize {
    8 + usize::try_from(u64::from_le_bytes(bytes[..8].try_into().unwrap())).unwrap()
}

#[test]
fn round_trip_in_memory() {
    let c = sample();
    let bytes = c.to_bytes().unwrap();
    assert_eq!(Checkpoint::from_bytes(&bytes).unwrap(), c);
}

#[test]
fn truncation_is_detected_at_every_length() {
    let bytes = sample().to_bytes().unwrap();
    for len in 0..bytes.len() {
        let err = Checkpoint::from_bytes(&bytes[..len]).unwrap_err();
        assert!(
            matches!(
                err,
                CheckpointError::Format { .. } | CheckpointError::Checksum { .. }
            ),
            "length {len}: {err}"
        );
    }
}

/// Every bit of the header (length prefix, JSON, metadata, checksum, padding): exhaustive.
#[test]
fn every_single_bit_flip_of_the_header_is_rejected() {
    let bytes = sample().to_bytes().unwrap();
    let header = header_len(&bytes);
    assert!(bytes[..header].ends_with(b" "), "the sample has padding");
    for bit in 0..8 * header {
        let mut bad = bytes.clone();
        bad[bit / 8] ^= 1 << (bit % 8);
        let err = Checkpoint::from_bytes(&bad).unwrap_err();
        assert!(
            matches!(
                err,
                CheckpointError::Format { .. } | CheckpointError::Checksum { .. }
            ),
            "bit {bit}: {err}"
        );
    }
}

/// Every bit of the data of the small sample: a flip in the tensors is a checksum mismatch.
#[test]
fn every_single_bit_flip_of_the_data_is_rejected() {
    let bytes = sample().to_bytes().unwrap();
    for bit in 8 * header_len(&bytes)..8 * bytes.len() {
        let mut bad = bytes.clone();
        bad[bit / 8] ^= 1 << (bit % 8);
        let err = Checkpoint::from_bytes(&bad).unwrap_err();
        assert!(
            matches!(err, CheckpointError::Checksum { .. }),
            "bit {bit}: {err}"
        );
    }
}

#[test]
fn an_edited_epoch_is_rejected() {
    let bytes = sample().to_bytes().unwrap();
    let at = bytes
        .windows(12)
        .position(|w| w == b"\"epoch\":\"20\"")
        .unwrap();
    let mut bad = bytes.clone();
    bad[at + 9..at + 11].copy_from_slice(b"99");
    let err = Checkpoint::from_bytes(&bad).unwrap_err();
    assert_eq!(
        err.to_string(),
        "<in-memory checkpoint> is corrupted: its contents do not match the checksum it was \
         written with"
    );
}

#[test]
fn the_same_state_gives_the_same_bytes() {
    // The same contents put in another order.
    let mut other = Checkpoint::new();
    other.set_meta("rng", 0x1234_5678_9abc_def0_u64);
    other.set_meta("batch", 3);
    other.set_meta("epoch", 20);
    other.set_meta("step", 7);
    other.put("b", &Tensor::<f64, Shape![4]>::randn(2));
    other.put("a", &Tensor::<f32, Shape![2, 3]>::randn(1));
    let first = sample().to_bytes().unwrap();
    assert_eq!(sample().to_bytes().unwrap(), first);
    assert_eq!(other.to_bytes().unwrap(), first);
    let dir = scratch("same-bytes");
    sample().save(dir.join("1")).unwrap();
    sample().save(dir.join("2")).unwrap();
    assert_eq!(std::fs::read(dir.join("1")).unwrap(), first);
    assert_eq!(std::fs::read(dir.join("2")).unwrap(), first);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The whole file of a tiny checkpoint, byte for byte: the format is fixed.
#[test]
fn the_file_layout_is_exactly_this() {
    let mut c = Checkpoint::new();
    c.put("w", &Tensor::<f32, Shape![2]>::new([1.0, -2.0]));
    c.put("d", &Tensor::<f64, Shape![1]>::new([0.5]));
    c.set_meta("step", 3);
    let bytes = c.to_bytes().unwrap();
    let header = concat!(
        r#"{"__metadata__":{"autograd.file_checksum":"SUM","step":"3"},"#,
        r#""d":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},"#,
        r#""w":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}"#
    );
    let sum = std::str::from_utf8(&bytes[CHECKSUM_AT..CHECKSUM_AT + 16]).unwrap();
    let mut header = header.replace("SUM", sum);
    while !header.len().is_multiple_of(8) {
        header.push(' ');
    }
    let mut want = (header.len() as u64).to_le_bytes().to_vec();
    want.extend_from_slice(header.as_bytes());
    want.extend_from_slice(&0.5f64.to_le_bytes());
    want.extend_from_slice(&1.0f32.to_le_bytes());
    want.extend_from_slice(&(-2.0f32).to_le_bytes());
    assert_eq!(
        std::str::from_utf8(&bytes[8..8 + header.len()]).unwrap(),
        header
    );
    assert_eq!(bytes, want);
    // The checksum is FNV-1a of the file with its own digits as zeros.
    let mut zeroed = bytes.clone();
    zeroed[CHECKSUM_AT..CHECKSUM_AT + 16].copy_from_slice(CHECKSUM_PLACEHOLDER);
    let mut h = Fnv::new();
    h.eat(&zeroed);
    assert_eq!(sum, format!("{:016x}", h.0));
    // The safetensors reader agrees on every tensor.
    let st = SafeTensors::deserialize(&bytes).unwrap();
    assert_eq!(st.tensor("d").unwrap().data(), 0.5f64.to_le_bytes());
    assert_eq!(st.tensor("w").unwrap().shape(), [2]);
}

#[test]
fn names_and_values_needing_json_escapes_round_trip() {
    let mut c = Checkpoint::new();
    let odd = "quote\" backslash\\ newline\n tab\t bell\u{7} é 字";
    c.put(odd, &Tensor::<f32, Shape![1]>::new([1.5]));
    c.set_meta(odd, odd);
    let bytes = c.to_bytes().unwrap();
    assert!(
        SafeTensors::deserialize(&bytes)
            .unwrap()
            .tensor(odd)
            .is_ok()
    );
    let back = Checkpoint::from_bytes(&bytes).unwrap();
    assert_eq!(back, c);
    assert_eq!(back.meta(odd), Some(odd));
}

#[test]
fn fnv_is_the_published_function() {
    // Test vectors of FNV-1a 64 (Fowler, Noll, Vo).
    for (input, want) in [
        (&b""[..], 0xcbf2_9ce4_8422_2325_u64),
        (b"a", 0xaf63_dc4c_8601_ec8c),
        (b"foobar", 0x8594_4171_f739_67e8),
    ] {
        let mut h = Fnv::new();
        h.eat(input);
        assert_eq!(h.0, want, "{input:?}");
    }
}

#[test]
fn non_finite_values_are_refused_on_save_and_on_load() {
    let dir = scratch("non-finite");
    let path = dir.join("c.safetensors");
    sample().save(&path).unwrap();
    let good = std::fs::read(&path).unwrap();
    let mut bad = sample();
    bad.put(
        "adam.v",
        &Tensor::<f32, Shape![3]>::new([1.0, f32::INFINITY, f32::NAN]),
    );
    let err = bad.save(&path).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: tensor `adam.v` holds inf at index 1; a checkpoint must hold finite numbers \
             (the training diverged: lower the learning rate, or resume from an earlier \
             checkpoint)",
            path.display()
        )
    );
    // The good checkpoint is still there, and no temporary file.
    assert_eq!(std::fs::read(&path).unwrap(), good);
    assert_eq!(files(&dir), ["c.safetensors"]);
    // A file holding NaN with a valid checksum (as a foreign writer could make) is refused.
    let mut nan = sample();
    nan.put("b", &Tensor::<f64, Shape![2]>::new([0.0, f64::NAN]));
    std::fs::write(&path, nan.encode(&path, false).unwrap()).unwrap();
    let err = Checkpoint::load(&path).unwrap_err();
    assert!(
        matches!(&err, CheckpointError::NonFinite { name, index: 1, value, .. }
            if name == "b" && value == "NaN"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_earlier_versions_checkpoint_is_refused_with_the_reason() {
    // What the earlier version wrote: its checksum, over the tensors only, in the metadata.
    let data = 1.0f32.to_le_bytes();
    let t = safetensors::tensor::TensorView::new(Dtype::F32, vec![1], &data).unwrap();
    let meta = [(OLD_CHECKSUM_KEY.to_string(), "0123456789abcdef".to_string())];
    let bytes =
        safetensors::serialize([("w", t.clone())], Some(meta.into_iter().collect())).unwrap();
    let err = Checkpoint::from_bytes(&bytes).unwrap_err();
    assert_eq!(
        err.to_string(),
        "<in-memory checkpoint> is not a readable checkpoint: it was written by an earlier \
         version of autograd, whose checksum does not cover the metadata, so it cannot be \
         verified; train again to write a new checkpoint"
    );
    let bytes = safetensors::serialize([("w", t.clone())], None).unwrap();
    assert!(
        matches!(
            Checkpoint::from_bytes(&bytes),
            Err(CheckpointError::Format { .. })
        ),
        "a safetensors file of another writer"
    );
}

#[test]
fn reserved_names_are_refused() {
    let mut c = sample();
    c.set_meta(CHECKSUM_KEY, "x");
    assert_eq!(
        c.to_bytes().unwrap_err().to_string(),
        "`autograd.file_checksum` is reserved by the checkpoint format: use another name"
    );
    let mut c = sample();
    c.put("__metadata__", &Tensor::<f32, Shape![1]>::new([1.0]));
    assert!(matches!(
        c.to_bytes(),
        Err(CheckpointError::Reserved { name }) if name == "__metadata__"
    ));
}

#[test]
fn mismatches_name_both_sides() {
    let c = sample();
    let e = c.get::<f64, Shape![2, 3], Inline>("a").unwrap_err();
    assert_eq!(
        e.to_string(),
        "tensor `a` holds F32 in the checkpoint, but the model expects F64"
    );
    let e = c.get::<f32, Shape![6], Inline>("a").unwrap_err();
    assert_eq!(
        e.to_string(),
        "tensor `a` has shape [2, 3] in the checkpoint, but the model expects [6]"
    );
    let e = c.get::<f32, Shape![6], Inline>("zzz").unwrap_err();
    assert_eq!(e.to_string(), "tensor `zzz` is not in the checkpoint");
}

/// Every element's bits (widening to f64 is exact, so equal bits mean equal bits).
fn bits<P: Params>(m: &P) -> Vec<u64> {
    (0..P::COUNT)
        .flat_map(|i| m.slice(i).iter().map(|v| v.to_f64().to_bits()))
        .collect()
}

#[test]
fn a_model_round_trips_bit_for_bit_under_its_paths() {
    let model: Mlp<f32, 4, 3, 2> = mlp(3);
    let moment: Mlp<f64, 4, 3, 2> = mlp(4);
    let mut c = Checkpoint::new();
    c.put_model("model", &model);
    c.put_model("adam.m.", &moment); // a trailing dot is not doubled
    assert_eq!(
        c.names().collect::<Vec<_>>(),
        [
            "adam.m.fc1.bias",
            "adam.m.fc1.weight",
            "adam.m.fc2.bias",
            "adam.m.fc2.weight",
            "model.fc1.bias",
            "model.fc1.weight",
            "model.fc2.bias",
            "model.fc2.weight",
        ]
    );
    let back = Checkpoint::from_bytes(&c.to_bytes().unwrap()).unwrap();
    let mut m = model.zeros_like();
    let mut v = moment.zeros_like();
    back.get_model("model", &mut m).unwrap();
    back.get_model("adam.m", &mut v).unwrap();
    assert_eq!(bits(&m), bits(&model));
    assert_eq!(bits(&v), bits(&moment));
    // No prefix: the names are the paths, and the whole checkpoint is the model.
    let mut bare = Checkpoint::new();
    bare.put_model("", &model);
    assert_eq!(
        bare.names().collect::<Vec<_>>(),
        ["fc1.bias", "fc1.weight", "fc2.bias", "fc2.weight"]
    );
    let mut m = model.zeros_like();
    bare.get_model("", &mut m).unwrap();
    assert_eq!(m, model);
    // A bare tensor under a prefix is named by the prefix alone.
    let mut one = Checkpoint::new();
    one.put_model("w", &model.fc1.bias);
    assert_eq!(one.names().collect::<Vec<_>>(), ["w"]);
}

/// The checkpoint of an `Mlp<f32, 4, 3, 2>` under `model`, with the names in `skip` left out.
fn mlp_checkpoint(skip: &[&str]) -> Checkpoint {
    let mut full = Checkpoint::new();
    full.put_model("model", &mlp::<f32, 4, 3, 2>(3));
    let mut c = Checkpoint::new();
    for (name, e) in full.tensors {
        if !skip.contains(&name.as_str()) {
            c.tensors.insert(name, e);
        }
    }
    c
}

/// Loads `c` into a copy of `model` and checks the load failed and changed nothing.
fn failed_load<P: Params + PartialEq + std::fmt::Debug>(
    c: &Checkpoint,
    prefix: &str,
    model: &P,
) -> CheckpointError
where
    P::Elem: Element,
{
    let mut target = model.clone();
    let err = c.get_model(prefix, &mut target).unwrap_err();
    assert_eq!(
        &target, model,
        "a failed load must leave the model as it was"
    );
    err
}

#[test]
fn a_missing_tensor_is_named_and_nothing_is_loaded() {
    let model: Mlp<f32, 4, 3, 2> = mlp(9);
    let c = mlp_checkpoint(&["model.fc2.bias"]);
    let err = failed_load(&c, "model", &model);
    assert!(matches!(&err, CheckpointError::Missing { name } if name == "model.fc2.bias"));
    assert_eq!(
        err.to_string(),
        "tensor `model.fc2.bias` is not in the checkpoint"
    );
}

#[test]
fn an_extra_tensor_under_the_prefix_is_named_and_nothing_is_loaded() {
    let model: Mlp<f32, 4, 3, 2> = mlp(9);
    let mut c = mlp_checkpoint(&[]);
    // Names beside the prefix are not the model's business.
    c.put("model2.fc1.weight", &Tensor::<f32, Shape![1]>::new([1.0]));
    c.put("modelx", &Tensor::<f32, Shape![1]>::new([1.0]));
    c.put(
        "adam.m.fc1.weight",
        &Tensor::<f64, Shape![2]>::new([1.0, 2.0]),
    );
    let mut loaded = model.clone();
    c.get_model("model", &mut loaded).unwrap();
    assert_eq!(loaded, mlp(3));
    // A tensor under it that the model lacks is refused.
    c.put("model.fc3.weight", &Tensor::<f32, Shape![2, 2]>::zeros());
    let err = failed_load(&c, "model", &model);
    assert!(matches!(&err, CheckpointError::Unexpected { name, prefix }
        if name == "model.fc3.weight" && prefix == "model"));
    assert_eq!(
        err.to_string(),
        "tensor `model.fc3.weight` is in the checkpoint under `model` but the model has no \
         such tensor: the checkpoint holds another model (or another version of it); load it \
         into the model it was saved from"
    );
    // With no prefix every tensor of the checkpoint must be the model's.
    let mut bare = Checkpoint::new();
    bare.put_model("", &model);
    bare.put("step", &Tensor::<f32, Shape![1]>::new([3.0]));
    let err = failed_load(&bare, "", &model);
    assert_eq!(
        err.to_string(),
        "tensor `step` is in the checkpoint but the model has no such tensor: the checkpoint \
         holds another model (or another version of it); load it into the model it was saved \
         from"
    );
}

#[test]
fn a_wrong_shape_names_both_shapes_and_nothing_is_loaded() {
    // fc1 matches, fc2 has 5 outputs instead of 2: fc1 must not be loaded either.
    let model: Mlp<f32, 4, 3, 5> = mlp(9);
    let err = failed_load(&mlp_checkpoint(&[]), "model", &model);
    assert!(matches!(&err, CheckpointError::Shape { name, file, model }
        if name == "model.fc2.weight" && file == &[3, 2] && model == &[3, 5]));
    assert_eq!(
        err.to_string(),
        "tensor `model.fc2.weight` has shape [3, 2] in the checkpoint, but the model expects \
         [3, 5]"
    );
}

#[test]
fn a_wrong_dtype_names_both_dtypes_and_nothing_is_loaded() {
    let model: Mlp<f32, 4, 3, 2> = mlp(9);
    let mut c = mlp_checkpoint(&[]);
    c.put("model.fc2.bias", &Tensor::<f64, Shape![2]>::new([1.0, 2.0]));
    let err = failed_load(&c, "model", &model);
    assert_eq!(
        err.to_string(),
        "tensor `model.fc2.bias` holds F64 in the checkpoint, but the model expects F32"
    );
    // The whole model in the other precision.
    let wide: Mlp<f64, 4, 3, 2> = mlp(9);
    let err = failed_load(&mlp_checkpoint(&[]), "model", &wide);
    assert!(matches!(&err, CheckpointError::Dtype { name, file, model }
        if name == "model.fc1.weight" && file == "F32" && model == "F64"));
}

#[test]
#[should_panic(expected = "a model that is a single tensor or float has no path of its own")]
fn a_bare_tensor_needs_a_prefix() {
    let lin: Lin<f32, 2, 2> = mlp::<f32, 2, 2, 2>(0).fc1;
    Checkpoint::new().put_model("", &lin.bias);
}

#[test]
fn save_is_atomic_and_leaves_no_temporary_file() {
    let dir = scratch("atomic");
    let path = dir.join("c.safetensors");
    sample().save(&path).unwrap();
    let mut c2 = sample();
    c2.set_meta("step", 8);
    c2.save(&path).unwrap();
    assert_eq!(Checkpoint::load(&path).unwrap().meta("step"), Some("8"));
    assert_eq!(files(&dir), ["c.safetensors"]);
    let missing = Checkpoint::load(dir.join("nope")).unwrap_err();
    assert!(matches!(missing, CheckpointError::Io { .. }));
    // A save prepared and dropped leaves the checkpoint and removes its temporary file.
    let pending = sample().prepare_save(&path).unwrap();
    assert!(pending.temporary().exists());
    drop(pending);
    assert_eq!(files(&dir), ["c.safetensors"]);
    assert_eq!(Checkpoint::load(&path).unwrap().meta("step"), Some("8"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
#[test]
fn non_regular_files_are_refused_at_once() {
    let dir = scratch("non-regular");
    let fifo = dir.join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let want = format!(
        "{} is a FIFO, not a regular file: a checkpoint must be a regular file",
        fifo.display()
    );
    // Without the check, opening the FIFO would wait for a writer forever.
    assert_eq!(Checkpoint::load(&fifo).unwrap_err().to_string(), want);
    assert_eq!(sample().save(&fifo).unwrap_err().to_string(), want);
    assert_eq!(
        CheckpointLock::acquire(&fifo).unwrap_err().to_string(),
        want
    );
    // Nothing was created or replaced: no lock file, no temporary file, the FIFO is intact.
    assert_eq!(files(&dir), ["fifo"]);
    assert!(matches!(
        Checkpoint::load(&dir),
        Err(CheckpointError::NotARegularFile {
            kind: "a directory",
            ..
        })
    ));
    #[cfg(target_os = "linux")]
    assert!(matches!(
        Checkpoint::load("/dev/zero"),
        Err(CheckpointError::NotARegularFile {
            kind: "a character device",
            ..
        })
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_lock_excludes_a_second_run_and_removes_only_this_modules_temporaries() {
    let dir = scratch("lock");
    let path = dir.join("run.safetensors");
    sample().save(&path).unwrap();
    // A save killed mid-write: a prefix of a real checkpoint under the temporary file's name.
    let real = sample().to_bytes().unwrap();
    std::fs::write(
        dir.join("run.safetensors.autograd-tmp.4242.0"),
        &real[..100],
    )
    .unwrap();
    std::fs::write(dir.join("run.safetensors.autograd-tmp.4242.1"), b"").unwrap();
    // The user's files, some named like temporaries: all must survive.
    for (name, content) in [
        ("run.safetensors.tmp.backup", &real[..]),
        ("run.safetensors.tmp.4242", &real[..]),
        (
            "run.safetensors.autograd-tmp.4242.2",
            b"my notes, not a checkpoint",
        ),
        ("run.safetensors.autograd-tmp.mine", &real[..]),
        ("other.safetensors.autograd-tmp.4242.0", &real[..]),
    ] {
        std::fs::write(dir.join(name), content).unwrap();
    }
    let lock = CheckpointLock::acquire(&path).unwrap();
    assert_eq!(lock.path(), dir.join("run.safetensors.lock"));
    assert_eq!(
        files(&dir),
        [
            "other.safetensors.autograd-tmp.4242.0",
            "run.safetensors",
            "run.safetensors.autograd-tmp.4242.2",
            "run.safetensors.autograd-tmp.mine",
            "run.safetensors.lock",
            "run.safetensors.tmp.4242",
            "run.safetensors.tmp.backup",
        ]
    );
    let err = CheckpointLock::acquire(&path).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{} is in use by another run (process {}), which holds the lock {}: wait for it \
             to finish, or use another checkpoint path",
            path.display(),
            std::process::id(),
            lock.path().display()
        )
    );
    drop(lock);
    let again = CheckpointLock::acquire(&path).unwrap();
    drop(again);
    std::fs::remove_dir_all(&dir).unwrap();
}
