

def test_make_game_names_an_unknown_rule_option() -> None:
    import pytest

    from taluva_ai import make_game
    from taluva_ai.games.taluva.rules import RuleError

    with pytest.raises(RuleError, match=r"unknown rule option\(s\): tiles_per_plyer"):
        make_game("taluva", tiles_per_plyer=12)
