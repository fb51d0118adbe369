"""Neural forecasters (neuralforecast architectures), trained on CPU.

The paper's TimesNet and TimeXer, and N-HiTS, PatchTST and TiDE from the field.

neuralforecast's orchestrator cannot forecast series it was not fitted on for
multivariate models (TimeXer), so foretab drives the architectures itself: the same
scale-free windows as the LightGBM model (``log(price / level)``, gaps linearly filled,
the missingness mask as an exogenous input where the model takes one), a masked L1 loss,
and early stopping on the validation split when one is given. A model that takes static
inputs (TiDE) also gets the calendar: which panel column its window ends at, as the
LightGBM model does. Needs the ``[neural]`` extra (torch, neuralforecast).
"""

from __future__ import annotations

import copy
import time
import warnings
from importlib.util import find_spec
from typing import Any, Self

import numpy as np

from foretab.errors import ForecastError
from foretab.forecast.base import MAX_HORIZON, Forecaster, ValidationSplit, last_observed
from foretab.forecast.impute import interpolate_linear
from foretab.forecast.windows import cut_windows, history_ends


def neural_installed() -> bool:
    """Whether the ``[neural]`` extra is installed, found without importing it.

    Importing torch and Lightning takes seconds; test collection and the benchmarks'
    model lists only need to know whether the models can run (``fit`` imports them).
    """
    return all(find_spec(name) is not None for name in ("torch", "neuralforecast"))


