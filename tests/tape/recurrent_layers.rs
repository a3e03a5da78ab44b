//! `nn::GruCell` and `nn::LstmCell` against PyTorch's `nn.GRUCell` and `nn.LSTMCell` on the same
//! weights (the numbers below are printed by `tests/reference/pytorch_layers.py`, PyTorch 2, float64),
//! against central differences of the function as written, and on both engines.
#![allow(
    clippy::unreadable_literal,
    reason = "the numbers the reference script printed, as it printed them"
)]

use autograd_core::differentiable;
use autograd_core::nn::{GruCell, LstmCell};
use autograd_core::prelude::*;
use autograd_core::tape::Leaves;

/// `0.5 sin(0.37 k + seed)` for `k = 0, 1, ..`, as the script fills every tensor.
pub(super) fn fill<S: Shape>(seed: f64) -> Tensor<f64, S> {
    Tensor::try_from_iter((0..S::NUMEL).map(|k| 0.5 * (0.37 * k as f64 + seed).sin()))
        .expect("NUMEL elements")
}

pub(super) fn assert_close(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * w.abs().max(1.0),
            "{what}[{k}]: {g} against {w}"
        );
    }
}

type Gru = GruCell<f64, 3, 4>;
type Lstm = LstmCell<f64, 3, 4>;
type X = Tensor<f64, Shape![2, 3]>;
type State = Tensor<f64, Shape![2, 4]>;

fn gru() -> Gru {
    GruCell {
        weight_ih: fill(1.0),
        weight_hh: fill(2.0),
        bias_ih: fill(3.0),
        bias_hh: fill(4.0),
    }
}

fn lstm() -> Lstm {
    LstmCell {
        weight_ih: fill(11.0),
        weight_hh: fill(12.0),
        bias_ih: fill(13.0),
        bias_hh: fill(14.0),
    }
}

#[differentiable]
fn gru_loss(cell: &Gru, x: &X, h: &State, c: &State) -> Tensor<f64, ()> {
    (cell.forward(x, h).tanh() * c).sum()
}

#[differentiable]
fn lstm_loss(cell: &Lstm, x: &X, h: &State, c: &State, ch: &State, cc: &State) -> Tensor<f64, ()> {
    let (h1, c1) = cell.forward(x, h, c);
    (h1.tanh() * ch).sum() + (c1.tanh() * cc).sum()
}

#[test]
fn gru_cell_matches_pytorch() {
    let (cell, x, h, c) = (gru(), fill::<Shape![2, 3]>(5.0), fill(6.0), fill(99.0));
    assert_close("output", cell.forward(&x, &h).as_slice(), &GRU_OUT, 1e-14);
    let (_, g) = gru_loss_grad(&cell, &x, &h, &c);
    assert_close(
        "d weight_ih",
        g.cell.weight_ih.as_slice(),
        &GRU_D_WEIGHT_IH,
        1e-13,
    );
    assert_close(
        "d weight_hh",
        g.cell.weight_hh.as_slice(),
        &GRU_D_WEIGHT_HH,
        1e-13,
    );
    assert_close(
        "d bias_ih",
        g.cell.bias_ih.as_slice(),
        &GRU_D_BIAS_IH,
        1e-13,
    );
    assert_close(
        "d bias_hh",
        g.cell.bias_hh.as_slice(),
        &GRU_D_BIAS_HH,
        1e-13,
    );
    assert_close("d x", g.x.as_slice(), &GRU_D_X, 1e-13);
    assert_close("d h", g.h.as_slice(), &GRU_D_H, 1e-13);
}

