"""MarkItDown set up to run offline: only local converters, no plugins, LLM captions or cloud services.

Audio keeps to exiftool metadata unless the caller allows the network (MarkItDown transcribes
through a web speech service). One engine per setting is built on first use and shared.
"""

from __future__ import annotations

import os
import shutil
import threading
from typing import Any

from ripplemem.errors import MissingDependencyError
from ripplemem.markdown.convert.conversion_types import DOCUMENTS_EXTRA


def _import_markitdown() -> Any:
    try:
        import markitdown
    except ImportError as exc:
        raise MissingDependencyError(
            f"Document conversion needs MarkItDown, which is not installed: {DOCUMENTS_EXTRA}"
        ) from exc
    return markitdown


def markitdown_available() -> bool:
    """Whether MarkItDown can be imported (the ``documents`` extra is installed)."""
    try:
        _import_markitdown()
    except MissingDependencyError:
        return False
    return True


def _build_markitdown(allow_network: bool) -> Any:
    """A MarkItDown with only local converters: no plugins, LLM, cloud or web-page converters."""
    markitdown = _import_markitdown()
    from markitdown import converters as c

    class OfflineAudioConverter(c.AudioConverter):
        """Audio metadata (exiftool) only: MarkItDown transcribes through a web speech service."""

        def convert(self, file_stream: Any, stream_info: Any, **kwargs: Any) -> Any:
            if not allow_network:
                # An unknown extension and mimetype give the converter no audio format to
                # transcribe, so it returns the metadata alone.
                stream_info = stream_info.copy_and_update(
                    extension=".no-transcription", mimetype="application/x-no-transcription"
                )
            return super().convert(file_stream, stream_info, **kwargs)

    engine = markitdown.MarkItDown(enable_builtins=False, enable_plugins=False)
    generic = markitdown.PRIORITY_GENERIC_FILE_FORMAT
    engine.register_converter(c.PlainTextConverter(), priority=generic)
    engine.register_converter(c.HtmlConverter(), priority=generic)
    for converter in (
        c.RssConverter(),
        c.DocxConverter(),
        c.XlsxConverter(),
        c.XlsConverter(),
        c.PptxConverter(),
        OfflineAudioConverter(),
        c.ImageConverter(),
        c.IpynbConverter(),
        c.PdfConverter(),
        c.OutlookMsgConverter(),
        c.EpubConverter(),
        c.CsvConverter(),
    ):
        engine.register_converter(converter)
    return engine


_engines: dict[bool, Any] = {}
_engines_lock = threading.Lock()


def offline_engine(allow_network: bool) -> Any:
    """The shared offline MarkItDown for this setting; raises MissingDependencyError without MarkItDown."""
    engine = _engines.get(allow_network)
    if engine is None:
        with _engines_lock:
            engine = _engines.get(allow_network)
            if engine is None:
                engine = _engines[allow_network] = _build_markitdown(allow_network)
    return engine


def exiftool_path() -> str | None:
    """The exiftool MarkItDown may read image/audio metadata with ($EXIFTOOL_PATH or on PATH)."""
    return os.environ.get("EXIFTOOL_PATH") or shutil.which("exiftool")
