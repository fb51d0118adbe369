"""Training the store's LightGBM boosters on a Dask cluster (``foretab train --cluster``).

``lightgbm.dask`` is LightGBM's own distributed interface: each Dask worker holds a
slice of the training rows and the workers build every tree together (data-parallel
histograms over LightGBM's socket network). Everything else of a fit (windows,
features, residuals, intervals) runs where ``foretab train`` runs, and the boosters come
back as ordinary ``lightgbm.Booster`` objects, so the saved model file is the same
data-only format a single-process fit writes (``foretab.forecast.persist``).

Why Dask and not Ray: ``lightgbm.dask`` ships with LightGBM and is maintained with it;
Ray's LightGBM backend (``lightgbm-ray``) has had no release since 2023.

Inside :func:`on_cluster`, :func:`active_trainer` returns the trainer that
``foretab.forecast.gbm`` calls instead of ``lightgbm.train``.
"""

from __future__ import annotations

import contextlib
import itertools
import warnings
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from foretab.errors import ForecastError

if TYPE_CHECKING:
    import lightgbm as lgb

CLUSTER_SCHEME = "dask"
_INSTALL = 'pip install "foretab[cluster]"'

#: ``(params, training set, boosting rounds) -> booster``
BoosterTrainer = Callable[[dict[str, object], "lgb.Dataset", int], "lgb.Booster"]

_active: ContextVar[BoosterTrainer | None] = ContextVar("foretab_cluster_trainer", default=None)


@dataclass(frozen=True, slots=True)
class ClusterAddress:
    """A Dask scheduler: ``dask://HOST:PORT`` (the scheduler's TCP address)."""

    host: str
    port: int

    @property
    def scheduler(self) -> str:
        return f"tcp://{self.host}:{self.port}"

    @classmethod
    def parse(cls, text: str) -> ClusterAddress:
        """``dask://HOST:PORT``; anything else is refused with the form to use."""
        fix = "write it as dask://HOST:PORT, e.g. dask://10.0.0.5:8786 (the Dask scheduler)"
        parts = urlsplit(text.strip())
        if parts.scheme != CLUSTER_SCHEME:
            raise ForecastError(f"--cluster {text!r} is not a Dask address", suggestions=(fix,))
        try:
            port = parts.port
        except ValueError:
            port = None
        if not parts.hostname or port is None or parts.path not in ("", "/"):
            raise ForecastError(f"--cluster {text!r} needs a host and a port", suggestions=(fix,))
        return cls(parts.hostname, port)


def active_trainer() -> BoosterTrainer | None:
    """The cluster trainer of the enclosing :func:`on_cluster`, or None (train locally)."""
    return _active.get()


@contextlib.contextmanager
def on_cluster(address: str | ClusterAddress, *, timeout_s: float = 30.0) -> Iterator[int]:
    """Within the block every LightGBM booster of a fit is trained on the cluster.

    Yields the number of workers. Raises ``ForecastError`` when the extra is missing or
    the scheduler cannot be reached, before any training starts.
    """
    where = address if isinstance(address, ClusterAddress) else ClusterAddress.parse(address)
    try:
        from distributed import Client
    except ImportError as exc:
        raise ForecastError(
            "training on a cluster needs Dask's distributed scheduler client",
            suggestions=(_INSTALL,),
        ) from exc
    try:
        client = Client(where.scheduler, timeout=timeout_s, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise ForecastError(
            f"no Dask scheduler answered at {where.scheduler}: {exc}",
            suggestions=(
                "start one (`dask scheduler`, then `dask worker tcp://HOST:PORT` on each "
                "machine) or fix the address",
            ),
        ) from exc
    try:
        workers = len(client.scheduler_info()["workers"])
        if workers == 0:
            raise ForecastError(
                f"the Dask scheduler at {where.scheduler} has no workers",
                suggestions=("start `dask worker` processes pointed at it",),
            )
        token = _active.set(_trainer(client, workers))
        try:
            yield workers
        finally:
            _active.reset(token)
    finally:
        client.close()


def _trainer(client: Any, workers: int) -> BoosterTrainer:
    def train(params: dict[str, object], train_set: lgb.Dataset, rounds: int) -> lgb.Booster:
        import dask.array as da
        import numpy as np
        from lightgbm.dask import DaskLGBMRegressor

        # Rows come sorted by series (so by city): split as they are, each worker would
        # hold other cities, and LightGBM's distributed bin edges and L1 leaf medians
        # (found per worker, then merged) would fit neither half. A seeded shuffle gives
        # every worker a sample of the whole corpus.
        order = np.random.default_rng(_seed(params)).permutation(len(train_set.label))
        x = np.asarray(train_set.data)[order]
        y = np.asarray(train_set.label)[order]
        weight = None if train_set.weight is None else np.asarray(train_set.weight)[order]
        # One block of rows per worker, sent once (scattered, not embedded in the task
        # graph): lightgbm.dask trains each worker on the blocks it holds.
        bounds = np.linspace(0, len(y), workers + 1).astype(int)
        blocks = [slice(int(a), int(b)) for a, b in itertools.pairwise(bounds) if b > a]

        def spread(values: np.ndarray) -> da.Array:
            parts = client.scatter([values[s] for s in blocks], broadcast=False)
            return da.concatenate(
                [
                    da.from_delayed(
                        part, shape=(s.stop - s.start, *values.shape[1:]), dtype=values.dtype
                    )
                    for part, s in zip(parts, blocks, strict=True)
                ]
            )

        dx, dy = spread(x), spread(y)
        dw = None if weight is None else spread(weight.astype(float))
        local = {k: v for k, v in params.items() if k not in _SINGLE_PROCESS_ONLY}
        model = DaskLGBMRegressor(client=client, n_estimators=rounds, **local)
        with client.as_current(), warnings.catch_warnings():
            # lightgbm.dask sets each worker's threads from its Dask cores itself, and says
            # so about the sklearn wrapper's n_jobs: expected, not a problem to report.
            warnings.filterwarnings("ignore", r"Parameter (n_jobs|num_threads) will be ignored")
            model.fit(dx, dy, sample_weight=dw)  # waits on the current client's futures
        return model.booster_

    return train


def _seed(params: dict[str, object]) -> int:
    seed = params.get("seed", 0)
    return int(seed) if isinstance(seed, int | float | str) else 0


# ``num_threads`` is the calling machine's; each worker uses its own cores.
_SINGLE_PROCESS_ONLY = frozenset({"num_threads"})
