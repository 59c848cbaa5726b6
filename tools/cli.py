"""Command-line plumbing shared by step-opt and step-run.

Both tools report a bad command line as one line `<tool>: error: ...` (exit 2)
and a user error as `file:line:col: error: ...` lines (exit 1).  `guarded`
runs a tool's body and turns every way out of it into one of those, so that no
Python traceback reaches the user:

    def main(argv=None) -> int:
        return guarded("step-run", lambda: _run(argv))

Ctrl-C prints `<tool>: interrupted` (exit 130); a closed stdout (`... | head`)
ends the tool quietly, as Unix tools do (exit 141, 128 + SIGPIPE).

`parse_pass_pipeline` parses a `-p` pipeline and reports every malformed
pipeline, unknown pass and bad pass option on one line.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import re
import sys
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import IO, NoReturn

from xdsl.passes import ModulePass, PassPipeline, PassPipelineCallbackType
from xdsl.utils.arg_spec import ArgSpec, PipelineLexer, SpecTokenKind, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError

EXIT_USER_ERROR = 1
EXIT_USAGE_ERROR = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141


class UsageError(Exception):
    """A bad command line; reported on one line, exit code 2."""


class InputError(Exception):
    """A located user error: the diagnostics are already formatted."""

    def __init__(self, lines: list[str]):
        super().__init__("\n".join(lines))
        self.lines = lines


class ArgumentParser(argparse.ArgumentParser):
    """An argparse parser that raises `UsageError` instead of exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def decimal_int(text: str) -> int:
    """An argparse `type` for integer flags: plain decimal digits with an optional `-`, as
    MLIR tools read them (`--ticks 1000`); Python's `1_000`, `0x10`, `+5` and ` 7` are refused,
    and so is anything past 19 digits (no int64 holds it)."""
    if re.fullmatch(r"-?[0-9]{1,19}", text) is None:
        raise argparse.ArgumentTypeError(f"invalid integer value: '{text}' (expected decimal digits)")
    return int(text)


def one_line(e: BaseException) -> str:
    """The first line of an exception's message (its type name if empty)."""
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0]


_PIPELINE_POS = re.compile(r"pass-pipeline:(\d+):(\d+)")


def _arg_spec_message(e: ArgSpecParseError) -> str:
    """xDSL's multi-line pipeline parse error as `at column N: message`."""
    lines = [line for line in str(e).splitlines() if line.strip()]
    message = lines[-1].strip() if lines else "malformed pass pipeline"
    pos = _PIPELINE_POS.search(str(e))
    return f"at column {pos.group(2)}: {message}" if pos else message


_ANCHOR = re.compile(r"^\s*([A-Za-z_][\w.$-]*)\s*\((.*)\)\s*$", re.DOTALL)


def strip_module_anchor(spec: str) -> str:
    """The pass list of an MLIR-style `builtin.module(a,b{x=1})` pipeline
    (mlir-opt's `--pass-pipeline` syntax); a plain `a,b{x=1}` list unchanged.

    steplus passes run on the module: another anchor (`func.func(...)`) is a
    usage error, e.g. `invalid pass pipeline: step-opt runs passes on
    builtin.module only, not nested on 'func.func'`."""
    spec = _squeeze(spec)
    m = _ANCHOR.match(spec)
    if m is None:
        return spec
    anchor, inner = m.group(1), m.group(2)
    if anchor != "builtin.module":
        raise UsageError(f"invalid pass pipeline: step-opt runs passes on builtin.module "
                         f"only, not nested on '{anchor}'")
    if re.search(r"[\w.]\(", _without_strings(inner)):
        raise UsageError("invalid pass pipeline: nested pass pipelines inside "
                         "builtin.module(...) are not supported")
    return inner.strip()


def _squeeze(spec: str) -> str:
    """`spec` without the white space between passes (`a, b` -> `a,b`, as
    MLIR allows); spaces inside `{...}` separate options and stay."""
    out, depth, quoted, escaped = [], 0, False, False
    for ch in spec:
        if quoted:
            escaped, quoted = (not escaped and ch == "\\"), quoted and (escaped or ch != '"')
        elif ch == '"':
            quoted = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch.isspace() and depth == 0:
            continue
        out.append(ch)
    return "".join(out)


