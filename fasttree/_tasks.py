"""Parallel tasks called through their address: one parallel loop for every kind of task.

numba compiles a parallel loop's body into a worker function of its own, and links every
function the body calls into it, then into the kernel holding the loop: LLVM optimizes a
called scan there twice more.  A tuple the body reads reaches the worker as one argument per
item, each array costing about 30 ms of compile (its data, shape and strides through the
interface of numba's worker functions).  A level's search of the classifier compiled in 3 s,
0.5 s of it the loop's own.

So a kernel is written as a serial *task function* ``task(pointer, t)``: it reads its data
with :func:`load_pointer` and does task ``t``.  :func:`task_address` compiles it for the
data's types (with the C wrapper a call through an address goes to), and :func:`run_tasks` runs
tasks ``0 .. n - 1`` in one parallel loop compiled once for all kinds (:func:`_run_at`), which
calls the task at its address and hands it the data as one pointer to a copy on the stack of
a small function compiled per kind of data (:func:`_run_tasks_at`).  Nothing is linked: each
function is optimized once.

Under ``NUMBA_DISABLE_JIT`` the same task functions run as Python, the pointer a list holding
the data.
"""

import os

import numba
import numpy as np
from llvmlite import ir as llvm_ir
from numba import _dispatcher, prange
from numba.core import cgutils
from numba.core.errors import TypingError
from numba.core.types.function_type import CompileResultWAP
from numba.extending import intrinsic

from ._jit import njit

_PYTHON = bool(numba.config.DISABLE_JIT)

#: task addresses, by (task function, :func:`_data_key` of its data)
_TASK_ADDRESSES = {}
#: the address of _run_at's C wrapper in this process
_RUN_AT = []


@intrinsic
def _stack_pointer(typingctx, value):
    """A pointer to a copy of ``value`` on the calling function's stack (valid until it
    returns)."""
    def codegen(context, builder, signature, args):
        # as data in memory (a boolean a byte), as a pointer to it reads it (_load)
        model = context.data_model_manager[value]
        slot = cgutils.alloca_once(builder, model.get_data_type())
        builder.store(model.as_data(builder, args[0]), slot)
        return builder.ptrtoint(slot, context.get_value_type(numba.types.intp))

    return numba.types.intp(value), codegen


@intrinsic
def _load(typingctx, pointer):
    refused = _not_task_data(pointer.dtype)
    if refused is not None:
        raise TypingError(f"a task's data holds {refused}: only arrays, scalars and tuples of "
                          "them may be passed to tasks (load_pointer takes away the reference "
                          "counts of arrays only)")

    def codegen(context, builder, signature, args):
        model = context.data_model_manager[pointer.dtype]
        return _without_counts(context, builder, pointer.dtype,
                               model.load_from_data_pointer(builder, args[0]))

    return pointer.dtype(pointer), codegen


def _not_task_data(typ):
    """A type in ``typ`` other than arrays, numbers, booleans, None and tuples of them, or None:
    a value of another type may count references, and would be released once too often."""
    if isinstance(typ, numba.types.BaseTuple):
        return next((refused for refused in map(_not_task_data, typ) if refused is not None),
                    None)
    allowed = (numba.types.Array, numba.types.Number, numba.types.Boolean, numba.types.NoneType)
    return None if isinstance(typ, allowed) else typ


def _without_counts(context, builder, typ, value):
    """``value`` (of numba type ``typ``) with the meminfo of each array in it set to null."""
    if isinstance(typ, numba.types.Array):
        array = context.make_array(typ)(context, builder, value=value)
        array.meminfo = cgutils.get_null_value(array.meminfo.type)
        array.parent = cgutils.get_null_value(array.parent.type)
        return array._getvalue()
    if isinstance(typ, numba.types.BaseTuple):
        for i, item in enumerate(typ):
            value = builder.insert_value(value, _without_counts(
                context, builder, item, builder.extract_value(value, i)), i)
    return value


def _load_in_python(pointer):
    return pointer[0]


