"""Tasks: what a valid task looks like, and where tasks are kept (with a version per task)."""

import sqlite3
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, StrictBool, StrictInt, StrictStr

import db

SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    done INTEGER NOT NULL DEFAULT 0,
    created_by TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 1
)
"""

Task = dict[str, Any]


class TaskNotFound(LookupError):
    """No task has the requested id."""

    def __init__(self, task_id: int) -> None:
        super().__init__(f"task {task_id} not found")


class VersionConflict(Exception):
    """An update was based on a version of the task that is no longer current."""

    def __init__(self, current: "Task") -> None:
        super().__init__(f"task {current['id']} is at version {current['version']}")
        self.current = current


def _not_blank(title: str) -> str:
    if not title.strip():
        raise ValueError("title must not be blank")
    return title


Title = Annotated[StrictStr, AfterValidator(_not_blank)]


class TaskCreate(BaseModel):
    """A new task. Unknown fields are ignored."""

    title: Title
    description: StrictStr = ""
    done: StrictBool = False


class TaskUpdate(BaseModel):
    """Changes to a task: fields left out keep their value.

    With ``version``, the changes apply only to that version of the task.
    """

    title: Title | None = None
    description: StrictStr | None = None
    done: StrictBool | None = None
    version: StrictInt | None = None

    def changes(self) -> dict[str, Any]:
        """The fields to change, by column."""
        return self.model_dump(exclude={"version"}, exclude_none=True)


def _task(row: sqlite3.Row) -> Task:
    task = dict(row)
    task["done"] = bool(task["done"])
    return task


class TaskStore:
    """The tasks table. Every call is one transaction."""

    def __init__(self, path: str) -> None:
        self.path = path
        with db.connect(path) as connection:
            connection.execute(SCHEMA)
            columns = {row["name"] for row in connection.execute("PRAGMA table_info(tasks)")}
            if "version" not in columns:  # a database from before versions
                connection.execute(
                    "ALTER TABLE tasks ADD COLUMN version INTEGER NOT NULL DEFAULT 1"
                )

    def list(self) -> list[Task]:
        """Every task, in id order."""
        with db.connect(self.path) as connection:
            return [_task(row) for row in connection.execute("SELECT * FROM tasks ORDER BY id")]

    def get(self, task_id: int) -> Task:
        """The task ``task_id``; TaskNotFound if there is none."""
        with db.connect(self.path) as connection:
            return self._get(connection, task_id)

    def create(self, new: TaskCreate, username: str) -> Task:
        """Add a task created by ``username``."""
        with db.connect(self.path) as connection:
            cursor = connection.execute(
                "INSERT INTO tasks (title, description, done, created_by) VALUES (?, ?, ?, ?)",
                (new.title, new.description, new.done, username),
            )
            return self._get(connection, cursor.lastrowid)

    def update(self, task_id: int, update: TaskUpdate) -> Task:
        """Apply ``update`` to the task ``task_id`` and bump its version.

        TaskNotFound if there is no such task; VersionConflict if ``update`` names a
        version the task is no longer at. The check and the write are one statement.
        """
        with db.connect(self.path) as connection:
            changes = update.changes()
            assignments = "".join(f"{column} = ?, " for column in changes)
            sql = f"UPDATE tasks SET {assignments}version = version + 1 WHERE id = ?"
            parameters = [*changes.values(), task_id]
            if update.version is not None:
                sql += " AND version = ?"
                parameters.append(update.version)
            if connection.execute(sql, parameters).rowcount == 0:
                # Nothing matched: either there is no such task (_get raises TaskNotFound)
                # or it is at another version.
                raise VersionConflict(self._get(connection, task_id))
            return self._get(connection, task_id)

    def delete(self, task_id: int) -> None:
        """Remove the task ``task_id``; TaskNotFound if there is none."""
        with db.connect(self.path) as connection:
            if connection.execute("DELETE FROM tasks WHERE id = ?", (task_id,)).rowcount == 0:
                raise TaskNotFound(task_id)

    @staticmethod
    def _get(connection: sqlite3.Connection, task_id: int) -> Task:
        row = connection.execute("SELECT * FROM tasks WHERE id = ?", (task_id,)).fetchone()
        if row is None:
            raise TaskNotFound(task_id)
        return _task(row)
