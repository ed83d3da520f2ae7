"""Comments on posts, threaded: a comment may reply to another comment on the same post."""

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel

from blog.db import Db, fetch_all, fetch_one
# from blog.notifications import notify_post_author
from blog.posts import Text, fetch_post

COMMENT_COLUMNS = "id, post_id, parent_id, author, body"


class NewComment(BaseModel):
    """The body of POST /posts/{id}/comments."""

    author: Text
    body: Text
    parent_id: int | None = None


def create_comment(post_id: int, comment: NewComment, conn: Db) -> dict:
    """POST /posts/{id}/comments: 404 for a missing post, 400 for a parent not on this post."""
    fetch_post(conn, post_id)
    if comment.parent_id is not None:
        parent = fetch_one(conn, "SELECT post_id FROM comments WHERE id = ?", (comment.parent_id,))
        if parent is None or parent["post_id"] != post_id:
            raise HTTPException(status_code=400, detail="parent_id is not a comment on this post")
    cursor = conn.execute(
        "INSERT INTO comments (post_id, parent_id, author, body) VALUES (?, ?, ?, ?)",
        (post_id, comment.parent_id, comment.author, comment.body),
    )
    # notify_post_author(conn, request.app.state.hub, post, cursor.lastrowid)
    return fetch_one(conn, f"SELECT {COMMENT_COLUMNS} FROM comments WHERE id = ?", (cursor.lastrowid,))


def list_comments(post_id: int, conn: Db) -> list[dict]:
    """GET /posts/{id}/comments: the top-level comments, each with its replies nested."""
    fetch_post(conn, post_id)
    rows = fetch_all(
        conn, f"SELECT {COMMENT_COLUMNS} FROM comments WHERE post_id = ? ORDER BY id", (post_id,)
    )
    nodes = {row["id"]: {**row, "replies": []} for row in rows}
    roots: list[dict] = []
    for node in nodes.values():
        parent_id = node["parent_id"]
        (roots if parent_id is None else nodes[parent_id]["replies"]).append(node)
    return roots


router = APIRouter()
router.add_api_route("/posts/{post_id}/comments", create_comment, methods=["POST"], status_code=201)
router.add_api_route("/posts/{post_id}/comments", list_comments, methods=["GET"])
