"""The `ripplemem` command: add, recall, list and inspect memories of a store from the shell."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from ripplemem.core.types import MEMORY_TYPES
from ripplemem.core.validation import MAX_METADATA_DEPTH
from ripplemem.core.version import __version__
from ripplemem.errors import InvalidInputError, RippleMemError
from ripplemem.interfaces.cli import formatting as fmt
from ripplemem.interfaces.cli.chroma import chroma_option, chroma_server
from ripplemem.interfaces.cli.env import quiet_third_party
from ripplemem.interfaces.cli.erase import add_erase_command
from ripplemem.interfaces.cli.importing import add_import_command
from ripplemem.interfaces.cli.ingest import add_document_commands
from ripplemem.interfaces.cli.location import (
    location,
    location_options,
    maintained_store,
    open_store,
    require_store,
    resolve_location,
    store_options,
)
from ripplemem.interfaces.cli.migrating import add_migrate_command
from ripplemem.store.info import recorded_embedder, store_users

if TYPE_CHECKING:
    pass

EMBEDDER_HELP = (
    "auto (MiniLM, or multilingual-e5 for a store written in Chinese), minilm, multilingual, "
    "hashing (no model) or openai:MODEL"
)


class UsageError(Exception):
    """The command line itself is wrong (unknown option, missing argument); main() reports it."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are raised, so main() reports them like any error."""

    def error(self, message: str) -> NoReturn:
        """Raise the usage error with a pointer to the command's help."""
        raise UsageError(f"{message} (see: {self.prog} --help)")


def _json_object(field: str, text: str | None) -> Any:
    """Parse a JSON command-line value, naming the option when it is not valid JSON."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            f'{field} is not valid JSON ({exc.msg}); pass an object such as \'{{"source": "chat"}}\''
        ) from exc
    except RecursionError:
        raise InvalidInputError(
            f"{field} is nested too deeply to read (at most {MAX_METADATA_DEPTH} levels)"
        ) from None


def cmd_add(args: argparse.Namespace) -> None:
    """Store one memory and print its id."""
    metadata = _json_object("metadata", args.metadata)
    with open_store(args, must_exist=False) as mem:
        memory = mem.add(
            args.text,
            args.type,
            session_id=args.session,
            importance=args.importance,
            event_time=args.event_time,
            metadata=metadata,
        )
    print(fmt.to_json(memory) if args.json else fmt.added_line(memory))


def cmd_recall(args: argparse.Namespace) -> None:
    """Print the memories that best answer a query, or a prompt-ready context."""
    if args.context is not None and args.context <= 0:
        raise InvalidInputError(f"context must be a positive number of tokens, got {args.context}")
    with open_store(args, must_exist=True) as mem:
        result = mem.recall(
            args.query, args.k, mode=args.mode, types=args.type, since=args.since, until=args.until
        )
    context = None if args.context is None else result.context(args.context)
    if args.json:
        print(fmt.recall_json(result, context))
    elif context is not None:
        print(context or "(no memory fits the token budget)")
    else:
        print("\n".join(fmt.hit_lines(result.hits)) or "no memories match")


def cmd_list(args: argparse.Namespace) -> None:
    """Print the user's memories, newest first."""
    if args.limit <= 0:
        raise InvalidInputError(f"limit must be a positive integer, got {args.limit}")
    with open_store(args, must_exist=True) as mem:
        memories = mem.list(args.type, since=args.since, until=args.until, limit=args.limit)
    if args.json:
        print(fmt.to_json(memories))
    else:
        print("\n".join(fmt.memory_lines(memories)) or "no memories")


def cmd_stats(args: argparse.Namespace) -> None:
    """Print counts, time span and what the store is built with."""
    with open_store(args, must_exist=True) as mem:
        stats = mem.stats()
    print(fmt.to_json(stats) if args.json else "\n".join(fmt.stats_lines(stats)))


def cmd_demo(args: argparse.Namespace) -> None:
    """Run the bilingual sample conversation through a store (with --json: the story on stderr,
    the results as JSON on stdout)."""
    from ripplemem.interfaces.cli.demo import run_demo

    summary = run_demo(
        args.path, keep=args.keep, embedder=args.embedder or "minilm", out=sys.stderr if args.json else None
    )
    if args.json:
        print(fmt.to_json(summary))


def cmd_reembed(args: argparse.Namespace) -> None:
    """Re-embed a whole store with another model."""
    require_store(args, " to re-embed")
    from ripplemem.memory import RippleMem

    start = time.perf_counter()
    count = RippleMem.reembed(
        args.path,
        args.embedder,
        progress=sys.stderr.isatty() and not args.json,
        store=maintained_store(args),
    )
    seconds = time.perf_counter() - start
    if args.json:
        print(
            fmt.to_json(
                {
                    "path": args.path,
                    "embedder": args.embedder,
                    "reembedded": count,
                    "seconds": round(seconds, 3),
                }
            )
        )
    else:
        print(f"re-embedded {count} memories with {args.embedder} in {seconds:.1f} s")


