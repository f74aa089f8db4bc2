"""One mining trial on a worker: what the miner hands an executor's pool, and what comes back.

The pool's state is a :class:`TrialWorker` (the solver and each benchmark's validator);
:func:`attempt_trial` solves and validates one trial there and returns a
:class:`TrialAttempt` — plain, picklable data the driver logs. The executor knows nothing
of solvers or validators: it runs what it is handed.

>>> TrialAttempt(error="SolverError: timed out").validation is None
True
"""

from __future__ import annotations

import contextlib
import pickle
from dataclasses import dataclass

from ragmeter.executors.base import Executor, Limiter, WorkerPool
from ragmeter.executors.local import LocalExecutor
from ragmeter.mining.solvers import (
    BudgetExhausted,
    MeteredSolver,
    Solver,
    SolverAnswer,
    SolveRequest,
    SolverError,
)
from ragmeter.mining.validators import GroundTruth, Validation, Validator, ValidatorError


@dataclass
class TrialWorker:
    """What runs a trial (an executor pool's state): the solver and each benchmark's validator.

    ``limiter`` caps the solver calls in flight across every worker (``None``: the pool's
    own size is the cap).
    """

    solver: Solver
    validators: dict[str, Validator]
    limiter: Limiter | None = None


def local_trial_pool(
    solver: Solver, validators: dict[str, Validator], executor: Executor | None = None
) -> WorkerPool[TrialWorker]:
    """A pool running trials on threads of this process, ``solver.concurrency`` at once."""
    return (executor or LocalExecutor()).pool(
        TrialWorker(solver, validators), name="mine", size=1, per_worker=solver.concurrency
    )


@dataclass(frozen=True)
class TrialAttempt:
    """How one trial went on its worker, as plain data for the driver to log.

    ``answer`` is set whenever the solver answered (also when validation then failed to run);
    ``error`` is a failed call or validation (the trial is run again on ``--resume``);
    ``budget`` a budget stop; ``fatal`` an error that ends the run.
    """

    answer: SolverAnswer | None = None
    validation: Validation | None = None
    error: str | None = None
    budget: str | None = None
    fatal: BaseException | None = None


def attempt_trial(
    state: TrialWorker, request: SolveRequest, benchmark: str, truth: GroundTruth
) -> TrialAttempt:
    """Solve and validate one trial (on a worker); exceptions become fields of the attempt."""
    solver = state.solver
    answer: SolverAnswer | None = None
    try:
        with state.limiter.hold() if state.limiter is not None else contextlib.nullcontext():
            answer = solver.call(request) if isinstance(solver, MeteredSolver) else solver.solve(request)
        validation = state.validators[benchmark].validate(answer.text, truth)
    except (SolverError, ValidatorError) as exc:
        return TrialAttempt(answer=answer, error=f"{type(exc).__name__}: {exc}")
    except BudgetExhausted as exc:
        return TrialAttempt(budget=str(exc))
    except Exception as exc:  # configuration errors and bugs end the run
        return TrialAttempt(answer=answer, fatal=_portable(exc))
    return TrialAttempt(answer=answer, validation=validation)


def _portable(exc: Exception) -> Exception:
    """``exc``, or a RuntimeError saying what it was when it cannot be pickled (to leave a worker)."""
    try:
        pickle.dumps(exc)
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc
