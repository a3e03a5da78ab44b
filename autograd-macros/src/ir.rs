//! The body in A-normal form: one op per binding, every operand a variable.
//!
//! Variables are in static single assignment form: `h = h * w` makes a new variable, so the
//! reverse sweep can read every value the forward sweep computed. Loops and branches keep their
//! structure (the reverse sweep replays them backwards) and say which variables flow in and out.

use proc_macro2::{Span, TokenStream};
use syn::{Ident, Path, Type};

/// Index into [`Body::vars`].
pub type VarId = usize;
/// Index into [`Body::scopes`].
pub type ScopeId = usize;

/// Where a variable comes from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Origin {
    /// The `i`-th parameter of the function.
    Param(usize),
    /// A binding of the body.
    Local,
    /// A loop-carried value at the start of an iteration; in the forward sweep it lives in the
    /// loop's state variable `state` (the carried value's version after the loop).
    LoopIn {
        /// The state variable.
        state: VarId,
    },
}

/// A value of the body.
#[derive(Clone)]
pub struct Var {
    /// The name it is bound to in generated code (a parameter keeps the user's name).
    pub ident: Ident,
    /// The stem of the names generated code derives from it (`x` for `__saved_x`, `__ct_x`):
    /// unique among the function's variables, parameters included.
    pub stem: String,
    /// Whether it depends on a differentiated parameter.
    pub active: bool,
    /// The scope it is defined in.
    pub home: ScopeId,
    /// Where it comes from.
    pub origin: Origin,
    /// Whether its binding holds a reference to the value (a projection into a parameter, or a
    /// constant the user borrowed: `let xt = &xs[t];`), so that it is passed on as is.
    pub reference: bool,
    /// Whether it is an unnamed subexpression's value (which `fuse` may fold into the op that
    /// reads it).
    pub temp: bool,
}

/// One step of a [`Value::Project`]ion.
#[derive(Clone)]
pub enum Seg {
    /// `.name` or `.0`.
    Field(syn::Member),
    /// `[i]`, the index a constant of the body.
    Index(VarId),
}

/// What a scope is.
#[derive(Clone, Copy, Debug)]
pub enum ScopeKind {
    /// The function body (and the plain blocks in it).
    Top,
    /// The body of loop `id`.
    Loop(usize),
    /// An arm of branch `id`.
    Arm(usize),
}

/// A statement of the lowered body.
#[derive(Clone)]
pub enum Stmt {
    /// `let var = value;`
    Let {
        /// The variable bound.
        var: VarId,
        /// The user's type annotation.
        ty: Option<Type>,
        /// What it is bound to.
        value: Value,
    },
    /// `let pat = expr;` for a constant value destructured by a pattern; `vars` are bound by it.
    Destructure {
        /// The pattern, with the bound names renamed to `vars`' identifiers.
        pat: TokenStream,
        /// The user's type annotation.
        ty: Option<Type>,
        /// The value, as written (renamed).
        expr: TokenStream,
    },
    /// A statement that computes no differentiated value, kept as written (renamed).
    Inert(TokenStream),
    /// `for i in 0..N { .. }`, or a loop over the elements of arrays (`for x in xs.iter()`).
    Loop(Loop),
    /// `if`/`else` or `match`.
    Branch(Branch),
}

/// The right-hand side of a binding.
#[derive(Clone)]
pub enum Value {
    /// An expression that depends on no differentiated value, kept as written (renamed).
    Inert(TokenStream),
    /// A rule of the library: `method::name::<generics>(&args[1..])`, applied to every argument.
    Op {
        /// The method (or operator's method) name, with the user's span.
        name: Ident,
        /// The turbofish as written (`::<1>`), if any.
        turbofish: Option<TokenStream>,
        /// Receiver (or left operand) first.
        args: Vec<VarId>,
        /// The user's operator or method name, where errors point.
        span: Span,
    },
    /// A call of another `#[differentiable]` (or `#[custom_vjp]`) function, through its pullback.
    Call {
        /// The path of the callee's pullback function; for a method, just its name, called on
        /// the first argument (`recv.__forward_pullback(..)`).
        pullback: Path,
        /// Whether it is a method of a `#[differentiable] impl`, the receiver first in `args`.
        method: bool,
        /// Whether the callee is a function named by one identifier, reached through its
        /// pullback trait on `&Callee` (see `autograd_core::__private::Callee`).
        via_callee: bool,
        /// The turbofish as written, if any.
        turbofish: Option<TokenStream>,
        /// The arguments, and whether the user wrote `&` before each.
        args: Vec<(VarId, bool)>,
        /// The call's span.
        span: Span,
    },
    /// `x.clone()`, or a value moved where it must be copied: the identity.
    Copy(VarId),
    /// Element `.1` of a tuple (the value of a call of a function with a tuple output, bound by
    /// `let (h, c) = cell.step(..);`): a copy of it, whose cotangent is added into that element
    /// of the tuple's.
    Elem(VarId, usize),
    /// `detach(x)`: the same value, no gradient.
    Detach(VarId),
    /// `&base.fc1.weight`, `&base.blocks[i]`: a reference into a differentiated parameter (or
    /// into another projection). Its cotangent is added in place into the same path of the
    /// parameter's cotangent, which is a value of the parameter's own type.
    Project {
        /// The parameter or projection projected from.
        base: VarId,
        /// The fields and indices, outermost first.
        segs: Vec<Seg>,
    },
}

