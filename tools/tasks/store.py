"""The todo task store: the only code that reads or writes tasks.

Every method takes the acting ``user_id`` and touches only that user's rows: another user's task
answers exactly like a missing one. Bad arguments raise ``TaskError`` with a code and a message
meant to be shown to the user as it is. The agent never calls this directly; the tools do.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from keel.checkpoints.list_fields import BOTTOM, TODO_LIST, list_name
from keel.checkpoints.task_fields import COLUMNS
from keel.checkpoints.times import FieldError, next_time
from keel.tools.tasks.base import StoreBase
from keel.tools.tasks.queries import Filter, placed, standing
from keel.tools.tasks.rows import (
    ATTRIBUTE_NAME,
    CREATE,
    CREATE_NUMBERED,
    FIND_BATCH,
    IN_LIST,
    KEPT_COLUMNS,
    MAX_TASK_ID,
    NEXT_NUMBER,
    RETURNING,
    TaskError,
    Tasks,
    check_id,
    check_page,
    clean_title,
    due_moment,
)

REMIND = ", remind_at = :remind_at, remind_in = COALESCE(:remind_in, remind_in)"
"""A new time's reminder, in the conversation that set it (else the one that set the last)."""


class TaskStore(StoreBase):
    """CRUD on ``keel_tasks``, scoped to one user per call."""

    async def create(self, user_id: str, title: str, **fields: Any) -> dict[str, Any]:
        """Create a task (numbered after the user's last one) and return it.

        ``fields`` are the task's fields beyond its title in words (``due="friday"``), read
        in the store's time zone. On PostgreSQL the number is taken and the task written in one
        statement.
        """
        title = clean_title(title)
        params = {
            "user": user_id,
            "title": title,
            "false": False,
            "now": self._now(),
            **await self._fields(fields, every=True),
        }
        async with self._tx() as tx:
            await self.within(tx)._room_to_remind(user_id, params)
            params["list_of"] = params["list_name"]  # its own name: PostgreSQL types each once
            if params["position"] not in (None, BOTTOM):  # the top, the n-th: room made first
                place = params["position"]
                params["position"] = await placed(tx, user_id, params["list_name"], place)
            else:
                params["position"] = None
            if self.db.dialect == "postgresql":
                row = await tx.fetchone(CREATE_NUMBERED, params)
            else:
                counter = await tx.fetchone(NEXT_NUMBER, {"user": user_id})
                assert counter is not None
                row = await tx.fetchone(CREATE, {**params, "number": counter["last_number"]})
        assert row is not None
        return self._row(row)

    async def _filter(self, which: Filter) -> tuple[str, dict[str, Any], str]:
        try:
            return await which.sql(self.db, self.when())
        except FieldError as exc:
            raise TaskError(exc.code, exc.message) from None

    async def list(
        self,
        user_id: str,
        offset: int = 0,
        limit: int | None = None,
        done: bool | None = None,
        due: str | None = None,
        list_: str | None = None,
    ) -> Tasks:
        """Return the user's tasks in their lists' order: ``limit`` of them from ``offset``.

        No ``limit`` reads every task from ``offset`` on; an offset past the last task reads none.
        ``done`` True or False reads only the completed or the open ones; ``list_`` (a list's
        name, in words) only the tasks on it; ``due`` (today, tomorrow, friday, this week,
        overdue: words) only the open ones due then, by when they are due.
        """
        offset, limit = check_page(offset, limit)
        where, params, order = await self._filter(Filter(done, self.list_named(list_), due))
        rows = await self.session.fetch(
            f"SELECT * FROM keel_tasks WHERE user_id = :user{where} "
            f"ORDER BY {order} LIMIT :limit OFFSET :offset",
            {
                "user": user_id,
                "limit": MAX_TASK_ID if limit is None else limit,
                "offset": offset,
                **params,
            },
        )
        return [self._row(r) for r in rows]

    async def count(
        self,
        user_id: str,
        done: bool | None = None,
        due: str | None = None,
        list_: str | None = None,
    ) -> int:
        """How many tasks the user has (completed ones only, or open ones only, by ``done``; due
        then, by ``due``; on a list, by ``list_``).
        """  # noqa: D205
        where, params, _ = await self._filter(Filter(done, self.list_named(list_), due))
        row = await self.session.fetchone(
            f"SELECT count(*) AS n FROM keel_tasks WHERE user_id = :user{where}",
            {"user": user_id, **params},
        )
        return int(row["n"]) if row else 0

    @staticmethod
    def list_named(words: str | None) -> str | None:
        """The stored name of the list ``words`` name (None: all lists). Raises ``TaskError``."""
        if words is None or not str(words).strip():
            return None
        try:
            return list_name(words)
        except FieldError as exc:
            raise TaskError(exc.code, exc.message) from None

    async def lists(self, user_id: str) -> Tasks:
        """The user's lists: the todo list first, then the others by name, each with how many
        tasks it holds and how many of them are open.
        """  # noqa: D205
        rows = await self.session.fetch(
            "SELECT list_name, count(*) AS tasks, "
            "SUM(CASE WHEN completed THEN 0 ELSE 1 END) AS open FROM keel_tasks "
            "WHERE user_id = :user GROUP BY list_name "
            "ORDER BY CASE WHEN list_name = :todo THEN 0 ELSE 1 END, list_name",
            {"user": user_id, "todo": TODO_LIST},
        )
        found = [
            {"list": r["list_name"], "tasks": int(r["tasks"]), "open": int(r["open"] or 0)}
            for r in rows
        ]
        if not found or found[0]["list"] != TODO_LIST:
            found.insert(0, {"list": TODO_LIST, "tasks": 0, "open": 0})
        return found

    async def move(
        self, user_id: str, task_id: int, list_: str | None = None, place: str | None = None
    ) -> dict[str, Any]:
        """Put a task on another list (``list_``, words), or at a place in its list (``place``:
        the top, the bottom, the n-th; on another list, the bottom unless said); the task, with
        where it now stands (``place`` in its list ``of`` so many).
        """  # noqa: D205
        task_id = check_id(task_id)
        given = {k: v for k, v in (("list", list_), ("place", place)) if v is not None}
        if not given:
            raise TaskError("invalid_move", "Say where to move it: a list, or a place in its list.")
        values = await self._fields(given)
        async with self._tx() as tx:
            row = await tx.fetchone(
                "SELECT list_name, position FROM keel_tasks WHERE number = :id AND user_id = :user",
                {"id": task_id, "user": user_id},
            )
            if row is None:
                raise TaskError("not_found", f"Task {task_id} not found.")
            target = values["list_name"] if list_ is not None else row["list_name"]
            if target == row["list_name"] and values["position"] is None:  # on it already
                task, position = await self.within(tx).get(user_id, task_id), row["position"]
            else:
                position = await placed(tx, user_id, target, values["position"], moving=task_id)
                sql = "UPDATE keel_tasks SET list_name = :list_name, position = :position, "
                sql += "updated_at = :now"
                task = await self.within(tx)._change(
                    sql, user_id, task_id, list_name=target, position=position, now=self._now()
                )
            return {**task, **await standing(tx, user_id, target, int(position), task_id)}

    async def clear(self, user_id: str, list_: str | None) -> dict[str, Any]:
        """Delete every task on a list (``list_``, words; none: the todo list): the list's name
        and how many tasks went.
        """  # noqa: D205
        name = self.list_named(list_) or TODO_LIST
        deleted = await self.session.execute(
            f"DELETE FROM keel_tasks WHERE {IN_LIST}", {"user": user_id, "list_name": name}
        )
        return {"list": name, "deleted": deleted}

    async def batches(self, user_id: str, list_: str | None = None) -> AsyncIterator[Tasks]:
        """All the user's tasks by number (on one list, by ``list_``), ``FIND_BATCH`` at a time:
        one pass over them.
        """  # noqa: D205
        name = self.list_named(list_)
        on_list = "" if name is None else " AND list_name = :list_name"
        after = 0
        while True:
            rows = await self.session.fetch(
                f"SELECT * FROM keel_tasks WHERE user_id = :user AND number > :after{on_list} "
                "ORDER BY number LIMIT :batch",
                {"user": user_id, "after": after, "batch": FIND_BATCH, "list_name": name},
            )
            if rows:
                yield [self._row(r) for r in rows]
            if len(rows) < FIND_BATCH:
                return
            after = rows[-1]["number"]

    async def find(
        self,
        user_id: str,
        text: str,
        offset: int = 0,
        limit: int | None = None,
        list_: str | None = None,
    ) -> tuple[Tasks, int]:
        """The user's tasks whose title contains ``text`` in any case: a page, and how many.

        ``list_``: only those on one list.
        Titles are compared casefolded in Python (the same on SQLite and PostgreSQL, whatever
        their collations), in one pass over ``batches``, with memory for one batch and the page.
        """
        offset, limit = check_page(offset, limit)
        wanted = " ".join(str(text).split()).casefold()
        page: list[dict[str, Any]] = []
        total = 0
        async for batch in self.batches(user_id, list_):
            for task in batch:
                if wanted in task["title"].casefold():
                    if total >= offset and (limit is None or len(page) < limit):
                        page.append(task)
                    total += 1
        return page, total

    async def rename(self, user_id: str, task_id: int, title: str) -> dict[str, Any]:
        """Give a task a new title and return it."""
        sql = "UPDATE keel_tasks SET title = :title, updated_at = :now"
        return await self._change(sql, user_id, task_id, title=clean_title(title), now=self._now())

    async def schedule(self, user_id: str, task_id: int, due: str | None) -> dict[str, Any]:
        """Give a task a new due date (words read in the store's zone; empty: none); the task."""
        values = await self._fields({"due": due or ""})
        await self._room_to_remind(user_id, values, check_id(task_id))
        sql = "UPDATE keel_tasks SET due_date = :due_date, due_at = :due_at, updated_at = :now"
        return await self._change(sql + REMIND, user_id, task_id, **values, now=self._now())

    async def repeat(self, user_id: str, task_id: int, words: str | None) -> dict[str, Any]:
        """Make a task repeat as ``words`` say (none, or "never": it stops, its date kept); the
        task, due at the rule's first time on or after its date (or now, with none or past).
        """  # noqa: D205
        values = await self._fields({"repeat": words or ""})
        sql = "UPDATE keel_tasks SET repeat_rule = :repeat_rule, repeat_words = :repeat_words"
        if values["repeat_rule"] is None:
            return await self._change(
                f"{sql}, updated_at = :now", user_id, task_id, **values, now=self._now()
            )
        async with self._tx() as tx:
            due = due_moment((await self.within(tx).get(user_id, task_id)).get("due"), self.zone)
            if due is not None and due > self.clock():  # "every monday" for one due friday: monday
                day, moment = next_time(values["repeat_rule"], due, self.zone, inclusive=True)
                values.update(due_date=day.isoformat(), due_at=self._param(moment))
                values.update(self._params(self.reminding(moment)))
            sql += f", due_date = :due_date, due_at = :due_at, updated_at = :now{REMIND}"
            return await self.within(tx)._change(sql, user_id, task_id, **values, now=self._now())

    async def complete(self, user_id: str, task_id: int) -> dict[str, Any]:
        """Mark a task completed and return it; a repeating one stays open, due at its next time
        (after when it was due, or after now when that has passed).
        """  # noqa: D205
        task_id = check_id(task_id)
        params = {"id": task_id, "user": user_id, "true": True, "now": self._now()}
        done = await self.session.fetchone(  # one statement for a task that does not repeat
            "UPDATE keel_tasks SET completed = :true, updated_at = :now, remind_at = NULL "
            "WHERE number = :id "
            f"AND user_id = :user AND (repeat_rule IS NULL OR completed = :true) {RETURNING}",
            params,
        )
        if done is not None:
            return self._row(done)
        row = await self.session.fetchone(
            "SELECT * FROM keel_tasks WHERE number = :id AND user_id = :user", params
        )
        if row is None:
            raise TaskError("not_found", f"Task {task_id} not found.")
        due = due_moment(self._row(row).get("due"), self.zone)
        after = max(due, self.clock()) if due else self.clock()
        day, moment = next_time(row["repeat_rule"], after, self.zone)
        sql = "UPDATE keel_tasks SET due_date = :day, due_at = :at, updated_at = :now, "
        sql += "remind_at = :remind_at"  # in the conversation that set it
        at = None if moment is None else self.db.time(moment)
        return await self._change(
            sql,
            user_id,
            task_id,
            day=day.isoformat(),
            at=at,
            now=params["now"],
            remind_at=self._params(self.reminding(moment))["remind_at"],
        )

    async def set_attributes(
        self, user_id: str, task_id: int, /, **attributes: Any
    ) -> dict[str, Any]:
        """Store attributes a tool keeps on tasks (each a column its migration added); the task.

        A name that is not an attribute's (one of the columns every task has, or not a plain
        lower-case name) raises ``TaskError('invalid_attribute')``; a column the database does not
        have fails as the database says (the tool's migration is missing).
        """
        for name in attributes:
            if name in KEPT_COLUMNS or name in COLUMNS or not ATTRIBUTE_NAME.fullmatch(name):
                raise TaskError("invalid_attribute", f"A task has no attribute {name!r} to set.")
        if not attributes:
            raise TaskError("invalid_attribute", "No attribute to set.")
        values = {f"set_{name}": value for name, value in attributes.items()}
        assigned = ", ".join(f"{name} = :set_{name}" for name in attributes)  # names checked
        sql = f"UPDATE keel_tasks SET {assigned}, updated_at = :now"
        return await self._change(sql, user_id, task_id, **values, now=self._now())

    async def delete(self, user_id: str, task_id: int) -> dict[str, Any]:
        """Delete a task and return what it was."""
        return await self._change("DELETE FROM keel_tasks", user_id, task_id)
