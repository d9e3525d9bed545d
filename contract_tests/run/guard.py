"""What stops a part of a run becomes a verdict, a "not exercised" entry or a run error with its cause.

A part is a domain test, a Schemathesis plan or the consumer replay. What stops it never crashes the
run. The verdict is then incomplete (exit 2), and the report says which part stopped and why.
"""

from __future__ import annotations

from collections.abc import Callable

from contract_tests.client import causes
from contract_tests.client.keyring import CredentialsLost
from contract_tests.client.pacing import BudgetSpent
from contract_tests.judge.domain.http import Abandoned, Unreachable
from contract_tests.judge.engine import ConformanceError
from contract_tests.outcome.findings import Ledger, RunError


def guarded(ledger: Ledger, surface: str, check: str, work: Callable[[], None]) -> bool:
    """Run one check's work. What stops it becomes a verdict, a "not exercised" entry or a run error with
    its cause, never a crash. CredentialsLost goes on up, because it ends the run. The answer is False
    when the surface is gone (refused, unresolvable), since its other checks cannot run either."""
    try:
        work()
    except CredentialsLost:
        raise
    except BudgetSpent:
        ledger.unreached.append(f"[{surface}] {check}")
    except Abandoned as exc:
        ledger.skipped(surface, "-", check, f"not finished: {exc}")
    except ConformanceError as exc:
        ledger.skipped(surface, "-", check, str(exc))
        ledger.errors.append(run_error(surface, check, exc.__cause__ or exc, str(exc)))
    except Exception as exc:
        shown = exc.__cause__ if isinstance(exc, Unreachable) and exc.__cause__ is not None else exc
        error = run_error(surface, check, exc, f"{type(shown).__name__}: {shown}".removesuffix(": "))
        ledger.skipped(surface, "-", check, f"could not complete: {error.cause}")
        ledger.errors.append(error)
        return error.cause not in causes.UNREACHABLE
    return True


def run_error(surface: str, where: str, error: BaseException, detail: str) -> RunError:
    """`error` as a run error: its cause class and the first request it names."""
    return RunError(causes.classify(error), surface, where, causes.request_of(error), detail)