def cmd_check(args: argparse.Namespace) -> None:
    """Check that SQLite, the keyword index, the graph and the vector index agree; repair by default."""
    from ripplemem.memory import RippleMem

    report = RippleMem.check(
        args.path, repair=not args.no_repair, store=maintained_store(args), **chroma_server(args)
    )
    print(fmt.to_json(report.as_dict()) if args.json else "\n".join(report.lines()))
    if not report.consistent and not report.repaired:
        raise SystemExit(1)


def cmd_maintain(args: argparse.Namespace) -> None:
    """Consolidate, forget and archive the memories of one user (or of every user of the store)."""
    require_store(args, " to maintain")
    from ripplemem.lifecycle.reembed import progress_reporter
    from ripplemem.memory import RippleMem

    users = [args.user] if args.user else store_users(location(args))
    embedder = args.embedder or recorded_embedder(location(args)) or "auto"
    # A bar when a person watches several users' maintenance (stderr, so --json output stays clean).
    report_done = progress_reporter(
        len(users) > 1 and not args.json and sys.stderr.isatty(), len(users), unit="user"
    )
    reports = []
    with RippleMem(
        args.path, user_id=users[0] if users else "default", embedder=embedder, store=store_options(args)
    ) as mem:
        for user in users:
            reports.append(mem.scope(user).maintain(dry_run=args.dry_run, strategy=args.strategy))
            report_done(len(reports))
    if args.json:
        print(fmt.to_json([report.as_dict() for report in reports]))
    else:
        print("\n\n".join(report.summary() for report in reports) or "the store holds no memories")


def cmd_viz(args: argparse.Namespace) -> None:
    """Write the user's memory graph (or one recall's subgraph) as a self-contained HTML page."""
    from ripplemem.interfaces.viz.page import write_graph_html

    if args.max_nodes <= 0:
        raise InvalidInputError(f"max-nodes must be a positive integer, got {args.max_nodes}")
    with open_store(args, must_exist=True) as mem:
        view = write_graph_html(mem, args.out, args.query, k=args.k, max_nodes=args.max_nodes)
    if args.json:
        print(fmt.to_json({"out": os.path.abspath(args.out), **view.as_dict()}))
        return
    shown = f"{len(view.nodes)} nodes and {len(view.edges)} edges"
    if view.capped:
        shown += f" (the best-connected of {view.total_nodes} nodes; raise --max-nodes to see more)"
    print(f"wrote {args.out}: {shown}; open it in a browser")


def cmd_mcp(args: argparse.Namespace) -> None:
    """Serve one user's memories to an MCP client over stdin/stdout (the store is created if new)."""
    from ripplemem.interfaces.mcp_server import serve_stdio

    with open_store(args, must_exist=False) as mem:
        serve_stdio(mem, allow_erase=args.allow_erase, allow_erase_everything=args.allow_erase_everything)


def _store_options(embedder_required: bool = False) -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False, parents=[location_options()])
    common.add_argument(
        "--embedder",
        required=embedder_required,
        help=f"{EMBEDDER_HELP} (default: the store's model; auto for a new store)",
    )
    return common


def _user_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False, parents=[_store_options(), chroma_option()])
    common.add_argument(
        "--user",
        default=os.environ.get("RIPPLEMEM_USER", "default"),
        help="whose memories (default: $RIPPLEMEM_USER or 'default')",
    )
    return common