def neural_available() -> bool:
    """Whether torch and neuralforecast import (the ``[neural]`` extra)."""
    try:
        import neuralforecast.models  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def _encode(history: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(log(x/level) gap-filled [n, L], mask [n, L], level [n])``."""
    level, _ = last_observed(history)
    mask = np.isfinite(history)
    filled = interpolate_linear(history)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.log(filled / level[:, None])
    rel[~np.isfinite(rel)] = 0.0
    return rel.astype(np.float32), mask.astype(np.float32), level


#: Share of the training targets' log ratios left outside a forecast's range, each end.
OUTSIDE_RANGE = 0.001


def _plausible_range(log_ratios: np.ndarray) -> tuple[float, float]:
    """The central ``1 - 2 * OUTSIDE_RANGE`` of the training targets' log ratios.

    A network extrapolates freely from inputs unlike its training windows: on ODTQA-FoRe
    val, PatchTST forecast 1,498 times the truth for a series whose last observation was a
    fifth of its others (every input log ratio about +1.6). The trees cannot leave the
    range of their targets; the networks are held to it.
    """
    if not len(log_ratios):
        return (-np.inf, np.inf)
    low, high = np.quantile(log_ratios, [OUTSIDE_RANGE, 1 - OUTSIDE_RANGE])
    return (float(low), float(high))


class _NeuralForecaster(Forecaster):
    """Shared training loop; subclasses build the neuralforecast module."""

    def __init__(
        self,
        seed: int = 0,
        lookback: int = 24,
        max_steps: int = 3000,
        batch_size: int = 256,
        learning_rate: float = 1e-3,
        eval_every: int = 100,
        patience: int = 10,
        time_budget_s: float = 240.0,
        n_threads: int = 1,
    ) -> None:
        super().__init__(seed)
        self.lookback = lookback
        self.max_steps = max_steps
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.eval_every = eval_every
        self.patience = patience
        self.time_budget_s = time_budget_s
        self.n_threads = n_threads
        self.net: Any = None
        self.steps_trained = 0
        #: one more than the last panel column a training window ends at: the width of
        #: the one-hot calendar input of a model that reads it (set by ``fit``)
        self.calendar_size = 0
        #: ``(low, high)``: the log ratios a forecast may take (set by ``fit``)
        self.log_ratio_range = (-np.inf, np.inf)

    #: Whether the model reads the calendar (the column a window ends at, one-hot).
    reads_calendar = False

    def _build(self) -> Any:
        raise NotImplementedError

    def _shared_args(self) -> dict[str, Any]:
        """The constructor arguments every architecture takes alike."""
        return {
            "h": MAX_HORIZON,
            "input_size": self.lookback,
            "random_seed": self.seed,
            "enable_progress_bar": False,
            "logger": False,
        }

    def _batch(self, rel: Any, mask: Any, calendar: Any) -> dict[str, Any]:
        raise NotImplementedError

    def _calendar(self, end: np.ndarray) -> np.ndarray:
        """``[n, calendar_size]`` one-hot of each window's end column.

        ``[n, 0]`` for a model that does not read it: no array of zeros for every training
        window. A history that ends past the training windows (a forecast from the panel's last
        column) reads as the last training end, as the trees' split on the column does.
        """
        if not self.reads_calendar:
            return np.zeros((len(end), 0), dtype=np.float32)
        out = np.zeros((len(end), self.calendar_size), dtype=np.float32)
        out[np.arange(len(end)), np.clip(end, 0, self.calendar_size - 1)] = 1.0
        return out

    def _pad(self, history: np.ndarray) -> np.ndarray:
        n, t = history.shape
        if t >= self.lookback:
            return history[:, t - self.lookback :]
        return np.concatenate([np.full((n, self.lookback - t), np.nan), history], axis=1)

    def _forward(self, rel: Any, mask: Any, calendar: Any) -> Any:
        return self.net(self._batch(rel, mask, calendar))[..., 0]  # [B, h]

    def fit(self, panel: np.ndarray, val: ValidationSplit | None = None) -> Self:
        if not neural_available():
            raise ForecastError(
                f"model {self.alias!r} needs torch and neuralforecast",
                suggestions=("pip install torch==2.13.0 'foretab[neural]'",),
            )
        import torch

        torch.manual_seed(self.seed)
        torch.set_num_threads(self.n_threads)
        rng = np.random.default_rng(self.seed)
        win = cut_windows(np.asarray(panel, dtype=float), self.lookback)
        self.calendar_size = int(win.end.max()) + 1 if len(win.end) else 1
        rel, mask, level = _encode(win.history)
        with np.errstate(invalid="ignore", divide="ignore"):
            y = np.log(win.target / level[:, None]).astype(np.float32)
        ymask = np.isfinite(y)
        self.log_ratio_range = _plausible_range(y[ymask])
        y[~ymask] = 0.0
        t_rel, t_mask = torch.from_numpy(rel), torch.from_numpy(mask)
        t_y, t_ym = torch.from_numpy(y), torch.from_numpy(ymask.astype(np.float32))
        t_cal = torch.from_numpy(self._calendar(win.end))
        if val is not None:
            vrel, vmask, vlev = _encode(self._pad(val.history))
            with np.errstate(invalid="ignore", divide="ignore"):
                vy = np.log(val.target / vlev[:, None]).astype(np.float32)
            vym = np.isfinite(vy)
            vy[~vym] = 0.0
            vcal = self._calendar(history_ends(val.history))
            v = tuple(torch.from_numpy(a) for a in (vrel, vmask, vcal, vy, vym.astype(np.float32)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # lightning / torch chatter on construction
            self.net = self._build()
        opt = torch.optim.Adam(self.net.parameters(), lr=self.learning_rate)
        best, best_state, bad = float("inf"), None, 0
        start = time.perf_counter()
        for step in range(1, self.max_steps + 1):
            self.net.train()
            idx = torch.from_numpy(rng.integers(0, len(rel), self.batch_size))
            pred = self._forward(t_rel[idx], t_mask[idx], t_cal[idx])
            loss = (torch.abs(pred - t_y[idx]) * t_ym[idx]).sum() / t_ym[idx].sum().clamp(min=1)
            opt.zero_grad()
            loss.backward()
            opt.step()
            self.steps_trained = step
            out_of_time = time.perf_counter() - start > self.time_budget_s
            if val is not None and (step % self.eval_every == 0 or out_of_time):
                self.net.eval()
                with torch.no_grad():
                    vp = self._forward(v[0], v[1], v[2])[:, : v[3].shape[1]]
                    vl = float(((vp - v[3]).abs() * v[4]).sum() / v[4].sum())
                if vl < best:
                    best, best_state, bad = vl, copy.deepcopy(self.net.state_dict()), 0
                else:
                    bad += 1
                if bad >= self.patience:
                    break
            if out_of_time:
                break
        if best_state is not None:
            self.net.load_state_dict(best_state)
        self.net.eval()
        return self

    def _predict(self, history: np.ndarray, h: int) -> np.ndarray:
        if self.net is None:
            raise ForecastError(
                f"model {self.alias!r} is not fitted", suggestions=("call fit(panel) first",)
            )
        import torch

        rel, mask, level = _encode(self._pad(history))
        calendar = torch.from_numpy(self._calendar(history_ends(history)))
        with torch.no_grad():
            pred = self._forward(torch.from_numpy(rel), torch.from_numpy(mask), calendar)
        log_ratio = np.clip(pred.numpy()[:, :h].astype(float), *self.log_ratio_range)
        return level[:, None] * np.exp(log_ratio)


class TimesNetForecaster(_NeuralForecaster):
    """TimesNet (Wu et al., 2023), the paper's imputation model, as a forecaster."""

    alias = "timesnet"

    def _build(self) -> Any:
        from neuralforecast.models import TimesNet

        return TimesNet(
            **self._shared_args(),
            # Small on purpose: the full-size model costs seconds per step on a CPU.
            hidden_size=16,
            conv_hidden_size=16,
            top_k=2,
            num_kernels=2,
            encoder_layers=2,
        )

    def _batch(self, rel: Any, mask: Any, calendar: Any) -> dict[str, Any]:
        return {"insample_y": rel[:, :, None], "futr_exog": None}


class TimeXerForecaster(_NeuralForecaster):
    """TimeXer (Wang et al., 2024), the paper's forecaster.

    The missingness mask is its exogenous input.
    """

    alias = "timexer"

    def _build(self) -> Any:
        from neuralforecast.models import TimeXer

        return TimeXer(
            **self._shared_args(),
            n_series=1,
            hist_exog_list=["observed"],
            patch_len=6,
            hidden_size=64,
            n_heads=4,
            e_layers=2,
            d_ff=128,
        )

    def _batch(self, rel: Any, mask: Any, calendar: Any) -> dict[str, Any]:
        return {
            "insample_y": rel[:, :, None],
            "hist_exog": mask[:, None, :, None],
            "stat_exog": None,
            "futr_exog": None,
        }


class NHITSForecaster(_NeuralForecaster):
    """N-HiTS (Challu et al., 2023): stacked MLPs over pooled inputs, fast on a CPU.

    Structurally unlike the trees (a smooth function of the whole window), which is what
    an ensemble member needs; the missingness mask is its exogenous input.
    """

    alias = "nhits"

    def _build(self) -> Any:
        from neuralforecast.models import NHITS

        return NHITS(
            **self._shared_args(),
            hist_exog_list=["observed"],
            mlp_units=[[256, 256]] * 3,
            n_pool_kernel_size=[2, 2, 1],
            n_freq_downsample=[4, 2, 1],
            dropout_prob_theta=0.1,
        )

    def _batch(self, rel: Any, mask: Any, calendar: Any) -> dict[str, Any]:
        return {
            "insample_y": rel[:, :, None],
            "insample_mask": mask[:, :, None],
            "hist_exog": mask[:, :, None],
            "stat_exog": None,
            "futr_exog": None,
        }


class PatchTSTForecaster(_NeuralForecaster):
    """PatchTST (Nie et al., 2023): a Transformer over patches of one series.

    Channel-independent and univariate in neuralforecast: it reads the prices only (no
    mask). Small patches, because a window is 24 months, not hundreds of steps.
    """

    alias = "patchtst"

    def _build(self) -> Any:
        from neuralforecast.models import PatchTST

        return PatchTST(
            **self._shared_args(),
            patch_len=6,
            stride=3,
            encoder_layers=2,
            n_heads=4,
            hidden_size=64,
            linear_hidden_size=128,
            # foretab's windows are already scale-free (log price over the last level)
            revin=False,
        )

    def _batch(self, rel: Any, mask: Any, calendar: Any) -> dict[str, Any]:
        return {"insample_y": rel[:, :, None]}


class TiDEForecaster(_NeuralForecaster):
    """TiDE (Das et al., 2023): a dense encoder-decoder with a linear skip.

    The one neural model here that reads the calendar (static input: the column its
    window ends at): on a panel whose series share one calendar, windows that end at the
    same month share the market's move over their targets, which is what the LightGBM
    model's calendar column learns and the others cannot see. The mask is its
    historical input.
    """

    alias = "tide"
    reads_calendar = True

    def _build(self) -> Any:
        from neuralforecast.models import TiDE

        return TiDE(
            **self._shared_args(),
            hist_exog_list=["observed"],
            stat_exog_list=[f"end_{c}" for c in range(self.calendar_size)],
            hidden_size=256,
            decoder_output_dim=16,
            temporal_decoder_dim=64,
            num_encoder_layers=2,
            num_decoder_layers=2,
            dropout=0.2,
            # neuralforecast normalises each residual block's output over its features:
            # the temporal decoder's block has one (a point forecast), so with layer norm
            # its output is a constant and only TiDE's linear skip would learn.
            layernorm=False,
        )

    def _batch(self, rel: Any, mask: Any, calendar: Any) -> dict[str, Any]:
        return {
            "insample_y": rel[:, :, None],
            "hist_exog": mask[:, :, None],
            "stat_exog": calendar,
            "futr_exog": None,
        }