/// A value carried from one iteration of a loop to the next.
#[derive(Clone, Copy, Debug)]
pub struct Carried {
    /// Its version before the loop.
    pub outer_in: VarId,
    /// Its version at the start of an iteration.
    pub inner_in: VarId,
    /// Its version at the end of an iteration.
    pub inner_out: VarId,
    /// Its version after the loop (the loop's state variable).
    pub outer_out: VarId,
}

/// How many times a loop runs.
#[derive(Clone)]
pub enum Count {
    /// `for i in 0..N`: the trip count as written, a literal, a const or a const generic.
    Const(TokenStream),
    /// `for x in xs.iter()`, `for (a, b) in xs.iter().zip(&ys)`: the length of the arrays
    /// iterated, known only to the type checker. Each array as written (renamed); the first gives
    /// the count, the others must have the same length (checked where the user wrote the
    /// iterator, at `span`).
    LenOf(Vec<TokenStream>, Span),
    /// `for i in 0..n` with `n` a value of the body (a parameter, a local): read when the loop
    /// starts, as written (renamed), not differentiated. Each iteration's values go to a `Vec`.
    Runtime(TokenStream),
    /// `while cond { .. }`: the condition as written (renamed, the carried values read as each
    /// iteration starts), not differentiated. Each iteration's values go to a `Vec`.
    While(TokenStream),
}

/// `for index in 0..count { body }`; a loop over arrays' elements is one over their indices,
/// each element bound at the top of the body to a reference into its array.
#[derive(Clone)]
pub struct Loop {
    /// Loop number (names its tape).
    pub id: usize,
    /// The body's scope.
    pub scope: ScopeId,
    /// The trip count.
    pub count: Count,
    /// The body.
    pub body: Vec<Stmt>,
    /// The carried values.
    pub carried: Vec<Carried>,
    /// `#[checkpoint(..)]`, if given.
    pub checkpoint: Option<Checkpoint>,
}

/// A checkpointed loop's schedule.
#[derive(Clone)]
pub struct Checkpoint {
    /// `K` of `every = K`, as written (renamed). Periodic: the forward sweep keeps only the
    /// carried values at the start of every `K`-th iteration, and the reverse sweep runs each
    /// block of iterations again from its start (see `autograd_core::__private::Checkpoints`).
    pub every: TokenStream,
    /// `bisect`: the forward sweep keeps only the first start; the reverse sweep halves the
    /// iterations, keeping the middle's values, until a part has at most `K` iterations.
    pub bisect: bool,
}

/// How a branch chooses its arm.
#[derive(Clone)]
pub enum Head {
    /// `if c0 {..} else if c1 {..} else {..}`: one condition per arm but the last (an `else`,
    /// written or not).
    If(Vec<TokenStream>),
    /// `match scrutinee { pat => .. }`: one pattern (with its guard) per arm.
    Match(TokenStream, Vec<TokenStream>),
}

/// One arm of a branch.
#[derive(Clone)]
pub struct Arm {
    /// The arm's scope.
    pub scope: ScopeId,
    /// The arm's statements.
    pub body: Vec<Stmt>,
    /// The arm's value of each of the branch's outputs.
    pub results: Vec<VarId>,
}

/// A branch: the arm that runs is recorded, and the reverse sweep replays only that arm.
#[derive(Clone)]
pub struct Branch {
    /// Branch number (names its record).
    pub id: usize,
    /// How the arm is chosen.
    pub head: Head,
    /// The arms.
    pub arms: Vec<Arm>,
    /// The values that flow out: the branch's value and every variable an arm assigns.
    pub outputs: Vec<VarId>,
}

/// The lowered body.
#[derive(Clone)]
pub struct Body {
    /// Every variable.
    pub vars: Vec<Var>,
    /// Every scope's kind and parent.
    pub scopes: Vec<(ScopeKind, Option<ScopeId>)>,
    /// Items declared in the body (`const`, `use`, `fn`), repeated in each generated function.
    pub items: Vec<TokenStream>,
    /// The statements.
    pub stmts: Vec<Stmt>,
    /// The returned value (for a tuple output, its first element: the differentiated one).
    pub result: VarId,
    /// A tuple output's other elements (`(loss, logits)`: `logits`), returned with the result.
    pub aux: Vec<VarId>,
    /// The span of the tail expression that gives the result (where a mismatch with the declared
    /// output type is reported).
    pub result_span: proc_macro2::Span,
    /// The elements of constant parameters that loops borrow (`for c in coeffs.iter()` binds
    /// `c` to `&(coeffs)[__i]`): each with the parameter and the index. The reverse sweep
    /// borrows them again rather than keeping the reference, so that a loop's record holds no
    /// reference (and its vector can be kept for the next call).
    pub element_borrows: std::collections::HashMap<VarId, (VarId, VarId)>,
}
