"""Posts: create, list, read and edit. Each post is also indexed for full-text search."""

import sqlite3
from typing import Annotated

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, Field

from blog.db import Db, fetch_all, fetch_one

Text = Annotated[str, Field(min_length=1)]

#: The posts columns the API shows, in its order.
POST_COLUMNS = "posts.id, posts.title, posts.body, posts.author"


class NewPost(BaseModel):
    """The body of POST /posts."""

    title: Text
    body: Text
    author: Text


class PostEdit(BaseModel):
    """The body of PATCH /posts/{id}: the fields to change."""

    title: Text | None = None
    body: Text | None = None


def fetch_post(conn: sqlite3.Connection, post_id: int) -> dict:
    """The post as the API shows it; 404 if there is none."""
    row = fetch_one(conn, f"SELECT {POST_COLUMNS} FROM posts WHERE id = ?", (post_id,))
    if row is None:
        raise HTTPException(status_code=404, detail="post not found")
    return row


def _index(conn: sqlite3.Connection, post_id: int, title: str, body: str) -> None:
    conn.execute("DELETE FROM posts_fts WHERE rowid = ?", (post_id,))
    conn.execute("INSERT INTO posts_fts (rowid, title, body) VALUES (?, ?, ?)", (post_id, title, body))


def list_posts(conn: Db) -> list[dict]:
    """GET /posts: every post, oldest first."""
    return fetch_all(conn, f"SELECT {POST_COLUMNS} FROM posts ORDER BY id")


def create_post(post: NewPost, conn: Db) -> dict:
    """POST /posts."""
    cursor = conn.execute(
        "INSERT INTO posts (title, body, author) VALUES (?, ?, ?)",
        (post.title, post.body, post.author),
    )
    _index(conn, cursor.lastrowid, post.title, post.body)
    return fetch_post(conn, cursor.lastrowid)


def get_post(post_id: int, conn: Db) -> dict:
    """GET /posts/{id}."""
    return fetch_post(conn, post_id)


def edit_post(post_id: int, edit: PostEdit, conn: Db) -> dict:
    """PATCH /posts/{id}: change the title, the body or both."""
    post = fetch_post(conn, post_id)
    title = post["title"] if edit.title is None else edit.title
    body = post["body"] if edit.body is None else edit.body
    conn.execute("UPDATE posts SET title = ?, body = ? WHERE id = ?", (title, body, post_id))
    _index(conn, post_id, title, body)
    return fetch_post(conn, post_id)


router = APIRouter()
router.add_api_route("/posts", list_posts, methods=["GET"])
router.add_api_route("/posts", create_post, methods=["POST"], status_code=201)
router.add_api_route("/posts/{post_id}", get_post, methods=["GET"])
router.add_api_route("/posts/{post_id}", edit_post, methods=["PATCH"])
