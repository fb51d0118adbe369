"""The web page in headless Chromium (Debian's package) driven by Playwright.

``foretab serve`` runs as a real process on a free loopback port; a second server in this
process uses a future source with intervals to check the band. Screenshots are saved
under pytest's tmp dir and their paths printed (``pytest -s`` or the -rA summary shows them).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from foretab.web import AppSettings, EnginePool, create_app
from tests.web.conftest import banded_factory
from tests.web.server import serve_process, serving

# Slow: Chromium and a served process take ~20 s to start and stop; CI runs them.
pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip(
        "Chromium not found: install Debian's chromium package (`.ci/run` does) to run "
        "the browser tests",
        allow_module_level=True,
    )
playwright = pytest.importorskip(
    "playwright.sync_api", reason="Playwright not installed: pip install -e '.[dev]'"
)

MONTHLY = (
    "What will the monthly prices of Bund Garden in Huangpu, Shanghai be in the next six months?"
)
COMPARE = "Which of Bund Garden or Xintiandi Court in Huangpu, Shanghai will see a bigger price increase next year?"
SCOPE = "What are the three most expensive projects in Tianhe District, Guangzhou next month?"
CHINESE = "上海市黄浦区外滩花园未来六个月每个月的价格分别是多少？"
UNKNOWN = "What will the price of Crystal Palace in Huangpu, Shanghai be next month?"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with playwright.sync_playwright() as p:
        # The system browser, never a downloaded one (`playwright install` is not used).
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def served(mini_duckdb: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``foretab serve`` in its own process, future values from the future store."""
    log_path = tmp_path_factory.mktemp("serve") / "serve.log"
    args = ("--future", "oracle", "--allow-oracle", "--engines", "2")
    with serve_process(mini_duckdb, *args, log_path=log_path) as (url, _):
        yield url


def _ask(page, question: str) -> None:
    page.fill("#question", question)
    page.click("#ask")
    # No wait_for_function: the page's CSP forbids the eval it relies on.
    answered = page.locator("#status", has_text="Answered in")
    answered.or_(page.locator("#error:not([hidden])")).wait_for(timeout=20_000)


