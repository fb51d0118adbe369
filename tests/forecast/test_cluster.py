"""``foretab train --cluster``: the store model trained on a Dask cluster (issue 27).

The slow test starts a real two-worker cluster on loopback, trains the same store both
ways and compares the hold-out (future-store) errors cell by cell.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from foretab.errors import ForecastError
from foretab.forecast.cluster import ClusterAddress, active_trainer, on_cluster


@pytest.mark.parametrize(
    "text",
    ["tcp://127.0.0.1:8786", "dask://127.0.0.1", "dask://:8786", "dask://h:port", "h:8786"],
)
def test_a_cluster_address_that_is_not_dask_host_port_is_refused_with_the_form(
    text: str,
) -> None:
    with pytest.raises(ForecastError) as caught:
        ClusterAddress.parse(text)
    assert "dask://HOST:PORT" in " ".join(caught.value.suggestions)


def test_a_dask_address_names_the_scheduler() -> None:
    assert ClusterAddress.parse("dask://10.0.0.5:8786").scheduler == "tcp://10.0.0.5:8786"


def test_outside_on_cluster_boosters_train_locally() -> None:
    assert active_trainer() is None


@pytest.mark.slow
def test_no_scheduler_is_a_user_error_naming_the_address() -> None:
    with (
        pytest.raises(ForecastError, match=r"127\.0\.0\.1:9"),
        on_cluster("dask://127.0.0.1:9", timeout_s=2),
    ):
        pass


@pytest.fixture(scope="module")
def loopback_cluster() -> Iterator[str]:
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=":0",  # any free port: never a clash with a running dashboard
    ) as cluster:
        yield "dask://" + cluster.scheduler_address.removeprefix("tcp://")


def _demo_store(path: Path) -> str:
    from foretab.demo.defaults import default_reference_month
    from foretab.demo.generate import generate_corpus
    from foretab.store.ingest import ingest_frame

    db = str(path)
    ingest_frame(generate_corpus(0, n_projects=400), db, default_reference_month())
    return db


#: Seeds each way. One fit is not a measurement here: on this 400-project store the local
#: model's hold-out MAE moves from about 2,030 to 3,000 with the seed alone, and a cluster
#: fit is not bit-reproducible (which worker gets which rows and rank varies per run), so
#: the test compares the mean over seeds (docs/scale.md, "Hold-out").
CLUSTER_SEEDS = (0, 1, 2, 3)
#: The paired per-seed differences had a spread of about 4% of the MAE (six seeds); over
#: four seeds their mean stays within about 2%, so 8% is never crossed by chance, while a
#: broken split (each worker holding other cities: +66%) is far above it.
CLUSTER_TOLERANCE = 0.08


@pytest.mark.slow
def test_the_cluster_model_scores_the_hold_out_as_well_as_the_local_one_over_seeds(
    loopback_cluster: str, tmp_path: Path
) -> None:
    from foretab.bench.forecast.cell_compare import compare_cell_files
    from foretab.bench.forecast.corpus import bench_corpus
    from foretab.forecast.store import ARTIFACT_NAME, train_store_model
    from foretab.store import open_history

    stores = {name: _demo_store(tmp_path / f"{name}.duckdb") for name in ("local", "cluster")}
    local_mae: list[float] = []
    change: list[float] = []
    for seed in CLUSTER_SEEDS:
        train_store_model(stores["local"], seed=seed)
        with on_cluster(loopback_cluster) as workers:
            assert workers == 2
            train_store_model(stores["cluster"], seed=seed)
        with open_history(stores["cluster"]) as store:
            saved = store.load_artifact(ARTIFACT_NAME)
        assert saved is not None
        with zipfile.ZipFile(io.BytesIO(saved)) as archive:
            boosters = [n for n in archive.namelist() if n.startswith("booster_")]
            assert boosters
            # Built by two machines, not by a local fallback.
            assert all("[num_machines: 2]" in archive.read(n).decode() for n in boosters)
        cells = {}
        for name, db in stores.items():
            cells[name] = tmp_path / f"{name}-{seed}.jsonl"
            bench_corpus(db, "lgbm_market", stored=True, details=cells[name])
        paired = compare_cell_files(cells["local"], cells["cluster"])
        assert paired.cells > 1000
        local_mae.append(paired.mae[0])
        change.append(paired.mae_change[0])
    mean_local = sum(local_mae) / len(local_mae)
    mean_change = sum(change) / len(change)
    assert mean_change <= CLUSTER_TOLERANCE * mean_local, (local_mae, change)


def test_train_with_a_non_dask_cluster_address_exits_naming_the_form(mini_duckdb: str) -> None:
    from typer.testing import CliRunner

    from foretab.cli.bench import forecast as _commands  # noqa: F401  (registers commands)
    from foretab.cli.main import app

    result = CliRunner().invoke(
        app, ["train", "--db", mini_duckdb, "--cluster", "tcp://127.0.0.1:8786"]
    )
    assert result.exit_code != 0
    assert "dask://HOST:PORT" in result.output
