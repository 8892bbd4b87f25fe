"""The todo domain: the task store, the tools that read and change tasks, and how tasks are shown.

``todo.TODO_TOOLS`` is the one list of the agent's todo tools; each is declared once, in
``changes`` (create, rename, complete, delete) or ``reads`` (get, list, find), on the store
(``store``), the only code that reads or writes tasks.
"""
