"""Chinese keyword search: CJK bigrams vs FTS5 trigram vs jieba, measured side by side.

    .venv/bin/python benchmarks/chinese_keywords.py [--n 10000] [--repeat 5]

Quality: 64 hand-written Chinese and mixed zh/en memories with distractors that share characters
(绿茶/红茶/绿色, 北京/北京路, 张伟/张伟明, and word-boundary traps such as 北京都 for 京都), and 40 queries
in seven groups: one- and two-character words, boundary traps, names, longer phrases, questions,
mixed zh/en. Reported: recall@1 (the top hit is relevant) and
recall@5 (share of the relevant memories in the top 5), BM25 ranking in every system.
Speed and size: the same systems on --n generated Chinese memories (templates x names x things x
places, seeded): index time, on-disk size of an FTS-only SQLite file, query latency p50.

Systems (each an FTS5 table, ranked by bm25()):
  bigram           RippleMem today: text.keyword_tokens (CJK runs -> overlapping bigrams) + unicode61
  bigram+zh-stop   the same, query bigrams that are Chinese function/question words dropped
  bigram+unigrams  bigrams plus every single CJK character in the index (a 1-character query
                   matches); queries as in bigram, so longer queries still match bigrams only
  trigram          FTS5 tokenize='trigram' on the raw text; query = its 3-character substrings
  jieba            jieba.lcut_for_search on both sides + unicode61; query stopwords dropped
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from ripplemem.core.text import keyword_tokens  # noqa: E402

MEMORIES = [
    "用户喜欢早上喝绿茶，不喜欢咖啡。",  # 0
    "他下午常喝红茶加牛奶。",  # 1
    "上周张伟从北京出差回来，给我带了烤鸭。",  # 2
    "李娜下个月要搬到南京工作。",  # 3
    "我们约好周六去北京路那家火锅店吃饭。",  # 4
    "王芳的女儿今年九月上小学一年级。",  # 5
    "张伟明是我大学时的室友，现在在深圳做程序员。",  # 6
    "用户对花生过敏，点菜时要提醒服务员。",  # 7
    "周末计划和家人去香山爬山。",  # 8
    "我在学习机器学习课程，每周三晚上上课。",  # 9
    "医生建议我每天步行一万步。",  # 10
    "用户的生日是三月十五日。",  # 11
    "下周二上午十点要去牙医那里补牙。",  # 12
    "刘洋推荐了一本书《三体》，说很好看。",  # 13
    "我的猫叫小白，今年三岁了。",  # 14
    "公司年会定在十二月二十日，在上海举办。",  # 15
    "老板让我周五之前交季度报告。",  # 16
    "用户最近在用 Python 写一个爬虫项目。",  # 17
    "我把 iPhone 15 的充电器忘在酒店了。",  # 18
    "妈妈说春节想去海南三亚过年。",  # 19
    "陈静每天早上六点去健身房跑步。",  # 20
    "用户不喜欢吃香菜，也不吃辣。",  # 21
    "我们家的 Wi-Fi 密码改成了 sunflower2024。",  # 22
    "张伟说他想买一辆特斯拉 Model 3。",  # 23
    "明天要去银行办理信用卡。",  # 24
    "用户在杭州西湖边租了一套公寓。",  # 25
    "我的护照下个月到期，需要续签。",  # 26
    "李娜喜欢听周杰伦的歌。",  # 27
    "周四晚上和同事去看电影《流浪地球》。",  # 28
    "用户打算明年去日本京都看樱花。",  # 29
    "爸爸的高血压药每天早晚各吃一次。",  # 30
    "王芳推荐的那家咖啡店在人民路上。",  # 31
    "我想学弹吉他，已经买了一把二手吉他。",  # 32
    "上个月在北京参加了人工智能大会。",  # 33
    "用户的车是白色的丰田卡罗拉。",  # 34
    "周日上午要带狗狗去打疫苗。",  # 35
    "我们团队下周开始用 Docker 部署服务。",  # 36
    "绿色的雨伞放在办公室门口了。",  # 37
    "用户每天晚上睡前喝一杯热牛奶。",  # 38
    "小李借了我五百块钱，说月底还。",  # 39
    "我报名了十月份的上海马拉松。",  # 40
    "用户喜欢吃四川火锅，尤其是毛肚。",  # 41
    "外婆住在北京郊区的一个小村子里。",  # 42
    "我在准备雅思考试，目标是七分。",  # 43
    "孩子的钢琴课改到周六下午三点。",  # 44
    "用户的手机号换成了新的号码。",  # 45
    "刘洋下周要去伦敦出差一周。",  # 46
    "我们计划在院子里种番茄和黄瓜。",  # 47
    "用户最近开始学习日语，每天背五十个单词。",  # 48
    "同事小王的婚礼在五月二十日。",  # 49
    "家里的洗衣机坏了，需要找人修理。",  # 50
    "用户不喝酒，聚会时只喝果汁。",  # 51
    "陈静推荐用 Notion 记笔记。",  # 52
    "我的笔记本电脑是 MacBook Pro，去年买的。",  # 53
    "周三开会讨论新产品的上线时间。",  # 54
    "用户喜欢看科幻小说，最喜欢刘慈欣。",  # 55
    "下个月房租要涨到四千五。",  # 56
    "我答应给张伟带一盒杭州龙井茶。",  # 57
    "用户周末喜欢去公园骑自行车。",  # 58
    "明年春天想和朋友去云南大理旅行。",  # 59
    # Traps for character n-grams: the query word appears across a word boundary.
    "今天北京都快四十度了，热得不行。",  # 60: 北京|都 holds 京都
    "我的同学生病住院了。",  # 61: 同学|生病 holds 学生
    "他是清华大学的学生。",  # 62
    "我们约在上海南站见面。",  # 63: 上海|南站 holds 海南
]

QUERIES: list[tuple[str, str, list[int]]] = [
    ("2-char word", "绿茶", [0]),
    ("2-char word", "北京", [2, 33, 42, 60]),
    ("2-char word", "咖啡", [0, 31]),
    ("2-char word", "火锅", [4, 41]),
    ("2-char word", "吉他", [32]),
    ("2-char word", "护照", [26]),
    ("2-char word", "牛奶", [1, 38]),
    ("2-char word", "樱花", [29]),
    ("2-char word", "医生", [10]),
    ("2-char word", "上海", [15, 40, 63]),
    ("1-char word", "猫", [14]),
    ("1-char word", "茶", [0, 1, 57]),
    ("1-char word", "狗", [35]),
    ("boundary trap", "京都", [29]),
    ("boundary trap", "学生", [62]),
    ("boundary trap", "海南", [19]),
    ("name", "张伟", [2, 23, 57]),
    ("name", "李娜", [3, 27]),
    ("name", "王芳", [5, 31]),
    ("name", "刘洋", [13, 46]),
    ("name", "陈静", [20, 52]),
    ("name", "刘慈欣", [55]),
    ("phrase", "机器学习课程", [9]),
    ("phrase", "季度报告", [16]),
    ("phrase", "信用卡", [24]),
    ("phrase", "高血压药", [30]),
    ("phrase", "上海马拉松", [40]),
    ("phrase", "去香山爬山", [8]),
    ("question", "用户早上喝什么茶？", [0]),
    ("question", "张伟从哪里出差回来？", [2]),
    ("question", "用户对什么过敏？", [7]),
    ("question", "猫叫什么名字？", [14]),
    ("question", "什么时候去补牙？", [12]),
    ("question", "用户的生日是哪天？", [11]),
    ("mixed zh/en", "Python 项目", [17]),
    ("mixed zh/en", "iPhone 充电器", [18]),
    ("mixed zh/en", "Docker 部署", [36]),
    ("mixed zh/en", "特斯拉 Model 3", [23]),
    ("mixed zh/en", "Wi-Fi 密码", [22]),
    ("mixed zh/en", "MacBook 笔记本", [53]),
]

# Chinese function and question words: what a user's question adds around the keywords.
ZH_STOPWORDS = frozenset(
    "的 了 是 在 我 你 他 她 它 们 我们 用户 什么 哪里 哪儿 哪天 哪个 哪些 谁 吗 呢 吧 啊 和 与 "
    "也 都 就 还 要 会 去 有 没有 不 这 那 一个 怎么 为什么 什么时候 时候 多少 几 叫 从 对 给 把 被".split()
)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")
_LATIN = re.compile(r"[^\W_]+", re.UNICODE)


def _quote(terms: list[str]) -> str | None:
    terms = list(dict.fromkeys(t for t in terms if t))
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms) if terms else None


# -- the systems: (tokenizer clause, text -> indexed column, query -> MATCH string or None) -----
def _bigram_doc(text: str) -> str:
    return " ".join(keyword_tokens(text))


def _bigram_unigram_doc(text: str) -> str:
    tokens = keyword_tokens(text)
    tokens.extend(c for run in _CJK.findall(text) if len(run) > 1 for c in run)
    return " ".join(tokens)


def _bigram_query(text: str) -> str | None:
    return _quote(keyword_tokens(text, drop_stopwords=True))


def _bigram_stop_query(text: str) -> str | None:
    return _quote([t for t in keyword_tokens(text, drop_stopwords=True) if t not in ZH_STOPWORDS])


def _trigram_query(text: str) -> str | None:
    terms: list[str] = []
    for piece in _LATIN.findall(text):
        if len(piece) < 3:
            continue  # the trigram tokenizer cannot match 1-2 character terms
        if _CJK.search(piece):  # a Chinese run: any of its 3-character substrings
            terms.extend(piece[i : i + 3] for i in range(len(piece) - 2))
        else:  # a word: the whole word as a substring
            terms.append(piece)
    return _quote(terms)


def _jieba_tokens(text: str) -> list[str]:
    import jieba

    return [t for t in (w.strip().lower() for w in jieba.lcut_for_search(text)) if _LATIN.fullmatch(t)]


def _jieba_doc(text: str) -> str:
    return " ".join(_jieba_tokens(text))


def _jieba_query(text: str) -> str | None:
    return _quote([t for t in _jieba_tokens(text) if t not in ZH_STOPWORDS])


SYSTEMS: dict[str, tuple[str, Callable[[str], str], Callable[[str], str | None]]] = {
    "bigram (current)": ("porter unicode61 remove_diacritics 2", _bigram_doc, _bigram_query),
    "bigram + zh stopwords": ("porter unicode61 remove_diacritics 2", _bigram_doc, _bigram_stop_query),
    "bigram + unigrams": ("porter unicode61 remove_diacritics 2", _bigram_unigram_doc, _bigram_query),
    "trigram": ("trigram", lambda text: text, _trigram_query),
    "jieba": ("porter unicode61 remove_diacritics 2", _jieba_doc, _jieba_query),
}


class FtsIndex:
    """One FTS5 table in its own SQLite file."""

    def __init__(self, path: str, system: str) -> None:
        self.tokenizer, self.doc, self.query_of = SYSTEMS[system]
        self.path = path
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute(f"CREATE VIRTUAL TABLE fts USING fts5(body, tokenize = '{self.tokenizer}')")

    def add(self, texts: list[str]) -> None:
        self.conn.execute("BEGIN")
        self.conn.executemany(
            "INSERT INTO fts(rowid, body) VALUES (?, ?)", [(i, self.doc(t)) for i, t in enumerate(texts)]
        )
        self.conn.execute("COMMIT")

    def search(self, text: str, k: int) -> list[int]:
        match = self.query_of(text)
        if match is None:
            return []
        rows = self.conn.execute(
            "SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT ?", (match, k)
        ).fetchall()
        return [r[0] for r in rows]

    def size(self) -> int:
        self.conn.execute("VACUUM")
        return os.path.getsize(self.path)

    def close(self) -> None:
        self.conn.close()


# -- generated Chinese memories for speed and size ---------------------------------------------
_NAMES = [
    "张伟",
    "王芳",
    "李娜",
    "刘洋",
    "陈静",
    "杨磊",
    "赵敏",
    "黄勇",
    "周杰",
    "吴霞",
    "徐明",
    "孙丽",
    "马超",
    "朱婷",
    "胡军",
    "郭涛",
    "何雪",
    "林峰",
    "高翔",
    "罗琳",
    "我妈妈",
    "我老板",
    "邻居",
    "房东",
]
_THINGS = [
    "绿茶",
    "一辆自行车",
    "季度报告",
    "生日蛋糕",
    "跑步鞋",
    "去柏林的机票",
    "钢琴课",
    "新电脑",
    "全麦面包",
    "花园小屋",
    "音乐会门票",
    "牙医预约",
    "素食千层面",
    "车险",
    "登山地图",
    "婚纱照",
    "一只叫米索的猫",
    "报税材料",
    "瑜伽垫",
    "读书会的小说",
    "咖啡豆",
    "山里的小木屋",
    "学校春游",
    "机械键盘",
    "团队团建",
    "晚餐预订",
    "冬季轮胎",
    "租房合同",
    "西班牙语课",
    "马拉松训练计划",
]
_PLACES = [
    "在北京",
    "在公司",
    "在湖边",
    "在家里",
    "在老城区",
    "在健身房",
    "在上海",
    "在菜市场",
    "在地铁上",
    "在外婆家",
    "在公园",
    "在机场",
    "在市中心",
    "在图书馆",
    "在杭州",
    "在诊所",
    "在河边",
    "在咖啡馆",
    "在山上",
    "在学校",
]
_TIMES = ["昨天", "上周末", "今天早上", "周二", "两周前", "三月份", "每周五", "昨晚", "假期里", "下班后"]
_TEMPLATES = [
    "{name}说{time}{place}买了{thing}。",
    "{time}我和{name}{place}聊了{thing}的事。",
    "记住{name}更喜欢{thing}，平时常{place}。",
    "{time}{name}{place}忘了带{thing}，很烦。",
    "用户提到{name}打算{place}买{thing}。",
    "{name}推荐了{thing}，我应该{place}看看。",
    "我答应{name}{time}{place}带上{thing}。",
    "{name}{time}{place}把{thing}弄丢了，还在难过。",
]


def generated(n: int, seed: int = 7) -> list[str]:
    """n short Chinese memories from templates, seeded."""
    rng = random.Random(seed)
    return [
        rng.choice(_TEMPLATES).format(
            name=rng.choice(_NAMES),
            thing=rng.choice(_THINGS),
            place=rng.choice(_PLACES),
            time=rng.choice(_TIMES),
        )
        for _ in range(n)
    ]


def quality(system: str, tmp: str) -> dict[str, dict[str, float]]:
    index = FtsIndex(os.path.join(tmp, f"q-{abs(hash(system))}.db"), system)
    index.add(MEMORIES)
    groups: dict[str, list[tuple[float, float]]] = {}
    for group, query, relevant in QUERIES:
        top = index.search(query, 5)
        r1 = 1.0 if top[:1] and top[0] in relevant else 0.0
        r5 = len(set(top) & set(relevant)) / len(relevant)
        groups.setdefault(group, []).append((r1, r5))
        groups.setdefault("all", []).append((r1, r5))
    index.close()
    return {
        g: {"r1": statistics.mean(a for a, _ in v), "r5": statistics.mean(b for _, b in v)}
        for g, v in groups.items()
    }


def speed(system: str, texts: list[str], tmp: str, repeat: int) -> dict[str, float]:
    index_times, sizes, latencies = [], [], []
    queries = [q for _, q, _ in QUERIES] + [t[:6] for t in texts[:66]]
    for run in range(repeat):
        path = os.path.join(tmp, f"s-{abs(hash(system))}-{run}.db")
        index = FtsIndex(path, system)
        start = time.perf_counter()
        index.add(texts)
        index_times.append(time.perf_counter() - start)
        per_query = []
        for query in queries:
            t0 = time.perf_counter()
            index.search(query, 10)
            per_query.append(time.perf_counter() - t0)
        latencies.append(statistics.median(per_query))
        sizes.append(index.size())
        index.close()
        os.remove(path)
    return {
        "index_s": statistics.median(index_times),
        "size_mb": statistics.median(sizes) / 2**20,
        "query_ms": 1000 * statistics.median(latencies),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=10_000, help="generated memories for speed/size")
    parser.add_argument("--repeat", type=int, default=5, help="speed runs per system (median)")
    args = parser.parse_args()

    import jieba

    jieba.setLogLevel(60)
    t0 = time.perf_counter()
    jieba.initialize()
    jieba_init = time.perf_counter() - t0
    texts = generated(args.n)
    with tempfile.TemporaryDirectory(prefix="rm-zh-") as tmp:
        results = {s: (quality(s, tmp), speed(s, texts, tmp, args.repeat)) for s in SYSTEMS}

    groups = ["all"] + list(dict.fromkeys(g for g, _, _ in QUERIES))
    counts = {g: sum(1 for q in QUERIES if q[0] == g) for g in groups[1:]}
    counts["all"] = len(QUERIES)
    print(f"Quality: {len(MEMORIES)} memories, {len(QUERIES)} queries; R@1 / R@5 per query group\n")
    print("| system | " + " | ".join(f"{g} ({counts[g]})" for g in groups) + " |")
    print("|---|" + "---:|" * len(groups))
    for system, (q, _) in results.items():
        print(f"| {system} | " + " | ".join(f"{q[g]['r1']:.2f} / {q[g]['r5']:.2f}" for g in groups) + " |")
    print(
        f"\nSpeed and size: {args.n:,} generated Chinese memories, median of {args.repeat} runs "
        f"(jieba.initialize() once: {jieba_init:.2f} s, not included)\n"
    )
    print("| system | index time (s) | index mem/s | FTS file size (MB) | query p50 (ms) |")
    print("|---|---:|---:|---:|---:|")
    for system, (_, s) in results.items():
        print(
            f"| {system} | {s['index_s']:.2f} | {args.n / s['index_s']:,.0f} | {s['size_mb']:.2f} "
            f"| {s['query_ms']:.3f} |"
        )


if __name__ == "__main__":
    main()