#[test]
fn lstm_cell_matches_pytorch() {
    let (cell, x, h, c) = (lstm(), fill::<Shape![2, 3]>(15.0), fill(16.0), fill(17.0));
    let (h1, c1) = cell.forward(&x, &h, &c);
    assert_close("h", h1.as_slice(), &LSTM_H, 1e-14);
    assert_close("c", c1.as_slice(), &LSTM_C, 1e-14);
    let (_, g) = lstm_loss_grad(&cell, &x, &h, &c, &fill(99.0), &fill(98.0));
    assert_close(
        "d weight_ih",
        g.cell.weight_ih.as_slice(),
        &LSTM_D_WEIGHT_IH,
        1e-13,
    );
    assert_close(
        "d weight_hh",
        g.cell.weight_hh.as_slice(),
        &LSTM_D_WEIGHT_HH,
        1e-13,
    );
    assert_close(
        "d bias_ih",
        g.cell.bias_ih.as_slice(),
        &LSTM_D_BIAS_IH,
        1e-13,
    );
    assert_close(
        "d bias_hh",
        g.cell.bias_hh.as_slice(),
        &LSTM_D_BIAS_HH,
        1e-13,
    );
    assert_close("d x", g.x.as_slice(), &LSTM_D_X, 1e-13);
    assert_close("d h", g.h.as_slice(), &LSTM_D_H, 1e-13);
    assert_close("d c", g.c.as_slice(), &LSTM_D_C, 1e-13);
}

/// Central differences of the loss as written, on every weight of each cell, with seeded random
/// weights and inputs (not the script's).
#[test]
fn cells_agree_with_central_differences() {
    let mut rng = Rng::new(3);
    let gru: Gru = GruCell::new(&mut rng);
    let lstm: Lstm = LstmCell::new(&mut rng);
    let (x, h, c, d): (X, State, State, State) = (
        Tensor::randn(1),
        Tensor::randn(2),
        Tensor::randn(3),
        Tensor::randn(4),
    );
    let (_, g) = gru_loss_grad(&gru, &x, &h, &c);
    let (_, gl) = lstm_loss_grad(&lstm, &x, &h, &c, &d, &h);
    let eps = 1e-6;
    for i in 0..Gru::COUNT {
        for k in 0..gru.slice(i).len() {
            let (mut p, mut m) = (gru.clone(), gru.clone());
            p.slice_mut(i)[k] += eps;
            m.slice_mut(i)[k] -= eps;
            let fd =
                (gru_loss(&p, &x, &h, &c).item() - gru_loss(&m, &x, &h, &c).item()) / (2.0 * eps);
            let got = g.cell.slice(i)[k];
            assert!(
                (fd - got).abs() < 1e-8,
                "gru {}[{k}]: {got} against {fd}",
                Gru::path(i)
            );
        }
    }
    for i in 0..Lstm::COUNT {
        for k in 0..lstm.slice(i).len() {
            let (mut p, mut m) = (lstm.clone(), lstm.clone());
            p.slice_mut(i)[k] += eps;
            m.slice_mut(i)[k] -= eps;
            let f = |cell: &Lstm| lstm_loss(cell, &x, &h, &c, &d, &h).item();
            let fd = (f(&p) - f(&m)) / (2.0 * eps);
            let got = gl.cell.slice(i)[k];
            assert!(
                (fd - got).abs() < 1e-8,
                "lstm {}[{k}]: {got} against {fd}",
                Lstm::path(i)
            );
        }
    }
}

