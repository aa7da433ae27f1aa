"""The labelling page's ASGI app (Starlette): the page, and the JSON API it talks to (docs/annotate.md).

Safety: every POST carries the page's CSRF token (``X-CSRF-Token``) and a JSON body of at most
``MAX_BODY_BYTES``; the Host header must name the address served (no DNS rebinding); served on another
interface than 127.0.0.1, every request carries the access token printed at start (``?token=`` once, then a
cookie). Item text reaches the page as JSON and is set as text, never as HTML; the page's policy runs only its
own script (``/disagreements``: none at all, ``ultra_kit.labels.page``). No request names a file: the store and
SOURCE are fixed when the server starts.
"""

from __future__ import annotations

import hmac
import json
import secrets
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from ultra_base.errors import InputError
from ultra_client.annotate import MAX_BODY_BYTES, MAX_COMMENT_CHARS, SHOWN
from ultra_client.annotate.source import Item
from ultra_client.annotate.store import LabelStore
from ultra_kit.labels.agreement import disagreement_report
from ultra_kit.labels.page import POLICY
from ultra_kit.labels.page import page as page_of
from ultra_kit.limits.json_files import loads_limited

TOKEN_COOKIE = "ultra_annotate_token"


def disagreements_page(store: str | Path, items: dict[str, Item], *, top: int) -> str:
    """The disagreements page of ``store``, with the question and answer of each item from SOURCE."""
    texts = {key: (item.question, item.answer) for key, item in items.items()}
    return page_of(disagreement_report(store), texts, top=top, title="What people and the judge disagree on")


@dataclass
class Served:
    """What one server labels, for whom, and its secrets."""

    store: LabelStore
    items: dict[str, Item]
    annotator: str
    hosts: set[str]
    access_token: str | None = None  # set when serving beyond 127.0.0.1
    csrf_token: str = ""
    shown: int = SHOWN  # the largest disagreements /disagreements lists

    def __post_init__(self) -> None:
        self.csrf_token = self.csrf_token or secrets.token_urlsafe(32)


class Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _safe_json(data: Any) -> str:
    """JSON that cannot end a <script> element nor open a comment in it."""
    return json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def build_app(served: Served) -> Starlette:
    """The app serving ``served``: the page at /, the API under /api/."""

    def check(request: Request, *, post: bool = False) -> None:
        host = request.headers.get("host", "")
        if host not in served.hosts:
            raise Refused(421, f"unexpected Host {host!r}")
        if served.access_token:
            given = request.headers.get("x-access-token") or request.cookies.get(TOKEN_COOKIE) or \
                request.query_params.get("token") or ""  # fmt: skip
            if not hmac.compare_digest(given, served.access_token):
                raise Refused(401, "this server needs the access token it printed at start")
        if post and not hmac.compare_digest(request.headers.get("x-csrf-token", ""), served.csrf_token):
            raise Refused(403, "missing or wrong X-CSRF-Token (read it from <meta name='csrf-token'>)")

    async def body(request: Request) -> dict[str, Any]:
        check(request, post=True)
        if not request.headers.get("content-type", "").startswith("application/json"):
            raise Refused(415, "send JSON (Content-Type: application/json)")
        raw = await request.body()
        if len(raw) > MAX_BODY_BYTES:
            raise Refused(413, f"the body is over {MAX_BODY_BYTES} bytes")
        try:
            data = loads_limited(raw.decode("utf-8") or "{}", path="the request body")
        except (InputError, UnicodeDecodeError) as exc:  # not JSON, or nested too deeply
            raise Refused(400, f"the body is not JSON within the limits ({exc})") from None
        if not isinstance(data, dict):
            raise Refused(400, "the body must be a JSON object")
        return data

    def item_view(key: str | None, judge: bool) -> dict[str, Any] | None:
        if key is None:
            return None
        view = served.items[key].shown(judge)
        view["mine"] = served.store.mine(served.annotator, key)
        return view

    def own_item(data: dict[str, Any]) -> str:
        key = data.get("item_id")
        if not isinstance(key, str) or key not in served.items:
            raise Refused(404, "no such item_id")
        if served.store.claimed(served.annotator) != key and served.store.mine(served.annotator, key) is None:
            raise Refused(409, "this item is not yours: take items from GET /api/next")
        return key

    def comment_of(data: dict[str, Any]) -> str | None:
        comment = data.get("comment")
        if comment is not None and (not isinstance(comment, str) or len(comment) > MAX_COMMENT_CHARS):
            raise Refused(400, f"comment must be text of at most {MAX_COMMENT_CHARS} characters")
        return comment

    def wants_judge(request: Request) -> bool:
        return request.query_params.get("judge") == "1"

    async def page(request: Request) -> Response:
        check(request)
        nonce = secrets.token_urlsafe(16)
        config = {"annotator": served.annotator, "scale": served.store.scale.as_dict()}
        html = files("ultra_client.annotate").joinpath("page.html").read_text(encoding="utf-8")
        html = html.replace("{{nonce}}", nonce).replace("{{csrf}}", served.csrf_token)
        html = html.replace("{{config}}", _safe_json(config))
        policy = (
            f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; connect-src 'self'; "
            "img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        )
        headers = {"Content-Security-Policy": policy, "X-Content-Type-Options": "nosniff",
                   "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}  # fmt: skip
        response = HTMLResponse(html, headers=headers)
        if served.access_token:
            response.set_cookie(TOKEN_COOKIE, served.access_token, httponly=True, samesite="strict")
        return response

    async def disagreements(request: Request) -> Response:
        check(request)
        html = disagreements_page(served.store.path, served.items, top=served.shown)
        headers = {"Content-Security-Policy": POLICY, "X-Content-Type-Options": "nosniff",
                   "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}  # fmt: skip
        return HTMLResponse(html, headers=headers)

    async def next_item(request: Request) -> Response:
        check(request)
        key = served.store.next_key(served.annotator)
        return JSONResponse({"item": item_view(key, wants_judge(request)),
                             "progress": served.store.progress(served.annotator)})  # fmt: skip

    async def one_item(request: Request) -> Response:
        check(request)
        key = own_item({"item_id": request.query_params.get("item_id")})
        return JSONResponse({"item": item_view(key, wants_judge(request))})

    async def history(request: Request) -> Response:
        check(request)
        rows = served.store.connection.execute(
            "SELECT key FROM labels WHERE annotator = ? AND undone = 0 GROUP BY key ORDER BY MIN(id)",
            (served.annotator,)).fetchall()  # fmt: skip
        return JSONResponse({"item_ids": [row[0] for row in rows]})

    async def label(request: Request) -> Response:
        data = await body(request)
        key = own_item(data)
        value = served.store.scale.value_of(data.get("value"))
        if value is None:
            raise Refused(400, f"value must be one of {[o.value for o in served.store.scale.options]}")
        row = served.store.record(served.annotator, key, "label", value, comment_of(data))
        return JSONResponse({"ok": True, "id": row, "progress": served.store.progress(served.annotator)})

    async def skip(request: Request) -> Response:
        data = await body(request)
        row = served.store.record(served.annotator, own_item(data), "skip", None, comment_of(data))
        return JSONResponse({"ok": True, "id": row, "progress": served.store.progress(served.annotator)})

    async def flag(request: Request) -> Response:
        data = await body(request)
        comment = comment_of(data)
        if not comment:
            raise Refused(400, "a flag needs a comment saying what is wrong with the item")
        row = served.store.record(served.annotator, own_item(data), "flag", None, comment)
        return JSONResponse({"ok": True, "id": row, "progress": served.store.progress(served.annotator)})

    async def undo(request: Request) -> Response:
        await body(request)
        key = served.store.undo(served.annotator)
        return JSONResponse({"item_id": key, "progress": served.store.progress(served.annotator)})

    async def progress(request: Request) -> Response:
        check(request)
        return JSONResponse(served.store.progress(served.annotator))

    async def refused(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, Refused)
        return JSONResponse({"error": str(exc)}, status_code=exc.status)

    routes = [
        Route("/", page), Route("/disagreements", disagreements), Route("/api/next", next_item),
        Route("/api/item", one_item),
        Route("/api/history", history), Route("/api/progress", progress),
        Route("/api/label", label, methods=["POST"]), Route("/api/skip", skip, methods=["POST"]),
        Route("/api/flag", flag, methods=["POST"]), Route("/api/undo", undo, methods=["POST"]),
    ]  # fmt: skip
    return Starlette(routes=routes, exception_handlers={Refused: refused})
