"""Arguments checked before any executor sees them: the schema, defaults, and valid Unicode."""

from __future__ import annotations

import pytest

from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.service.arguments import ArgumentValidator
from tests.consent.apps import local_app


def test_a_lone_surrogate_anywhere_is_invalid_params_naming_where() -> None:
    app = local_app(tools=("create",))
    arguments = {"text": "ok\ud800", "nested": {"k\udfff": ["fine", "\ud83d"]}}
    with pytest.raises(AaiError) as caught:
        ArgumentValidator().prepare(app, app.tools[0], arguments)
    assert caught.value.code is ErrorCode.INVALID_PARAMS
    assert caught.value.data["violations"] == [
        {"path": "/nested/k\udfff", "message": "text that is not valid Unicode (a lone surrogate U+DFFF)"},
        {"path": "/nested/k\udfff/1", "message": "text that is not valid Unicode (a lone surrogate U+D83D)"},
        {"path": "/text", "message": "text that is not valid Unicode (a lone surrogate U+D800)"},
    ]


def test_text_beyond_the_basic_plane_is_valid() -> None:
    app = local_app(tools=("create",))
    prepared = ArgumentValidator().prepare(app, app.tools[0], {"text": "🍅 漢字"})
    assert prepared["text"] == "🍅 漢字"