/// The same cell calls on the tape, with the cells tracked: values bit for bit, gradients to
/// 1e-12.
#[test]
fn cells_on_both_engines() {
    let (cell, x, h, c) = (
        gru(),
        fill::<Shape![2, 3]>(5.0),
        fill::<Shape![2, 4]>(6.0),
        fill(99.0),
    );
    let (value, g) = gru_loss_grad(&cell, &x, &h, &c);
    let tracked = Leaves::new(&cell);
    let (xv, hv) = (Var::param(x.clone()), Var::param(h.clone()));
    let out = cell.forward(&xv, &hv);
    assert_eq!(out.value(), &cell.forward(&x, &h));
    let loss = (out.tanh() * &c).sum();
    loss.backward().unwrap();
    assert_eq!(loss.item(), value.item());
    let tape = tracked.grads();
    for i in 0..Gru::COUNT {
        assert_close(&Gru::path(i), tape.slice(i), g.cell.slice(i), 1e-12);
    }
    assert_close(
        "gru d x",
        xv.grad().unwrap().as_slice(),
        g.x.as_slice(),
        1e-12,
    );
    assert_close(
        "gru d h",
        hv.grad().unwrap().as_slice(),
        g.h.as_slice(),
        1e-12,
    );
    drop(tracked);

    let (cell, x, h, c) = (
        lstm(),
        fill::<Shape![2, 3]>(15.0),
        fill::<Shape![2, 4]>(16.0),
        fill::<Shape![2, 4]>(17.0),
    );
    let (ch, cc) = (fill::<Shape![2, 4]>(99.0), fill::<Shape![2, 4]>(98.0));
    let (value, g) = lstm_loss_grad(&cell, &x, &h, &c, &ch, &cc);
    let tracked = Leaves::new(&cell);
    let (xv, hv, cv) = (
        Var::param(x.clone()),
        Var::param(h.clone()),
        Var::param(c.clone()),
    );
    let (h1, c1) = cell.forward(&xv, &hv, &cv);
    let (th, tc) = cell.forward(&x, &h, &c);
    assert_eq!((h1.value(), c1.value()), (&th, &tc));
    let loss = (h1.tanh() * &ch).sum() + (c1.tanh() * &cc).sum();
    loss.backward().unwrap();
    assert_eq!(loss.item(), value.item());
    let tape = tracked.grads();
    for i in 0..Lstm::COUNT {
        assert_close(&Lstm::path(i), tape.slice(i), g.cell.slice(i), 1e-12);
    }
    assert_close(
        "lstm d x",
        xv.grad().unwrap().as_slice(),
        g.x.as_slice(),
        1e-12,
    );
    assert_close(
        "lstm d h",
        hv.grad().unwrap().as_slice(),
        g.h.as_slice(),
        1e-12,
    );
    assert_close(
        "lstm d c",
        cv.grad().unwrap().as_slice(),
        g.c.as_slice(),
        1e-12,
    );
}

