"""Full-text search across posts' titles and bodies (SQLite FTS5)."""

import re

from fastapi import APIRouter

from blog.db import Db, fetch_all
from blog.posts import POST_COLUMNS


def match_expression(text: str) -> str:
    """An FTS5 query requiring every word of ``text``; quoting keeps punctuation from being syntax."""
    return " ".join(f'"{word}"' for word in re.findall(r"\w+", text))


def search_posts(q: str, conn: Db) -> list[dict]:
    """GET /search?q=: the posts containing every word of q, best match first."""
    expression = match_expression(q)
    if not expression:
        return []
    return fetch_all(
        conn,
        f"SELECT {POST_COLUMNS} FROM posts_fts JOIN posts ON posts.id = posts_fts.rowid "
        "WHERE posts_fts MATCH ? ORDER BY posts_fts.rank, posts.id",
        (expression,),
    )


router = APIRouter()
router.add_api_route("/search", search_posts, methods=["GET"])
