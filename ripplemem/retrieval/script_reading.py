"""Whether the embedder in use can read a script, measured rather than assumed.

all-MiniLM-L6-v2 maps almost every Chinese character to [UNK], so its cosines between Chinese
texts are noise; multilingual-e5, OpenAI models and the hashing embedder read Chinese fine. A
probe of paraphrase pairs in other words tells them apart: an embedder that reads the script
finds each text's paraphrase among the others. Hybrid fusion scales the dense weight of a query
in that script by how well the model reads it, so a query the model cannot read leans on
keywords.
"""

from __future__ import annotations

import threading

from ripplemem.embedding.base import Embedder
from ripplemem.engine.calibration import pair_similarities, partners_found

# Paraphrase pairs in other words; every other pair's texts are the distractors.
_CJK_PAIRS = (
    ("我喜欢早上喝绿茶", "每天清晨来一杯龙井是我的习惯"),
    ("我下个月去杭州出差", "四周后公司派我到浙江开会"),
    ("我的膝盖从上周开始疼", "前几天起腿关节一直不舒服"),
    ("我妹妹住在柏林，她是建筑师", "舍妹在德国首都从事房屋设计"),
    ("周末我们全家去爬山", "星期六一家人要去登高"),
    ("他对花生过敏", "他一吃坚果就起疹子"),
    ("明天下午三点开会", "会议定在次日十五点"),
    ("女儿的钢琴课改到周四", "孩子的琴课挪到了星期四"),
)
_CJK_RANGES = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x3040, 0x30FF), (0xAC00, 0xD7AF))

_cache: dict[str, float] = {}
_lock = threading.Lock()


def cjk_share(text: str) -> float:
    """The share of the text's letters that are CJK (Chinese, Japanese kana, Korean hangul)."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return 0.0
    cjk = sum(any(low <= ord(ch) <= high for low, high in _CJK_RANGES) for ch in letters)
    return cjk / len(letters)


def reads_cjk(embedder: Embedder) -> float:
    """How well the embedder reads CJK text, in [0, 1] (0: no better than matching characters);
    measured once per model id and process."""
    model_id = embedder.model_id
    if model_id not in _cache:
        with _lock:
            if model_id not in _cache:
                _cache[model_id] = _probe(embedder)
    return _cache[model_id]


def _probe(embedder: Embedder) -> float:
    similarity, partner = pair_similarities(embedder, _CJK_PAIRS)
    found = partners_found(similarity, partner)
    # Rescaled so a model that finds no more than chance (one in fifteen) scores 0.
    chance = 1.0 / (len(partner) - 1)
    return max(0.0, (found - chance) / (1.0 - chance))


def dense_trust(query: str, embedder: Embedder) -> float:
    """How far to trust dense similarity for this query, in [0, 1]: 1 unless the query is mostly
    in a script the embedder cannot read."""
    share = cjk_share(query)
    if share < 0.3:
        return 1.0
    return 1.0 - share * (1.0 - reads_cjk(embedder))