// Printed by `python3 tests/reference/pytorch_layers.py` (PyTorch 2.x, float64).
const GRU_OUT: [f64; 8] = [
    0.1595144194690037,
    0.4263502088890807,
    0.335972441031724,
    0.2877723426308382,
    0.3957447063278293,
    0.13517888772612852,
    0.2581506641966009,
    0.475014185292567,
];
const GRU_D_WEIGHT_IH: [f64; 36] = [
    0.01343411767624292,
    0.010604117406626633,
    0.006338899592186991,
    0.0038685407788845282,
    0.004285180491083575,
    0.004121841126504892,
    0.007257178297671803,
    0.004155692952252071,
    0.0004917540609819613,
    0.006282581724701507,
    0.007172018755136927,
    0.007090756692525495,
    -0.026870520794402976,
    -0.02229626657377208,
    -0.014704317268895966,
    -0.017181468372965355,
    -0.011572377015347888,
    -0.004397018717177815,
    -0.0055596630935278325,
    -0.0019909745833360864,
    0.0018471829966261928,
    0.004991592878119575,
    0.0009267216575482467,
    -0.003263576991924397,
    0.12714914611433603,
    0.10317631676741483,
    0.06523905696800646,
    0.09204002185202312,
    0.09482311115360421,
    0.08477233719586831,
    0.08120897827635126,
    0.10348705681887257,
    0.11175864770068922,
    0.03641914358052261,
    0.0488560955474408,
    0.054680604176317864,
];
const GRU_D_WEIGHT_HH: [f64; 48] = [
    0.0025091820544936123,
    -0.0026247729098728195,
    -0.00740347717425432,
    -0.011180155534381958,
    0.004299783457600008,
    0.002833491917282458,
    0.000983700538472208,
    -0.0009992300934724158,
    -0.0032125921831763354,
    -0.006001434802696027,
    -0.007978011375674192,
    -0.008874801535498097,
    0.007601043542016366,
    0.005221850122941198,
    0.002135903786532261,
    -0.0012391271074061955,
    -0.008173838743471195,
    0.002084270765479765,
    0.012060284004079208,
    0.02040399438007639,
    0.0025701151448059272,
    0.009155701618160322,
    0.014502106828834651,
    0.017885719912684776,
    0.005925349279774473,
    0.008073577834524243,
    0.009129085504236936,
    0.008949014277427248,
    -0.00782024733750982,
    -0.009757435001309777,
    -0.010373999611879299,
    -0.009586492041613133,
    0.008347279365210427,
    -0.0064951437603858065,
    -0.020458479648110622,
    -0.031652856290530273,
    0.01895208059693711,
    0.011005399983109485,
    0.0015691901102332182,
    -0.008079402282659522,
    0.028505886704850866,
    0.01664884839746386,
    0.0025384665627586588,
    -0.011915484812730937,
    0.026192379214480418,
    0.01918091647825275,
    0.009573406678440458,
    -0.0013298188044177997,
];
const GRU_D_BIAS_IH: [f64; 12] = [
    -0.030369119790123942,
    -0.002763316008445875,
    -0.024044334822362318,
    -0.0034540544171192365,
    0.055467490665660625,
    0.04850445347932097,
    0.024213062127644663,
    -0.025920133966516167,
    -0.27377419000587266,
    -0.10037362639487589,
    0.00771791496088689,
    0.015342041445663618,
];
const GRU_D_BIAS_HH: [f64; 12] = [
    -0.030369119790123942,
    -0.002763316008445875,
    -0.024044334822362318,
    -0.0034540544171192365,
    0.055467490665660625,
    0.04850445347932097,
    0.024213062127644663,
    -0.025920133966516167,
    -0.08599493442175113,
    -0.02215275208729354,
    -0.032677516865664856,
    -0.00392398307582853,
];
const GRU_D_X: [f64; 6] = [
    0.15953226680076793,
    0.15961942065986226,
    0.13810283474119683,
    -0.06804227188945616,
    -0.004746884887743309,
    0.05919097071488172,
];
const GRU_D_H: [f64; 8] = [
    -0.17154180220606127,
    -0.07613706665269165,
    -0.07370449865001562,
    -0.09248262201456035,
    -0.03904481997732393,
    0.008052762948023443,
    0.03874141948314508,
    0.1501450217940668,
];
const LSTM_H: [f64; 8] = [
    -0.1405462921109747,
    -0.183293275199683,
    -0.25572801737523493,
    -0.36445126810854633,
    -0.2551489680163078,
    -0.13071155751286556,
    -0.08049883344260746,
    0.03674495073874662,
];
const LSTM_C: [f64; 8] = [
    -0.34923739415793137,
    -0.615915075863831,
    -0.8168389912501869,
    -0.6652098501341398,
    -0.5414600119024419,
    -0.4920287989920301,
    -0.37064515467533454,
    0.06959060916937032,
];
const LSTM_D_WEIGHT_IH: [f64; 48] = [
    -0.004763134606668783,
    -0.01010674949026897,
    -0.014082463243266435,
    0.01659042882035107,
    -0.0031017882846360676,
    -0.022374192896444402,
    0.015889089732485435,
    0.00450271598070176,
    -0.007493079255874388,
    0.011362066180324586,
    0.007431557469189769,
    0.0024952223176121792,
    0.012480243862519495,
    0.0033848621794130163,
    -0.006168644720570741,
    0.015019945486804754,
    0.0076612217502742925,
    -0.0007344124097398954,
    0.012214567382703196,
    0.007026431588231822,
    0.0008873012407739096,
    0.00657292516230494,
    -0.0020678041068388636,
    -0.010428665790629631,
    -0.0469673574518584,
    0.023183249255495413,
    0.09019611193365679,
    -0.018712739870472294,
    -0.0027415248240398316,
    0.013600742746252135,
    -0.0159355366166472,
    -0.004961668623545928,
    0.0066837379415126,
    -0.11003358784471247,
    -0.10192674793971354,
    -0.08002460086106422,
    0.012436960243372068,
    0.005607411336758574,
    -0.001981074388729486,
    0.020408181326027876,
    0.013985298293819306,
    0.005669570745542385,
    0.021030253999383092,
    0.015617157379989522,
    0.008090351772611503,
    0.006468462340592187,
    0.0014211519615729405,
    -0.0038185046685199884,
];
const LSTM_D_WEIGHT_HH: [f64; 64] = [
    -0.01566596984230985,
    -0.014167247953441908,
    -0.010751055515640214,
    -0.005879758149277976,
    -0.03410828828939223,
    -0.0437940807151303,
    -0.04755254976339543,
    -0.04487500428028038,
    -0.015365658838313154,
    -0.023770736786187227,
    -0.02895855702361811,
    -0.030226972418634528,
    -0.001237690484696614,
    -0.006757033544579407,
    -0.011361843812880646,
    -0.014428881821927354,
    -0.01242061902970227,
    -0.019040173149523467,
    -0.0230827291550467,
    -0.024001146055411992,
    -0.006643076444504929,
    -0.014191452242477129,
    -0.01981908155454203,
    -0.0227642911537143,
    -0.0035592331222505926,
    -0.009604930625908161,
    -0.014350645828115492,
    -0.017154068439410333,
    -0.015455357189944792,
    -0.019390551824293206,
    -0.02070132623441426,
    -0.019210273253018828,
    0.12990090687784595,
    0.1590003239116341,
    0.16657979300822096,
    0.15161346858228053,
    0.024025814423014033,
    0.03422316773439538,
    0.03978857584106375,
    0.039968786864291395,
    0.014378578749429976,
    0.02275625533187426,
    0.028053979509568974,
    0.029554729167810823,
    -0.05736461359408185,
    -0.00740615626095506,
    0.043554689578241886,
    0.08862061250730965,
    -0.007205203242632931,
    -0.013541322272287193,
    -0.018044686857601813,
    -0.020105787728192832,
    -0.0007485222408289329,
    -0.010587931144091142,
    -0.018994313237230904,
    -0.024829904140063037,
    0.0020195254191237967,
    -0.00797925674967623,
    -0.016898083949793065,
    -0.02352983475980085,
    -0.007208932240573143,
    -0.010678667763352669,
    -0.012703095700257482,
    -0.013008219227048323,
];
const LSTM_D_BIAS_IH: [f64; 16] = [
    0.034732879614080545,
    0.12537884460544596,
    0.07201334744863702,
    0.02440788384043542,
    0.057540170996570036,
    0.04617604653822677,
    0.032430975884544355,
    0.05506906325235156,
    -0.4475740276838397,
    -0.10128435938459089,
    -0.06935674257336025,
    -0.0437014554258158,
    0.04297071909181121,
    0.03974396217967317,
    0.033201787083560766,
    0.031965893173428406,
];
const LSTM_D_BIAS_HH: [f64; 16] = [
    0.034732879614080545,
    0.12537884460544596,
    0.07201334744863702,
    0.02440788384043542,
    0.057540170996570036,
    0.04617604653822677,
    0.032430975884544355,
    0.05506906325235156,
    -0.4475740276838397,
    -0.10128435938459089,
    -0.06935674257336025,
    -0.0437014554258158,
    0.04297071909181121,
    0.03974396217967317,
    0.033201787083560766,
    0.031965893173428406,
];
const LSTM_D_X: [f64; 6] = [
    -0.02105247204851078,
    0.015136305632606536,
    0.04927645535397035,
    -0.21124341716923722,
    -0.21339271995633863,
    -0.18666031916785294,
];
const LSTM_D_H: [f64; 8] = [
    0.13806812854754233,
    0.15340779335535382,
    0.14798443300101044,
    0.12253207386633802,
    0.08029778399367347,
    0.02943745693756799,
    -0.02540709181768416,
    -0.07681290988546871,
];
const LSTM_D_C: [f64; 8] = [
    -0.2970879975502925,
    -0.14930390601561366,
    -0.1295896013636784,
    -0.2252188964944582,
    -0.2468297016080375,
    -0.12156592397731275,
    -0.033605435820551144,
    0.12387076876794074,
];
