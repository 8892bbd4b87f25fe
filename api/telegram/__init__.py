"""keel in Telegram: a bot that is one more client of the turn every other client takes.

``keel telegram`` long-polls the Bot API (``polling``); ``keel serve`` takes the same updates at
``WEBHOOK_PATH`` when a webhook secret is set (``webhook``). Either way ``front`` translates an
update into ``keel.graphs.turns.Turns`` calls and the turn's result into messages, ``wire`` talks
to the Bot API (retrying rate limits and network errors), and ``texts`` holds what the bot says of
its own. Needs the optional extra: ``pip install 'keel[telegram]'``.
"""

WEBHOOK_PATH = "/telegram/webhook"
"""Where ``keel serve`` takes Telegram's updates in webhook mode."""
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
"""The header in which Telegram sends the webhook's secret token."""
