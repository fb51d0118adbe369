"""LLMOptions: precedence of flags, environment and config file; refusals."""

from __future__ import annotations

import pytest

from foretab.llm import LLMConfigError, LLMOptions, load_options


def test_unknown_option_is_refused() -> None:
    with pytest.raises(ValueError, match="extra"):
        LLMOptions(model="m", temprature=0.1)


def test_precedence_flag_over_env_over_file(tmp_path) -> None:
    config = tmp_path / "llm.toml"
    config.write_text('[llm]\nbase_url = "http://file/v1"\nmodel = "file-model"\nmax_retries = 5\n')
    env = {"FORETAB_LLM_MODEL": "env-model"}
    options = load_options(config_path=config, environ=env)
    assert (options.base_url, options.model, options.max_retries) == (
        "http://file/v1",
        "env-model",
        5,
    )
    flagged = load_options(model="flag-model", config_path=config, environ=env)
    assert flagged.model == "flag-model"


def test_config_file_from_env_and_top_level_keys(tmp_path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('base_url = "http://x/v1"\nmodel = "m"\ntimeout_s = 3\n')
    options = load_options(environ={"FORETAB_LLM_CONFIG": str(config)})
    assert options.timeout_s == 3.0


def test_bad_config_names_the_key(tmp_path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text('[llm]\nmodel = "m"\nretries = 3\n')
    with pytest.raises(LLMConfigError, match="retries"):
        load_options(config_path=config, environ={})
    with pytest.raises(LLMConfigError, match="does not exist"):
        load_options(config_path=tmp_path / "none.toml", environ={})


def test_api_key_from_the_named_variable() -> None:
    options = LLMOptions(api_key_env="MY_KEY")
    assert options.api_key({"MY_KEY": "sekret"}) == "sekret"
    assert options.api_key({}) == "not-needed"


def test_missing_endpoint_says_which_flags() -> None:
    with pytest.raises(LLMConfigError, match="--llm-base-url and --llm-model"):
        load_options(environ={}).require_endpoint()