def _without_strings(text: str) -> str:
    return re.sub(r'"(\\.|[^"\\])*"', '""', text)


def _check_repeated_options(spec: str) -> None:
    """A usage error when one pass names an option twice (`isel{mode=exact
    mode=flexible}`, or `node-limit` and `node_limit`): not last-wins."""
    lexer = PipelineLexer(spec)
    depth, previous, seen, pass_name = 0, SpecTokenKind.EOF, set[str](), ""
    while (token := lexer.lex()).kind is not SpecTokenKind.EOF:
        kind = token.kind
        if kind is SpecTokenKind.L_BRACE:
            depth, seen = depth + 1, set()
        elif kind is SpecTokenKind.R_BRACE:
            depth -= 1
        elif kind is SpecTokenKind.IDENT and depth == 0:
            pass_name = token.span.text
        elif (kind is SpecTokenKind.IDENT and depth == 1
              and previous in (SpecTokenKind.L_BRACE, SpecTokenKind.SPACE)):
            key = token.span.text.replace("_", "-")
            if key in seen:
                raise UsageError(f"invalid options for pass '{pass_name}': option '{key}' "
                                 "is given twice")
            seen.add(key)
        previous = kind


def parse_pass_pipeline(
    available: Mapping[str, Callable[[], type[ModulePass]]],
    spec: str,
    callback: PassPipelineCallbackType | None = None,
) -> PassPipeline:
    """Parse a `-p` pipeline (option names with dashes or underscores), also
    wrapped as mlir-opt's `builtin.module(...)`.

    Raises `UsageError` with a one-line message for a malformed pipeline, an
    unknown pass, or options a pass rejects while it is built, e.g.

        invalid pass pipeline at column 13: Expected argument name here
        invalid pass pipeline: Unrecognized passes: ['nope']
        invalid options for pass 'isel': ...
        invalid options for pass 'isel': option 'mode' is given twice"""
    spec = strip_module_anchor(spec)
    try:
        specs = tuple(parse_pipeline(spec))
    except ArgSpecParseError as e:  # a BaseException in xDSL 0.74
        raise UsageError(f"invalid pass pipeline {_arg_spec_message(e)}") from None
    except Exception as e:
        raise UsageError(f"invalid pass pipeline: {one_line(e)}") from None
    _check_repeated_options(spec)
    unknown = [s.name for s in specs if s.name not in available]
    if unknown:
        raise UsageError(f"invalid pass pipeline: Unrecognized passes: {unknown}")
    passes: list[ModulePass] = []
    for s in specs:
        cls = available[s.name]()
        # xDSL's own check names neither the option nor the type, and takes
        # `true` for an integer option: check the simple types first.
        s = _ints_as_floats(cls, s)  # `time-limit=3` or `1e3` for a float option
        wrong = _unknown_option_message(cls, s.parameters) or _option_type_message(cls, s.parameters)
        if wrong is not None:
            raise UsageError(f"invalid options for pass '{s.name}': {wrong}")
        try:
            passes.append(cls.from_pass_spec(s))
        except (Exception, ArgSpecParseError) as e:
            message = one_line(e).removeprefix(f"{s.name}:").strip()
            raise UsageError(f"invalid options for pass '{s.name}': {message}") from None
    return PassPipeline(tuple(passes), callback)


def _unknown_option_message(cls: type, args: Mapping[str, Sequence[object]]) -> str | None:
    """`unknown option 'nodelimit' (options: ..., node-limit, ...)`, names as typed."""
    if not dataclasses.is_dataclass(cls):
        return None
    names = [f.name for f in dataclasses.fields(cls) if f.init]
    for name in args:
        if name.replace("-", "_") not in names:
            known = ", ".join(n.replace("_", "-") for n in names) or "none"
            return f"unknown option '{name}' (options: {known})"
    return None


_KINDS = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}


