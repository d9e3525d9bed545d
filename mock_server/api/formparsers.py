"""Starlette's form parsers, made strict about UTF-8. A field that is not UTF-8 is a 400 naming it.

Starlette replaces undecodable escapes of an urlencoded body with U+FFFD. It decodes a multipart text
part that is not UTF-8 as Latin-1. Either way the mock would store text the client never sent.
"""

from __future__ import annotations

from urllib.parse import unquote_to_bytes

from starlette.formparsers import FormParser, MultiPartParser

from mock_server.spec.inputs import decode_strictly


class StrictFormParser(FormParser):
    """Starlette's urlencoded parser, except that a value whose escapes are not UTF-8 is refused.

    Starlette replaces them with U+FFFD, silently storing something the client never sent.
    """

    def on_field_end(self) -> None:
        name = decode_strictly(unquote_to_bytes(bytes(self._field_name).replace(b"+", b" ")), "(name)", "form body")
        value = decode_strictly(unquote_to_bytes(bytes(self._field_value).replace(b"+", b" ")), name, "form body")
        self._field_name.clear()
        self._field_value.clear()
        super().on_field_end()
        self._items[-1] = (name, value)


class StrictMultiPartParser(MultiPartParser):
    """Starlette's multipart parser, except that a text part that is not UTF-8 is refused.

    Starlette falls back to Latin-1.
    """

    def on_part_end(self) -> None:
        part = self._current_part
        if part.file is None:
            decode_strictly(bytes(part.data), part.field_name, "multipart body")
        super().on_part_end()
