"""``foretab serve``: the HTTP API and web page over one store."""

from __future__ import annotations

import ipaddress
import sys
from typing import Annotated

import typer

from foretab.cli.common import DbOption, exit_on_error
from foretab.cli.main import app
from foretab.cli.options import EngineOption, llm_options
from foretab.errors import ForetabError
from foretab.llm.settings import LLMSettings


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost: addresses other machines cannot reach."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@app.command()
@exit_on_error
@llm_options
def serve(
    db: DbOption,
    host: Annotated[
        str,
        typer.Option(help="Address to bind. Anything but loopback needs --token."),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="TCP port.")] = 8000,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="FORETAB_TOKEN",
            help="Bearer token required on /api/* (or set FORETAB_TOKEN, which keeps it out "
            "of the process list).",
            show_default=False,
        ),
    ] = None,
    future: Annotated[
        str,
        typer.Option(
            help="Default source of future values: model, oracle (evaluation only) or none; "
            "a request may pick another."
        ),
    ] = "model",
    allow_oracle: Annotated[
        bool,
        typer.Option(
            "--allow-oracle",
            help="Evaluation only: let requests (and --future) use the oracle, which reads "
            "the future store, i.e. the answers. Off: 'future: oracle' is refused (403).",
        ),
    ] = False,
    engines: Annotated[
        int,
        typer.Option(
            min=1,
            max=32,
            help="Questions answered at once per worker (one engine each; 2 answered most "
            "requests a second in `foretab bench serve`: one engine computes while the other "
            "waits for its SQL).",
        ),
    ] = 2,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=64,
            help="Server processes on the one port, each with its own --engines "
            "(default: the number of cores).",
            show_default=False,
        ),
    ] = None,
    queue: Annotated[
        int,
        typer.Option(
            min=0,
            max=10_000,
            help="Requests that may wait for an engine, per worker; past them the server "
            "answers 503 with Retry-After at once.",
        ),
    ] = 64,
    request_timeout: Annotated[
        float,
        typer.Option(
            min=0.1,
            max=3600,
            help="Seconds from a request's arrival (waiting included) to its answer before "
            "the server gives up on it with a 504.",
        ),
    ] = 30.0,
    pg_pool: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=1000,
            help="PostgreSQL stores: foretab's own connections open at most per database "
            "(history, future) per worker, from a psycopg_pool pool (default: 2 × --engines "
            "+ 2); the SQL guard adds one per engine.",
            show_default=False,
        ),
    ] = None,
    client_connections: Annotated[
        int,
        typer.Option(
            min=1,
            max=10_000,
            help="Connections one client address may hold open per worker; the next gets a "
            "503 at once. Behind a reverse proxy every request comes from the proxy: raise "
            "it to the proxy's concurrency.",
        ),
    ] = 32,
    cors_origin: Annotated[
        list[str] | None,
        typer.Option(help="Allow browser calls from this origin (repeatable). Default: no CORS."),
    ] = None,
    engine: EngineOption = "rules",
    *,
    llm: LLMSettings,
) -> None:
    """Serve the JSON API and the web page (/) for the store DB.

    Endpoints: /api/ask, /api/tables, /api/projects, /api/sql, /api/health; the schema is
    at /api/openapi.json.

    Binds loopback by default; binding any other address requires a token, which clients
    send as 'Authorization: Bearer TOKEN'. The rules engine is always served; --engine
    timefore, vanilla or hybrid (with --llm-base-url, --llm-model) also offers that LLM
    engine to requests that ask for it. Stop with Ctrl-C.
    """
    from foretab.extras import require

    require("uvicorn", "serve")
    require("fastapi", "serve")
    from foretab.web.gate import LOOPBACK_HOSTS
    from foretab.web.workers import ServeSpec, Started, default_workers
    from foretab.web.workers import serve as run_server

    if future not in ("model", "oracle", "none"):
        raise typer.BadParameter("use model, oracle or none", param_hint="--future")
    if future == "oracle" and not allow_oracle:
        raise ForetabError(
            "--future oracle reads the future store (the answers) and is for evaluation only; "
            "add --allow-oracle to serve it, or use --future model or none"
        )
    if token is not None and not (token.isascii() and token.isprintable() and " " not in token):
        raise ForetabError(
            "the --token must be printable ASCII without spaces (an HTTP header cannot carry "
            'anything else, so no client could ever send it); e.g. `python -c "import '
            'secrets; print(secrets.token_urlsafe())"`'
        )
    if token is not None and len(token) < 16:
        raise ForetabError(
            "the --token is too short to protect anything; use at least 16 characters "
            '(e.g. `python -c "import secrets; print(secrets.token_urlsafe())"`)'
        )
    loopback = is_loopback(host)
    if not loopback and token is None:
        raise ForetabError(
            f"binding to {host} would expose the API beyond this machine without a token; "
            "pass --token (or FORETAB_TOKEN), or keep the default --host 127.0.0.1"
        )
    spec = ServeSpec(
        db=db,
        host=host,
        port=port,
        token=token,
        future=future,  # type: ignore[arg-type]
        allow_oracle=allow_oracle,
        engines=engines,
        allowed_hosts=(*LOOPBACK_HOSTS, host) if loopback else ("*",),
        cors_origins=tuple(cors_origin or ()),
        engine=engine,
        llm=llm,
        workers=workers if workers is not None else default_workers(),
        queue=queue,
        request_timeout_s=request_timeout,
        pg_pool=pg_pool,
        client_connections=client_connections,
    )

    def announce(started: Started) -> None:
        if started.future_problem is not None:
            message, suggestions = started.future_problem
            print(
                f"warning: questions about the future will be refused: {message} "
                f"({'; '.join(suggestions) or 'or start with --future none'})",
                file=sys.stderr,
            )
        shown = f"[{host}]" if ":" in host else host
        print(
            f"foretab serve: http://{shown}:{port}/ — {started.store}, "
            f"{started.projects} projects, now = {started.reference}, future = {future}, "
            f"engines = {', '.join(started.engines)}, workers = {spec.workers} "
            f"× {engines} engines, queue {queue} per worker, timeout {request_timeout:g} s",
            file=sys.stderr,
        )

    # Header / body read deadlines and a per-client connection cap (web/server.py) in
    # every worker; workers share one listening socket (web/workers.py).
    run_server(spec, announce)
