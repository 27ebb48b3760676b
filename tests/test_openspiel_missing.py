"""Without OpenSpiel, importing taluva_ai.openspiel fails with one line naming the extra."""

from __future__ import annotations

import importlib
import sys

import pytest


def test_missing_open_spiel_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # import pyspiel -> ImportError
    monkeypatch.delitem(sys.modules, "taluva_ai.openspiel", raising=False)
    with pytest.raises(ImportError) as info:
        importlib.import_module("taluva_ai.openspiel")
    assert str(info.value) == ("taluva_ai.openspiel needs OpenSpiel: pip install "
                               "'taluva-ai[openspiel]' (the open_spiel package)")


def test_missing_open_spiel_openspiel_agent(monkeypatch):
    from taluva_ai.agents import make_agent

    monkeypatch.setitem(sys.modules, "pyspiel", None)
    monkeypatch.delitem(sys.modules, "taluva_ai.openspiel", raising=False)
    with pytest.raises(ValueError) as info:
        make_agent("openspiel:sims=10")
    assert str(info.value) == ("agent 'openspiel:sims=10': taluva_ai.openspiel needs OpenSpiel: "
                               "pip install 'taluva-ai[openspiel]' (the open_spiel package)")
