"""The chat models a turn calls.

OpenAI and the offline rule-based model (with what it understands and decides), the DONE marker's
one filter, the fallback from one to the other, and token counting.
"""
