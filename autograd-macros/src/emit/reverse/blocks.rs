//! The sweep of a block, and the top level cut into blocks. A dry run records where each
//! cotangent is first bound and last read ([`Scoping`]); [`BlockPlan`] then either nests one
//! block per intermediate cotangent, ending right after the value's own op has read it (an
//! optimized build reuses its stack slot: [`Reverse::scoped`]), or cuts the top level into
//! consecutive blocks of [`SEGMENT`](crate::emit::SEGMENT) statements (a long function:
//! [`Reverse::segmented`]). Cotangents bound inside a block and read after it are declared before
//! it.

use super::{Ct, Reverse, Scoping};
use crate::ir::{Stmt, VarId};
use proc_macro2::TokenStream;
use quote::quote;
use std::collections::HashMap;

impl Reverse<'_, '_> {
    /// Records, in a dry run, how a cotangent binding is made: `Some(mutable)` for a first
    /// binding by `let`, `None` for any other binding or rebinding. Bindings made inside a loop or
    /// a branch, and every binding other than a first `let`, keep the variable and the top-level
    /// statement out of the scoping.
    pub(super) fn note(&mut self, v: VarId, first_let: Option<bool>) {
        let sc = &mut self.scoping;
        if !sc.recording || self.cx.roots.contains(&v) {
            return;
        }
        match first_let {
            Some(mutable) if sc.depth == 1 => {
                sc.births.insert(v, (sc.chunk, mutable));
            }
            None if sc.depth == 1 && sc.births.contains_key(&v) => {
                // Adding into an existing `let mut` binding is not a new binding; a rebinding is.
                if !matches!(self.ct[v], Ct::Owned { mutable: true, .. }) {
                    sc.irregular.insert(v);
                    sc.complex.insert(sc.chunk);
                }
            }
            Some(_) | None => {
                sc.irregular.insert(v);
                sc.complex.insert(sc.chunk);
            }
        }
    }