def _filters(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--type",
        action="append",
        metavar="TYPE",
        help=f"only this type, repeatable: {', '.join(MEMORY_TYPES)}",
    )
    parser.add_argument("--since", metavar="ISO", help="only memories from this time on")
    parser.add_argument("--until", metavar="ISO", help="only memories before this time")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def _add_json_flags(parser: argparse.ArgumentParser) -> None:
    """Give every command that lacks one a --json flag (its output and its errors as JSON)."""
    commands = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    if not commands:
        if "--json" not in parser._option_string_actions:
            parser.add_argument(
                "--json", action="store_true", help="print machine-readable JSON (errors too)"
            )
        return
    for command in commands:
        for child in dict.fromkeys(command.choices.values()):
            _add_json_flags(child)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = _Parser(prog="ripplemem", description="Long-term memory for LLM agents, from the shell.")
    parser.add_argument("--version", action="version", version=f"ripplemem {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    user = _user_options()
    commands: dict[str, tuple[Callable[[argparse.Namespace], None], str, list[Any]]] = {
        "add": (cmd_add, "store one memory", [user]),
        "recall": (cmd_recall, "recall the memories that answer a query", [user]),
        "list": (cmd_list, "list memories, newest first", [user]),
        "stats": (cmd_stats, "counts, time span and store details", [user]),
        "demo": (cmd_demo, "load a sample bilingual conversation and recall from it", []),
        "reembed": (cmd_reembed, "re-embed a store with another model", [_store_options(True)]),
        "check": (
            cmd_check,
            "check a store's consistency and repair it",
            [location_options(), chroma_option()],
        ),
        "maintain": (
            cmd_maintain,
            "consolidate, forget and archive (a scheduled job)",
            [_store_options(), chroma_option()],
        ),
        "mcp": (cmd_mcp, "serve one user's memory tools to an MCP client over stdio", [user]),
        "viz": (cmd_viz, "draw the memory graph (or one recall's subgraph) as an HTML page", [user]),
    }
    parsers = {}
    for name, (handler, summary, parents) in commands.items():
        parsers[name] = sub.add_parser(name, parents=parents, help=summary, description=summary)
        parsers[name].set_defaults(handler=handler)
    add_document_commands(sub, user)
    add_erase_command(sub, user)
    add_import_command(sub, user)
    add_migrate_command(sub)
    _core_arguments(parsers)
    _add_json_flags(parser)
    return parser


def _core_arguments(parsers: Mapping[str, argparse.ArgumentParser]) -> None:
    """The arguments of the commands defined in this module."""
    add = parsers["add"]
    add.add_argument("text", help="what to remember")
    add.add_argument("--type", default="episodic", help=f"one of {', '.join(MEMORY_TYPES)}")
    add.add_argument("--session", help="session id")
    add.add_argument("--importance", type=float, help="0..1 (default 0.5)")
    add.add_argument("--event-time", metavar="ISO", help="when it happened (default: now)")
    add.add_argument("--metadata", metavar="JSON", help="a JSON object stored with the memory")
    add.add_argument("--json", action="store_true", help="print the stored memory as JSON")

    recall = parsers["recall"]
    recall.add_argument("query", help="what to recall")
    recall.add_argument("-k", type=int, default=5, help="how many memories (default 5)")
    recall.add_argument(
        "--mode", default="ripple", help="ripple (default, as in Python and MCP), hybrid, dense or keyword"
    )
    recall.add_argument(
        "--context", type=int, metavar="TOKENS", help="print a prompt-ready context within this token budget"
    )
    _filters(recall)

    listing = parsers["list"]
    listing.add_argument("--limit", type=int, default=20, help="at most this many (default 20)")
    _filters(listing)

    parsers["stats"].add_argument("--json", action="store_true", help="print machine-readable JSON")

    mcp = parsers["mcp"]
    mcp.add_argument(
        "--allow-erase",
        action="store_true",
        help="add the erase_memory tool (verified erase by id or text, previewed first)",
    )
    mcp.add_argument(
        "--allow-erase-everything",
        action="store_true",
        help="add erase_memory and let it erase all of the user's memories (everything=true)",
    )

    check = parsers["check"]
    check.add_argument(
        "--no-repair", action="store_true", help="only report, change nothing (exit 1 if damaged)"
    )
    check.add_argument("--json", action="store_true", help="print machine-readable JSON")

    maintain = parsers["maintain"]
    maintain.add_argument("--user", help="whose memories (default: every user of the store)")
    maintain.add_argument(
        "--strategy",
        default="score",
        help="forgetting strategy: score (default), importance, time or capacity",
    )
    maintain.add_argument("--dry-run", action="store_true", help="report what would change, change nothing")
    maintain.add_argument("--json", action="store_true", help="print machine-readable JSON")

    viz = parsers["viz"]
    viz.add_argument("--out", required=True, metavar="FILE", help="the HTML file to write")
    viz.add_argument("--query", help="draw only what a recall of this text activates")
    viz.add_argument(
        "-k", type=int, default=10, help="with --query: how many memories to recall (default 10)"
    )
    viz.add_argument(
        "--max-nodes",
        type=int,
        default=400,
        help="draw at most this many nodes, the best-connected (default 400)",
    )
    viz.add_argument("--json", action="store_true", help="print what was drawn as JSON")

    demo = parsers["demo"]
    demo.add_argument("--path", help="store directory (default: a temporary one)")
    demo.add_argument("--keep", action="store_true", help="keep the store afterwards")
    demo.add_argument("--embedder", help="minilm (default), multilingual, hashing (no model) or openai:MODEL")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns 0 on success and 2 on bad input or an unusable store.

    With --json, what a command prints is JSON, and so is an error: ``{"error": {"type": ...,
    "message": ...}}`` on stdout (the exit status still says it failed)."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in arguments
    try:
        args = build_parser().parse_args(arguments)
    except UsageError as exc:
        fmt.print_error("UsageError", str(exc), as_json=as_json)
        return 2
    quiet_third_party()
    try:
        if hasattr(args, "store"):
            resolve_location(args)
        args.handler(args)
    except (RippleMemError, ValueError, TypeError) as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        fmt.print_error(type(exc).__name__, message, as_json=as_json)
        return 2
    except KeyboardInterrupt:
        fmt.print_error("Interrupted", "interrupted", as_json=as_json)
        return 130
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away; stop quietly, as other shell tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0