def _option_type_message(cls: type, args: Mapping[str, Sequence[object]]) -> str | None:
    """`option 'hbm' expects a string, got -1 (quote it: hbm="...")` for the
    first option whose value does not have its field's type."""
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # an annotation that does not resolve: keep xDSL's message
        return None
    for name, values in args.items():
        hint = hints.get(name.replace("-", "_"))
        accepted = {t for t in typing.get_args(hint) or (hint,)
                    if isinstance(t, type) and t in _KINDS}
        if not accepted:
            continue
        if not values:  # `isel{mode}`: xDSL says "Incompatible types: given (), expected <class 'str'>"
            dashed = name.replace("_", "-")
            return f"option '{dashed}' needs a value ({dashed}=...)"
        for value in values:
            ok = any(isinstance(value, t) and not (t is int and isinstance(value, bool))
                     or (t is float and type(value) is int) for t in accepted)
            if not ok:
                dashed = name.replace("_", "-")
                kind = " or ".join(_KINDS[t] for t in accepted)
                hint_text = f' (quote it: {dashed}="...")' if str in accepted else ""
                return f"option '{dashed}' expects {kind}, got {value!r}{hint_text}"
    return None


_EXPONENT_NUMBER = re.compile(r"[0-9]+[eE][+-]?[0-9]{1,3}", re.ASCII)
"""`1e3`: a number xDSL's pipeline lexer reads as a word (it wants `1.0e3`)."""


def _ints_as_floats(cls: type, spec: ArgSpec) -> ArgSpec:
    """`spec` with integer values of `float` options written as floats (xDSL
    rejects `3` for a float), also `1e3` (which xDSL reads as text: "option
    'time-limit' expects a number, got '1e3'")."""
    try:
        hints = typing.get_type_hints(cls)
    except Exception:
        return spec
    params = dict(spec.parameters)
    for name, values in spec.parameters.items():
        hint = hints.get(name.replace("-", "_"))
        kinds = typing.get_args(hint) or (hint,)
        if float in kinds and int not in kinds:
            params[name] = tuple(
                float(v) if type(v) is int or isinstance(v, str) and _EXPONENT_NUMBER.fullmatch(v)
                and math.isfinite(float(v)) else v for v in values)
    return ArgSpec(spec.name, params)


def silence_stdout() -> None:
    """Point stdout at /dev/null, so that the flush at exit cannot fail again
    after the reader of a pipe went away."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass  # not a real file (tests capture stdout in memory)


def guarded_deep(tool: str, body: Callable[[], int]) -> int:
    """`guarded` on a thread with a large stack and a recursion limit of 20000,
    as step-opt runs: deeply nested source (2000 nested `pre`s in a .lus)
    recurses deeply in the parsers and the Lustre frontend. The thread is a
    daemon so that Ctrl-C, which interrupts the main thread's join, ends the
    tool at once."""
    import threading

    if sys.getrecursionlimit() < 20000:
        sys.setrecursionlimit(20000)
    result: list[int] = []
    err = sys.stderr
    old = threading.stack_size(512 * 1024 * 1024)
    try:
        worker = threading.Thread(target=lambda: result.append(guarded(tool, body, err)),
                                  daemon=True)
    finally:
        threading.stack_size(old)
    try:
        worker.start()
        worker.join()
        sys.stdout.flush()
    except KeyboardInterrupt:
        print(f"{tool}: interrupted", file=err)
        err.flush()
        os._exit(EXIT_INTERRUPTED)
    except BrokenPipeError:
        silence_stdout()
        return EXIT_BROKEN_PIPE
    return result[0] if result else EXIT_USER_ERROR


def guarded(tool: str, body: Callable[[], int], err: IO[str] | None = None) -> int:
    """Run a tool's body; turn every exception into a report and an exit code."""
    stream = err if err is not None else sys.stderr
    try:
        return body()
    except UsageError as e:
        print(f"{tool}: error: {e}", file=stream)
        return EXIT_USAGE_ERROR
    except InputError as e:
        for line in e.lines:
            print(line, file=stream)
        return EXIT_USER_ERROR
    except RecursionError:
        print(f"{tool}: error: input is nested too deeply to process", file=stream)
        return EXIT_USER_ERROR
    except SystemExit as e:  # argparse's --help and --version
        return e.code if isinstance(e.code, int) else int(e.code is not None)
    except KeyboardInterrupt:
        print(f"{tool}: interrupted", file=stream)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        silence_stdout()
        return EXIT_BROKEN_PIPE
    except Exception as e:  # a bug: still one line, never a traceback
        print(f"{tool}: internal error: {type(e).__name__}: {one_line(e)}", file=stream)
        return EXIT_USER_ERROR
