"""Heptagon automata lowered to clocks (Colaço, Pagano, Pouzet, EMSOFT 2005).

An automaton with states S_0 (initial) ... S_n-1 becomes, in the node's lus:

- `ps = S_0 fby ns` and `pr = false fby nr`: the state and the reset flag the
  previous instant chose (weak transitions);
- strong transitions (`unless c then T`), tested in the state `ps`, each
  branch on the clock `ps = S_i`: `s_i = if c then T else S_i`,
  `r_i = if c then true else pr` (`continue`: false), and
  `s = merge ps (S_0 -> s_0) ...`, `r = merge ps (...)`: the state of this
  instant and whether it is entered anew;
- the equations of state S_i on the clock `s = S_i` (variables read there are
  sampled on it), reset by `r` (every `->`, `fby` and node instance in them
  restarts, as in a node reset by `restart ... every`);
- weak transitions (`until c then T`), tested at the end of the instant on
  the same clock: `ns_i = if c then T else S_i`, `nr_i = c and then` ...,
  merged on `s` into `ns` and `nr`;
- each variable the automaton defines is `merge s (S_0 -> x_0) ...` (every
  state must define it).

The state is an enumeration of the states' names (its own type, as every
Lustre enum; `merge` on it is the linear chain of `NodeLowering.merge_chain`).

Example (Heptagon, `.ept`)::

    node updown(x: bool) returns (o: int)
    let
      automaton
        state Up   do o = 0 fby (o + 1) until o >= 3 then Down
        state Down do o = 0 fby (o - 1) unless x then Up
      end
    tel
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from steplus.dialects import lus
from steplus.lowering.lustre import ast
from steplus.lowering.lustre.transform import LustreError

if TYPE_CHECKING:
    from steplus.lowering.lustre.to_lus import NodeLowering


def lower_automaton(low: NodeLowering, aut: ast.Automaton) -> None:
    """Lower `aut` into `low`'s node, defining the variables of its states."""
    names = [s.name for s in aut.states]
    for k, st in enumerate(aut.states):
        if st.name in names[:k]:
            raise LustreError(st.pos, f"state '{st.name}' is declared twice")
        for esc in [*st.until, *st.unless]:
            if esc.target not in names:
                raise LustreError(esc.target_pos, f"no state '{esc.target}' in this automaton")
    tname = f"automaton@{aut.pos}"
    low.prog.types[tname] = ast.TypeDecl(aut.pos, tname,
                                         ctors=[ast.Name(s.pos, s.name) for s in aut.states])
    pos = aut.pos
    psvar, svar = f"{tname}$ps", f"{tname}$s"

    init = low.const(0, tname, pos)
    ps_op = lus.FbyOp(init, init)
    ps = low._restart(low.emit(ps_op, pos), init, pos)
    no = low.const(False, "bool", pos)
    pr_op = lus.FbyOp(no, no)
    pr = low._restart(low.emit(pr_op, pos), no, pos)
    low.env[psvar], low.ltypes[psvar] = ps, tname

    def escapes(escs: list[ast.Escape], state: SSAValue, reset: SSAValue, what: str
                ) -> tuple[SSAValue, SSAValue]:
        for esc in reversed(escs):
            c = low.expr1(esc.cond)
            low._want(esc.cond, c, "bool", f"the condition of '{what}'")
            target = low.const(names.index(esc.target), tname, esc.pos)
            state = low.emit(arith.SelectOp(c, target, state), esc.pos)
            reset = low.emit(arith.SelectOp(c, low.const(esc.reset, "bool", esc.pos), reset),
                             esc.pos)
        return state, reset

    saved_sampling, outer_reset = low.sampling, low.reset
    try:
        # strong transitions, in the state the previous instant left
        s_vals, r_vals = [], []
        for i, st in enumerate(aut.states):
            low.sampling = (psvar, i)
            s_i, r_i = escapes(st.unless, low.const(i, tname, st.pos),
                               low.sample(pr, (psvar, i), st.pos), "unless")
            s_vals.append(s_i)
            r_vals.append(r_i)
        low.sampling = saved_sampling
        s = low.merge_chain(psvar, s_vals, pos)
        r = low.merge_chain(psvar, r_vals, pos)
        low.env[svar], low.ltypes[svar] = s, tname

        # the states' equations, on their clocks, reset on entry; weak transitions
        low.reset = r if outer_reset is None else low.emit(arith.OrIOp(outer_reset, r), pos)
        defs: list[dict[str, tuple[SSAValue, ast.Name]]] = []
        ns_vals, nr_vals = [], []
        for i, st in enumerate(aut.states):
            low.sampling = (svar, i)
            mine: dict[str, tuple[SSAValue, ast.Name]] = {}
            for eq in st.equations:
                if isinstance(eq, ast.Automaton):
                    raise LustreError(eq.pos, "unsupported construct: nested automata")
                values = low.expr(eq.rhs)
                lhs = low.expand_lhs(eq.lhs)
                if len(values) != len(lhs):
                    raise LustreError(eq.pos, f"{len(lhs)} variable(s) defined by an "
                                      f"expression with {len(values)} value(s)")
                for name, v in zip(lhs, values):
                    if name.name in mine:
                        raise LustreError(name.pos, f"variable '{name.name}' is defined "
                                          f"twice in state '{st.name}'")
                    mine[name.name] = (v, name)
            ns_i, nr_i = escapes(st.until, low.const(i, tname, st.pos),
                                 low.const(False, "bool", st.pos), "until")
            defs.append(mine)
            ns_vals.append(ns_i)
            nr_vals.append(nr_i)
    finally:
        low.sampling, low.reset = saved_sampling, outer_reset
    ps_op.operands[1] = low.merge_chain(svar, ns_vals, pos)
    pr_op.operands[1] = low.merge_chain(svar, nr_vals, pos)

    # the variables of the automaton: defined in every state, merged on `s`
    order: list[str] = []
    for mine in defs:
        order.extend(n for n in mine if n not in order)
    for name in order:
        for st, mine in zip(aut.states, defs):
            if name not in mine:
                raise LustreError(st.pos, f"'{name}' is not defined in state '{st.name}' "
                                  "(a variable of an automaton is defined in every state)")
        vals = [mine[name][0] for mine in defs]
        if len({low.lt(v) for v in vals}) != 1:
            raise LustreError(defs[0][name][1].pos, f"'{name}' has different types in "
                              "the states of the automaton")
        low.define(defs[0][name][1], low.merge_chain(svar, vals, pos))