    /// The reverse sweep of a block.
    ///
    /// At the top level of a [`scoped`](Reverse::scoped) sweep, each intermediate value's
    /// cotangent is scoped in a block that ends right after the value's own op has read it, so
    /// that an optimized build reuses its stack slot for the cotangents computed later. A dry run of the sweep finds where each cotangent is first bound and last read;
    /// cotangents first bound inside a block but read after it are declared before the block and
    /// assigned inside it. Statements that involve loops or branches are never put in a block.
    pub fn block(&mut self, stmts: &[Stmt]) -> TokenStream {
        if self.counting || !self.scoping.enabled || self.scoping.depth > 0 {
            return self.chunks(stmts).0.into_iter().collect();
        }
        let mut dry = self.clone();
        dry.scoping.recording = true;
        let (chunks, deaths) = dry.chunks(stmts);
        let plan = if self.scoping.segmented {
            BlockPlan::segments(&dry.scoping, &deaths, chunks.len())
        } else {
            BlockPlan::new(&dry.scoping, &deaths, chunks.len())
        };
        self.scoping.hoisted = plan.hoisted.keys().copied().collect();
        let (chunks, _) = self.chunks(stmts);
        self.scoping.hoisted.clear();
        let decl = |v: VarId, mutable: bool| {
            let id = self.cx.ct_ident(v);
            if mutable {
                quote!(let mut #id;)
            } else {
                quote!(let #id;)
            }
        };
        let mut decls: HashMap<usize, TokenStream> = HashMap::new();
        let mut hoisted: Vec<(&VarId, &usize)> = plan.hoisted.iter().collect();
        hoisted.sort();
        for (&v, &child) in hoisted {
            let mutable = dry.scoping.births[&v].1;
            decls.entry(child).or_default().extend(decl(v, mutable));
        }
        plan.emit(&chunks, &decls, None, 0, chunks.len())
    }

    /// The reverse sweep of `stmts`, one token stream per statement (last statement first), and
    /// the statement at which each variable defined there reads its cotangent for the last time.
    fn chunks(&mut self, stmts: &[Stmt]) -> (Vec<TokenStream>, HashMap<VarId, usize>) {
        self.scoping.depth += 1;
        let mut chunks = Vec::with_capacity(stmts.len());
        let mut deaths = HashMap::new();
        for (i, s) in stmts.iter().rev().enumerate() {
            if self.scoping.depth == 1 {
                self.scoping.chunk = i;
                if self.scoping.recording && matches!(s, Stmt::Loop(_) | Stmt::Branch(_)) {
                    self.scoping.complex.insert(i);
                }
            }
            if let Stmt::Let { var, .. } = s
                && self.cx.needs_ct(*var)
            {
                deaths.insert(*var, i);
            }
            chunks.push(self.stmt(s));
        }
        self.scoping.depth -= 1;
        (chunks, deaths)
    }
}

/// The blocks of a top-level reverse sweep (see [`Reverse::block`]): statement ranges, nested.
struct BlockPlan {
    /// `(start, end, parent)`, inclusive statement indices, sorted by start then by decreasing
    /// end, so that a block comes before the blocks inside it.
    blocks: Vec<(usize, usize, Option<usize>)>,
    /// The cotangents declared before a block rather than bound where first computed, each with
    /// the block it is declared before.
    hoisted: HashMap<VarId, usize>,
}

impl BlockPlan {
    fn new(sc: &Scoping, deaths: &HashMap<VarId, usize>, n: usize) -> Self {
        // A block per cotangent first bound at statement `b` and last read at `d`, unless that is
        // the last statement anyway.
        let mut cand: Vec<(VarId, usize, usize)> = sc
            .births
            .iter()
            .filter(|(v, _)| !sc.irregular.contains(v))
            .filter_map(|(&v, &(b, _))| {
                let d = *deaths.get(&v)?;
                (b < d && d + 1 < n).then_some((v, b, d))
            })
            .collect();
        cand.sort_unstable();
        loop {
            // Blocks must nest: one that starts inside another and ends after it starts with it.
            let mut changed = true;
            while changed {
                changed = false;
                for i in 0..cand.len() {
                    for j in 0..cand.len() {
                        let ((_, si, ei), (_, sj, ej)) = (cand[i], cand[j]);
                        if si < sj && sj <= ei && ei < ej {
                            cand[j].1 = si;
                            changed = true;
                        }
                    }
                }
            }
            let before = cand.len();
            cand.retain(|&(_, s, e)| !(s..=e).any(|c| sc.complex.contains(&c)));
            if cand.len() == before {
                break;
            }
            for c in &mut cand {
                c.1 = sc.births[&c.0].0;
            }
        }
        cand.sort_by_key(|&(_, s, e)| (s, core::cmp::Reverse(e)));
        let mut blocks: Vec<(usize, usize, Option<usize>)> = Vec::with_capacity(cand.len());
        let mut open: Vec<usize> = Vec::new();
        for &(_, s, e) in &cand {
            while open.last().is_some_and(|&p| blocks[p].1 < s) {
                open.pop();
            }
            blocks.push((s, e, open.last().copied()));
            open.push(blocks.len() - 1);
        }
        let owner: HashMap<VarId, usize> = cand.iter().enumerate().map(|(k, c)| (c.0, k)).collect();
        // The innermost block holding statement `c`, and the chain of blocks up from it.
        let innermost = |c: usize| {
            (0..blocks.len())
                .rev()
                .find(|&k| blocks[k].0 <= c && c <= blocks[k].1)
        };
        let mut hoisted = HashMap::new();
        for (&v, &(b, _)) in &sc.births {
            let scope = owner.get(&v).copied();
            let mut k = innermost(b);
            let mut child = None;
            while k != scope {
                child = k;
                k = k.and_then(|k| blocks[k].2);
            }
            if let Some(child) = child {
                hoisted.insert(v, child);
            }
        }
        BlockPlan { blocks, hoisted }
    }

    /// Consecutive blocks of at most [`SEGMENT`](crate::emit::SEGMENT) statements, none holding a
    /// statement that involves a loop or a branch (see [`Reverse::segmented`]). A cotangent first
    /// bound in a block is declared before it when it is read after the block (its variable's own
    /// op comes later, or it is a parameter's) or bound again outside blocks.
    fn segments(sc: &Scoping, deaths: &HashMap<VarId, usize>, n: usize) -> Self {
        let mut blocks: Vec<(usize, usize, Option<usize>)> = Vec::new();
        let mut start: Option<usize> = None;
        for c in 0..=n {
            let breaks = c == n || sc.complex.contains(&c);
            if let Some(s) = start
                && (breaks || c - s == crate::emit::SEGMENT)
            {
                blocks.push((s, c - 1, None));
                start = None;
            }
            if !breaks && start.is_none() {
                start = Some(c);
            }
        }
        let mut hoisted = HashMap::new();
        for (&v, &(b, _)) in &sc.births {
            let k = blocks.partition_point(|&(_, e, _)| e < b);
            let Some(&(s, e, _)) = blocks.get(k) else {
                continue;
            };
            if s <= b && (sc.irregular.contains(&v) || deaths.get(&v).is_none_or(|&d| d > e)) {
                hoisted.insert(v, k);
            }
        }
        BlockPlan { blocks, hoisted }
    }

    /// The statements `start..end` of the block `parent` (`None`: the top level), with the blocks
    /// inside it and the declarations before them.
    fn emit(
        &self,
        chunks: &[TokenStream],
        decls: &HashMap<usize, TokenStream>,
        parent: Option<usize>,
        start: usize,
        end: usize,
    ) -> TokenStream {
        let mut out = TokenStream::new();
        let mut i = start;
        for (k, &(s, e, p)) in self.blocks.iter().enumerate() {
            if p != parent {
                continue;
            }
            out.extend(chunks[i..s].iter().cloned());
            if let Some(d) = decls.get(&k) {
                out.extend(d.clone());
            }
            let inner = self.emit(chunks, decls, Some(k), s, e + 1);
            out.extend(quote!({ #inner }));
            i = e + 1;
        }
        out.extend(chunks[i..end].iter().cloned());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::BlockPlan;
    use crate::emit::reverse::Scoping;
    use std::collections::HashMap;

    /// The MLP's sweep (statements last first): `t7 = t6.item()`, `t6 = cross_entropy(logits)`,
    /// `logits = t4 + b2`, `t4 = h @ w2`, `h = relu(t2)`, `t2 = t1 + b1`, `t1 = x @ w1`. Variables
    /// are numbered by name below; each intermediate cotangent is first bound by the op that reads
    /// the variable and last read by the variable's own op.
    fn mlp_sweep() -> (Scoping, HashMap<usize, usize>) {
        let [t6, logits, t4, b2, h, w2, t2, t1, b1, w1] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
        let mut sc = Scoping::default();
        for (v, chunk) in [
            (t6, 0),
            (logits, 1),
            (t4, 2),
            (b2, 2),
            (h, 3),
            (w2, 3),
            (t2, 4),
            (t1, 5),
            (b1, 5),
            (w1, 6),
        ] {
            sc.births.insert(v, (chunk, false));
        }
        let deaths = [(t6, 1), (logits, 2), (t4, 3), (h, 4), (t2, 5), (t1, 6)].into();
        (sc, deaths)
    }

    /// Each intermediate cotangent gets a block ending at its last read (`t1`'s would end with the
    /// sweep: none); the blocks nest, so each starts at the first statement. Cotangents first bound
    /// inside an inner block are declared before the outermost block they must outlive.
    #[test]
    fn a_chain_nests_one_block_per_intermediate_cotangent() {
        let (sc, deaths) = mlp_sweep();
        let plan = BlockPlan::new(&sc, &deaths, 7);
        // t2, h, t4, logits, t6: each inside the previous one.
        assert_eq!(
            plan.blocks,
            [
                (0, 5, None),
                (0, 4, Some(0)),
                (0, 3, Some(1)),
                (0, 2, Some(2)),
                (0, 1, Some(3))
            ]
        );
        // logits before t6's block (4) inside its own, t4 before logits' (3), h before t4's (2),
        // t2 before h's (1); the parameters b2, w2, b1 and t1 before the outermost block (0).
        let want: HashMap<usize, usize> = [
            (1, 4),
            (2, 3),
            (4, 2),
            (6, 1),
            (3, 0),
            (5, 0),
            (7, 0),
            (8, 0),
        ]
        .into();
        assert_eq!(plan.hoisted, want);
    }

    /// A statement that involves a loop or a branch (or rebinds a cotangent) is never inside a
    /// block: the blocks that would hold it are dropped and the others re-nested.
    #[test]
    fn no_block_holds_a_complex_statement() {
        let (mut sc, deaths) = mlp_sweep();
        sc.complex.insert(3);
        let plan = BlockPlan::new(&sc, &deaths, 7);
        assert_eq!(plan.blocks, [(0, 2, None), (0, 1, Some(0))]);
        // logits (first bound at 1, inside t6's block) is declared before it; t4 and b2 (bound at
        // 2, inside logits' block) before the outer one. Nothing else is in a block.
        let want: HashMap<usize, usize> = [(1, 1), (2, 0), (3, 0)].into();
        assert_eq!(plan.hoisted, want);
    }
}