#: ``load_pointer(pointer)``: the data a task function is given (``pointer``, its first
#: argument), its arrays without reference counts, as a parallel loop's body sees its arrays
#: (the caller holds the references).  A slice of an array that counts them adds and drops one
#: on the array's shared count, an atomic write the threads' slices fight over: a full-depth
#: regression tree's search took 2.2x as long on one thread with them, and no less on two.
load_pointer = _load_in_python if _PYTHON else _load


@intrinsic
def _call_at(typingctx, function, args):
    """Call the C wrapper at address ``function`` (of a function returning None) with the
    integers of the tuple ``args``."""
    def codegen(context, builder, signature, values):
        address, packed = values
        arguments = [builder.extract_value(packed, i) for i in range(len(args))]
        function_type = llvm_ir.FunctionType(context.get_value_type(numba.types.none),
                                             [argument.type for argument in arguments])
        builder.call(builder.inttoptr(address, function_type.as_pointer()), arguments)
        return context.get_dummy_value()

    return numba.types.none(function, args), codegen


def task_address(task, data):
    """Where :func:`run_tasks` finds ``task`` compiled for ``data``'s types.

    Parameters
    ----------
    task : numba dispatcher
        A task function ``task(pointer, t)`` returning None, made with
        ``njit(cache=True, no_cfunc_wrapper=False, no_cpython_wrapper=True)``.
    data : tuple
        What its tasks read (arrays, scalars and tuples of them).

    Returns
    -------
    int
        The address of its C wrapper (made once per kind of data, told apart by
        :func:`_data_key`).
    """
    if _PYTHON:
        return task
    key = (task, _data_key(data))
    address = _TASK_ADDRESSES.get(key)
    if address is None:
        signature = (numba.types.CPointer(numba.typeof(data)), numba.types.intp)
        task.compile(signature)
        address = _TASK_ADDRESSES[key] = CompileResultWAP(
            task.overloads[signature]).__wrapper_address__()
    return address


def _data_key(data):
    """What tells ``data``'s kind apart: numba's fingerprint of its type (1 us), or the type
    itself for values the fingerprint does not cover (0.5 ms for a search's data)."""
    try:
        return _fingerprint(data)
    except NotImplementedError:
        return numba.typeof(data)


#: numba's fingerprint of a value's type (a private function: ``typeof`` where it is gone)
_fingerprint = getattr(_dispatcher, "compute_fingerprint", numba.typeof)


@njit(parallel=True, cache=True, no_cfunc_wrapper=False)
def _run_at(task, pointer, n_tasks):
    """:func:`run_tasks`' parallel loop, compiled once whatever the tasks, and called through its
    address (so not linked into :func:`_run_tasks_at`)."""
    for t in prange(n_tasks):
        _call_at(task, (pointer, np.intp(t)))


def _run_at_address():
    if not _RUN_AT:
        signature = (numba.types.intp,) * 3
        _run_at.compile(signature)
        _RUN_AT.append(CompileResultWAP(_run_at.overloads[signature]).__wrapper_address__())
    return _RUN_AT[0]


@njit(cache=True)
def _run_tasks_at(run_at, task, data, n_tasks):
    """Copy ``data`` to this function's stack and run the tasks on it (compiled per kind of
    data: unpacking it from Python is most of its compile)."""
    _call_at(run_at, (task, _stack_pointer(data), n_tasks))


def run_tasks(task, data, n_tasks):
    """Run ``task(pointer to data, t)`` for every ``t`` in ``0 .. n_tasks - 1``, in parallel.

    Parameters
    ----------
    task : int
        :func:`task_address` of the task function for ``data``.
    data : tuple
        The tasks' data, alive until every task has returned.
    n_tasks : int
        How many tasks.
    """
    if _PYTHON:
        for t in range(n_tasks):
            task([data], t)
        return
    _run_tasks_at(_run_at_address(), task, data, n_tasks)


def _after_fork_in_child():
    # a child forked from an OpenMP parent runs _run_at's single-thread twin (fasttree._jit
    # rebinds the name): its address is looked up again
    _RUN_AT.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