def _shot(page, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")


def test_page_answers_with_a_chart_and_trace(browser, served, tmp_path) -> None:
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(served + "/")
    page.wait_for_selector("#examples button")
    assert "36 projects" in page.text_content("#store")

    _ask(page, MONTHLY)
    assert page.is_hidden("#error")
    assert "59,947.94 in January 2022" in page.text_content("#answer-text")
    assert page.locator("#answer-table tbody tr").count() == 6
    assert page.locator("#chart svg[role=img]").count() == 1
    assert page.locator("#chart path.history").count() == 1
    assert page.locator("#chart path.forecast").count() == 1
    assert page.locator("#chart path.band").count() == 0  # the oracle gives no interval
    assert "no prediction interval" in page.text_content("#chart-note")
    page.click("#trace summary")
    assert "project_price_table_huangpu_district_shanghai_2021" in page.text_content("#tables")
    assert "UNION ALL" in page.text_content("#sql")
    assert page.locator("#steps tbody tr").count() >= 5
    _shot(page, tmp_path, "monthly_oracle")

    _ask(page, COMPARE)
    assert page.locator("#chart g.series").count() == 2
    assert page.locator("#chart path.history").count() == 2
    assert page.locator("#legend li", has_text="Xintiandi Court").count() == 1
    assert page.text_content("#answer-table tbody").strip() != ""
    _shot(page, tmp_path, "comparison_oracle")

    _ask(page, SCOPE)
    assert page.is_hidden("#error")
    rows = page.locator("#answer-table tbody tr")
    assert rows.count() == 3  # the top three, one per row
    assert rows.first.text_content() == "Tangxia Terrace"
    assert page.locator("#chart g.series").count() == 8  # every candidate of the district
    _shot(page, tmp_path, "scope_table")

    _ask(page, CHINESE)
    assert page.is_hidden("#error")
    assert "外滩花园2022年1月至2022年6月" in page.text_content("#answer-text")
    assert page.locator("#answer-table tbody tr").count() == 6
    assert page.locator("#chart path.forecast").count() == 1
    assert "q=" in page.url
    _shot(page, tmp_path, "chinese")

    _ask(page, UNKNOWN)
    assert page.is_visible("#error")
    assert "Crystal Palace" in page.text_content("#error-message")
    assert page.locator("#error-suggestions li").count() >= 1
    assert page.is_hidden("#result")
    _shot(page, tmp_path, "error")
    assert not errors, errors


def test_interval_band_and_phone_width(browser, mini_duckdb, tmp_path) -> None:
    pool = EnginePool(banded_factory(mini_duckdb), size=2, default="model")
    try:
        with serving(create_app(pool)) as url:
            page = browser.new_page(viewport={"width": 390, "height": 844})
            page.goto(url + "/")
            _ask(page, MONTHLY)
            band = page.locator("#chart path.band")
            assert band.count() == 1
            assert len(band.get_attribute("d") or "") > 20
            assert page.locator("#legend li", has_text="80% interval").count() == 1
            # Nothing wider than the phone: no sideways scrolling of the page.
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
            _shot(page, tmp_path, "monthly_band_phone")

            page.set_viewport_size({"width": 1100, "height": 900})
            _ask(page, COMPARE)
            assert page.locator("#chart path.band").count() == 2
            assert page.locator("#chart path.forecast").count() == 2
            _shot(page, tmp_path, "comparison_band")
    finally:
        pool.close()


def test_token_prompt(browser, mini_duckdb, tmp_path) -> None:
    token = "browser-test-token-0123456789"
    pool = EnginePool(banded_factory(mini_duckdb), size=1, default="none")
    try:
        with serving(create_app(pool, AppSettings(token=token))) as url:
            page = browser.new_page(viewport={"width": 800, "height": 800})
            page.goto(url + "/")
            page.locator("#error:not([hidden])").wait_for()
            assert "UnauthorizedError" in page.text_content("#error-title")
            assert page.is_visible("#token")
            page.fill("#token", token)
            _ask(page, MONTHLY)
            assert page.is_hidden("#error")
            assert "59,365.31" in page.text_content("#answer-text")
            page.locator("#examples button").first.wait_for()
            assert "36 projects" in page.text_content("#store")
            _shot(page, tmp_path, "token")
    finally:
        pool.close()


def test_a_three_turn_thread_with_a_clarify_button(browser, served, tmp_path) -> None:
    """A question, a follow-up whose name is two projects (a choice clicked), a follow-up."""
    alone = httpx.post(
        served + "/api/ask",
        json={
            "question": "What was the average price of Poly Garden in Huangpu, Shanghai in 2020?"
        },
        timeout=30,
    ).json()["answer"][0][0]
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(served + "/")
    page.wait_for_selector("#examples button")

    _ask(page, "What was the price of Bund Garden in Huangpu, Shanghai in December 2021?")
    assert "59,365.31" in page.text_content("#answer-text")
    assert page.locator("#turns li").count() == 1

    page.fill("#question", "what about Poly Garden?")
    page.click("#ask")
    page.locator("#clarify:not([hidden])").wait_for(timeout=20_000)
    choices = page.locator("#clarify-choices button")
    assert choices.count() == 2
    assert "Guangzhou" in choices.nth(0).text_content()
    assert "Shanghai" in choices.nth(1).text_content()
    _shot(page, tmp_path, "clarify")
    choices.nth(1).click()
    page.locator("#status", has_text="Answered in").wait_for(timeout=20_000)
    assert page.is_hidden("#clarify")
    assert "Poly Garden (Huangpu District, Shanghai)" in page.text_content("#turns li:last-child")

    _ask(page, "and in 2020?")
    assert page.is_hidden("#error")
    assert f"{alone:,.2f}" in page.text_content("#answer-text")
    assert "from January 2020 to December 2020" in page.text_content("#turns li:last-child")
    assert page.locator("#turns li").count() == 4  # question, clarify, choice, follow-up
    _shot(page, tmp_path, "thread")

    page.click("#new-conversation")
    assert page.is_hidden("#thread")
    _ask(page, "and in 2019?")
    assert "earlier question" in page.text_content("#error-message")
    assert not errors, errors
