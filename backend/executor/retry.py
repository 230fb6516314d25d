"""The one retry-and-give-up policy of the executor: every run (a reassignment's batches,
a shrink's stages or migration, a clear-throttles plan) retries a failed step with the
same backoff and gives up with the same words."""

from __future__ import annotations

from dataclasses import dataclass

from backend.errors import Unavailable


def retriable(e: Exception) -> bool:
    """A cluster or store that did not answer, or a gateway error Kafka marks retriable."""
    return isinstance(e, Unavailable) or getattr(e, "retriable", False)


@dataclass(frozen=True)
class Verdict:
    """What to do after a failed attempt: retry in ``retry_in`` seconds, or give up with
    ``cause`` (in words); ``abandon``: past the restore budget, end as things are."""

    retry_in: float | None = None
    cause: str | None = None
    abandon: bool = False


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff base x 2^(attempt-1), capped; a step fails after ``budget`` attempts.
    Putting the cluster back (the end, a cancel, a failure) gets ``restore_budget``
    attempts; past them the plan ends with every config it could not put back named."""

    budget: int = 5
    base: float = 1.0
    cap: float = 30.0
    restore_budget: int = 10

    def delay(self, attempt: int) -> float:
        return min(self.cap, self.base * 2 ** (attempt - 1))

    def judge(self, attempt: int, e: Exception, restoring: bool = False) -> Verdict:
        """The verdict on failed attempt number ``attempt`` (1..) with error ``e``;
        ``restoring``: the step puts configs back, which is retried until its own budget
        whatever the error (a config left behind is worse than a late end)."""
        if restoring and attempt >= self.restore_budget:
            return Verdict(abandon=True)
        if restoring or (retriable(e) and attempt < self.budget):
            return Verdict(retry_in=self.delay(min(attempt, self.budget)))
        return Verdict(cause=f"gave up after {attempt} attempts: {e}" if retriable(e)
                       else f"the cluster refused: {e}")
