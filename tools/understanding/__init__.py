"""keel's offline understanding: what a message asks, read without a language model.

``reading.understand`` reads a message as requests for the tools (the learned model in ``nlu``,
settled against the tools' declared phrasings in ``phrasings``); ``words`` holds stems, slips of
spelling and politeness, ``talk`` greetings, help and off-topic chat. The offline rule-based model
(``keel.nodes.models.rule_based``) answers from it; the planner's phrasings plan and the topic
detector's reading of a message as a todo request use it too.
"""
